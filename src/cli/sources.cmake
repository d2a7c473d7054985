list(APPEND MMPROF_SOURCES
  cli/ab.cpp
  cli/baseline.cpp
  cli/common.cpp
  cli/gen.cpp
  cli/inspect.cpp
  cli/inspect_gpu.cpp
  cli/report.cpp
  cli/resume.cpp
  cli/trace.cpp
)
