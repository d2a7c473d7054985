list(APPEND MMPROF_SOURCES
  step/step.cpp
)
