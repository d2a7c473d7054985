list(APPEND MMPROF_SOURCES
  step/step.cpp
  step/torch_plugin.cpp
)
