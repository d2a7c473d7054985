# Sources of src/env (paths relative to src/).
list(APPEND MMPROF_SOURCES
  env/command_capture.cpp
  env/cuda_info.cpp
  env/data_mix.cpp
  env/host_files.cpp
  env/hwloc_topology.cpp
  env/inventory.cpp
  env/library_versions.cpp
  env/network.cpp
  env/proc_parse.cpp
  env/repo_info.cpp
  env/run_provenance.cpp
  env/storage.cpp
  env/storage_probe.cpp
  env/system_info.cpp
)
