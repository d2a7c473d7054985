# Sources of src/probe (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
