# Test sources of tests/cli (paths relative to tests/).
list(APPEND MMPROF_TEST_SOURCES
  cli/ab_cli_test.cpp
  cli/breakdown_cli_test.cpp
  cli/cli_test.cpp
  cli/contract_cli_test.cpp
  cli/external_cli_test.cpp
  cli/inspect_test.cpp
  cli/locality_cli_test.cpp
  cli/outputs_cli_test.cpp
  cli/reliability_cli_test.cpp
  cli/remote_cli_test.cpp
  cli/resume_test.cpp
  cli/shard_cli_test.cpp
  cli/signals_test.cpp
  cli/stage_cli_test.cpp
  cli/stream_cli_test.cpp
  cli/inspect_gpu_test.cpp
  cli/report_cli_test.cpp
  cli/trace_cli_test.cpp
)
if(MMPROF_HAVE_TORCH)
  list(APPEND MMPROF_TEST_SOURCES cli/dist_cli_test.cpp)  # c10d through the torch plugin
endif()
if(MMPROF_HAVE_CUDA)
  list(APPEND MMPROF_TEST_SOURCES cli/inject_test.cpp)  # the injection library (tests/gpu)
endif()
# Timing verdicts (tests/CMakeLists.txt runs these alone): a planted 3x slower step must be
# REJECTed, which load from tests beside it can turn into drift or a wide A/A band.
set(MMPROF_SERIAL_TESTS AbCliTest.PlantedSlowerStepIsRejected
    DistCli.APlantedSlowRankIsNamedAndItsPeerWaitsThePlannedTime
    ExternalCli.AbOnTheJobAdoptsMoreWorkersAndCatchesAFalsePreservingClaim)
