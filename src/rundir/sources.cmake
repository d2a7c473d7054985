list(APPEND MMPROF_SOURCES
  rundir/run_files.cpp
)
