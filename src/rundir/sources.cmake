# Sources of src/rundir (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
