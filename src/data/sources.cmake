# Sources of src/data (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
