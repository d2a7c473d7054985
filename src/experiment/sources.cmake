# Sources of src/experiment (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
