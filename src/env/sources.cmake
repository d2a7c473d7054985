# Sources of src/env (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
