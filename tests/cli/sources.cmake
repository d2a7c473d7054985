# Test sources of tests/cli (paths relative to tests/).
list(APPEND MMPROF_TEST_SOURCES
  cli/cli_test.cpp
  cli/inspect_test.cpp
)
