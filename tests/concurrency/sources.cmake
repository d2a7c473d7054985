# The tests that exercise threads and shared memory, built alone under ThreadSanitizer (the tsan
# preset, `make tsan`): worker threads, the resource sampler's thread, the lock-free trace arena,
# the generator's encoder threads. Paths relative to tests/; the same files are in unit/ and
# integration/, which the full suite builds.
list(APPEND MMPROF_TEST_SOURCES
  unit/gen_test.cpp
  unit/phase_metrics_test.cpp
  unit/resource_sampler_test.cpp
  unit/run_dir_test.cpp
  unit/trace_arena_test.cpp
  unit/tracer_test.cpp
  integration/loader_fixture.cpp
  integration/loader_test.cpp
  integration/reliability_test.cpp
  integration/speed_levers_test.cpp
)
# None of them runs the mmprof binary: only these layers (and those below them) are built.
set(MMPROF_TEST_LAYERS ab run gen)
