# Sources of src/data/gen (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
