list(APPEND MMPROF_SOURCES
  probe/stats.cpp
)
