# Sources of src/loader (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
