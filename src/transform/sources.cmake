# Sources of src/transform (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
