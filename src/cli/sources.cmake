list(APPEND MMPROF_SOURCES
  cli/baseline.cpp
  cli/common.cpp
  cli/gen.cpp
  cli/inspect.cpp
)
