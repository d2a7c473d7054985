list(APPEND MMPROF_SOURCES
  loader/batch_filler.cpp
  loader/batch_slot.cpp
  loader/fault_hooks.cpp
  loader/loader.cpp
  loader/memory_plan.cpp
  loader/pinned_memory.cpp
  loader/worker_pool.cpp
  loader/worker_recovery.cpp
)
