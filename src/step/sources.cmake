# Sources of src/step (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
