# Test sources of tests/unit (paths relative to tests/).
list(APPEND MMPROF_TEST_SOURCES
  unit/gen_test.cpp
  unit/config_test.cpp
  unit/decode_test.cpp
  unit/digest_test.cpp
  unit/env_test.cpp
  unit/phase_metrics_test.cpp
  unit/procfs_test.cpp
  unit/resource_sampler_test.cpp
  unit/rng_test.cpp
  unit/run_files_test.cpp
  unit/sampler_test.cpp
  unit/stats_test.cpp
  unit/tokenizer_test.cpp
  unit/transform_test.cpp
)
