# Sources of src/cli (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
