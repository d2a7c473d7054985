# Sources of src/config (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
