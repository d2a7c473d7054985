# Sources of src/gpu (paths relative to src/). cupti_activity.cpp is the only file that includes
# cupti.h; it compiles without CUDA and then reports "unavailable".
list(APPEND MMPROF_SOURCES
  gpu/cublas_api.cpp
  gpu/cuda_runtime.cpp
  gpu/cupti_activity.cpp
  gpu/gpu_event.cpp
  gpu/gpu_events_file.cpp
  gpu/gpu_timeline.cpp
  gpu/gpu_tracer.cpp
  gpu/h2d_copy.cpp
  gpu/planted_check.cpp
)
if(MMPROF_HAVE_CUDA)
  # The toolkit's libcupti, a last dlopen candidate after the loader's search path.
  set(MMPROF_CUPTI_DEFINITIONS)
  if(TARGET CUDA::cupti)
    set(MMPROF_CUPTI_DEFINITIONS "MMPROF_CUPTI_BUILD_LIB=\"$<TARGET_FILE:CUDA::cupti>\"")
  endif()
  set_property(SOURCE gpu/cupti_activity.cpp APPEND PROPERTY COMPILE_DEFINITIONS
               ${MMPROF_CUPTI_DEFINITIONS})
endif()
