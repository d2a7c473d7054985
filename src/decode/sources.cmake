# Sources of src/decode (paths relative to src/).
list(APPEND MMPROF_SOURCES
)
