list(APPEND MMPROF_SOURCES
  step/gemm_step.cpp
  step/step.cpp
  step/torch_plugin.cpp
)
