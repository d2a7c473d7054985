# Test sources of tests/unit (paths relative to tests/).
list(APPEND MMPROF_TEST_SOURCES
  unit/ab_test.cpp
  unit/gen_test.cpp
  unit/gemm_step_test.cpp
  unit/gpu_phase_test.cpp
  unit/h2d_copy_test.cpp
  unit/hook_env_test.cpp
  unit/hook_records_test.cpp
  unit/job_timeline_test.cpp
  unit/media_format_test.cpp
  unit/bad_input_test.cpp
  unit/config_keys_test.cpp
  unit/config_test.cpp
  unit/cupti_clock_test.cpp
  unit/dataset_test.cpp
  unit/decode_test.cpp
  unit/did_you_mean_test.cpp
  unit/digest_test.cpp
  unit/env_test.cpp
  unit/gpu_events_file_test.cpp
  unit/gpu_timeline_test.cpp
  unit/gpu_tracer_test.cpp
  unit/inference_test.cpp
  unit/jpeg_decoder_test.cpp
  unit/phase_metrics_test.cpp
  unit/phase_runner_test.cpp
  unit/open_files_test.cpp
  unit/planted_check_test.cpp
  unit/procfs_test.cpp
  unit/report_analysis_test.cpp
  unit/report_inputs_test.cpp
  unit/report_criteria_test.cpp
  unit/report_knowledge_base_test.cpp
  unit/report_loader_facts_test.cpp
  unit/report_writers_test.cpp
  unit/resource_sampler_test.cpp
  unit/resume_test.cpp
  unit/rng_test.cpp
  unit/run_dir_test.cpp
  unit/run_files_test.cpp
  unit/sampler_test.cpp
  unit/stage_breakdown_test.cpp
  unit/descriptive_test.cpp
  unit/tokenizer_test.cpp
  unit/webp_frame_test.cpp
  unit/trace_arena_test.cpp
  unit/trace_writer_test.cpp
  unit/tracer_test.cpp
  unit/sws_resize_test.cpp
  unit/transform_test.cpp
  unit/worker_balance_test.cpp
)
# The CUPTI converter tests need cupti.h's record structs: only with the CUDA toolkit (tests/gpu
# adds cupti.h's folder and the fake libcupti to the test targets).
if(MMPROF_HAVE_CUDA)
  list(APPEND MMPROF_TEST_SOURCES unit/cupti_convert_test.cpp)
endif()
