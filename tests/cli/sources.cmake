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
  cli/loader_jobs_test.cpp
  cli/report_cli_test.cpp
  cli/trace_cli_test.cpp
)
if(MMPROF_HAVE_TORCH)
  # c10d through the torch plugin (the claims' table plants a straggler among ranks)
  list(APPEND MMPROF_TEST_SOURCES cli/dist_cli_test.cpp cli/claims_cli_test.cpp)
endif()
if(MMPROF_HAVE_CUDA)
  list(APPEND MMPROF_TEST_SOURCES cli/inject_test.cpp)  # the injection library (tests/gpu)
endif()
# Timing verdicts (tests/CMakeLists.txt runs these alone): a verdict of six rounds rests on
# every round agreeing, and a test starting or ending beside one is a step change in its load
# that the drift check (a monotone trend) does not see. Their planted effects are large (10x,
# 2x) so that a steady load, stress-ng's, cannot hide them.
set(MMPROF_SERIAL_TESTS AbCliTest.PlantedSlowerStepIsRejected
    AbCliTest.AaNeverAdoptsAndAPlantedContentChangeIsInvalid
    ExternalCli.AbOnTheJobAdoptsMoreWorkers
    # Load generators, alone so that they do not starve their neighbours: three busy loops
    # pinned to one CPU (and, below, four ranks with a worker each).
    CliTest.PlantedCpuContentionIsMeasuredAndReported
    # As root the storage probe empties the whole machine's page cache (drop_caches,
    # docs/provenance.md): a warm run beside it read its whole dataset from the device again
    # (LocalityCli.WarmReadsNothingFromTheDevice under make test-under-load).
    InspectTest.ProbeStorageReportsBothPatternsAndTheCacheState)
# Only where dist_cli_test.cpp is built (the sanitizer presets leave libtorch out): an entry for
# a test the binary lacks would run nothing, which tests/CMakeLists.txt makes a failure.
if(MMPROF_HAVE_TORCH)
  list(APPEND MMPROF_SERIAL_TESTS DistCli.APlantedSlowRankIsNamedAndItsPeerWaitsThePlannedTime
       DistCli.FourRanksReadEverySampleOnceAcrossRanksInEachLayout)
endif()
# The job tests run their PyTorch jobs on torch 2.x (test::job_torch); these also on Debian's
# torch 1.13 (MMPROF_TEST_TORCH=1.13, as torch1_13.<test>): a job, its workers and Ctrl-C, the
# main-process fetcher, torchrun, and what the hook cannot wrap.
set(MMPROF_TORCH1_13_TESTS ExternalCli.PlantedLoaderBoundJobGivesTheWaitStepAndStallItWasBuiltWith
    ExternalCli.MainProcessLoadingIsTimedTooAndNoMeasuredStepPaysADigest
    ExternalCli.CtrlCIsForwardedTheRunKeptAndTheExit130
    ExternalCli.ATorchrunJobWithAStragglerNamesTheSlowRank
    ExternalCli.APartlyWrappedTorchSaysWhatItDidNotMeasure)
