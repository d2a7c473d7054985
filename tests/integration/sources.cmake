# Test sources of tests/integration (paths relative to tests/).
list(APPEND MMPROF_TEST_SOURCES
  integration/configs_test.cpp
  integration/decode_placement_test.cpp
  integration/env_inventory_test.cpp
  integration/generated_decode_test.cpp
  integration/job_process_test.cpp
  integration/loader_fixture.cpp
  integration/loader_resume_test.cpp
  integration/loader_test.cpp
  integration/reliability_test.cpp
  integration/resource_crosscheck_test.cpp
  integration/speed_levers_test.cpp
)
