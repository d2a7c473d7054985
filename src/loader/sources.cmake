list(APPEND MMPROF_SOURCES
  loader/batch_filler.cpp
  loader/batch_slot.cpp
  loader/loader.cpp
  loader/pinned_memory.cpp
  loader/worker_pool.cpp
)
