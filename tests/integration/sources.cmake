# Test sources of tests/integration (paths relative to tests/).
list(APPEND MMPROF_TEST_SOURCES
)
