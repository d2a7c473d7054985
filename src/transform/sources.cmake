# Sources of src/transform (paths relative to src/).
list(APPEND MMPROF_SOURCES
  transform/crop.cpp
  transform/normalize.cpp
  transform/resize.cpp
)
