list(APPEND MMPROF_SOURCES
  experiment/baseline.cpp
  experiment/manifest.cpp
  experiment/phase_metrics.cpp
  experiment/progress.cpp
)
