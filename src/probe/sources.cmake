list(APPEND MMPROF_SOURCES
  probe/procfs.cpp
  probe/resource_sampler.cpp
  probe/resource_usage.cpp
  probe/stats.cpp
)
