# Test sources of tests/unit (paths relative to tests/).
list(APPEND MMPROF_TEST_SOURCES
)
