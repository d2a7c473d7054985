list(APPEND MMPROF_SOURCES
  config/config.cpp
)
