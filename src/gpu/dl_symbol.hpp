#pragma once
// Resolving a function of a library mmprof loads with dlopen (CUDA's, NVML, CUPTI): one cast from
// dlsym's void* to the pointer type the caller declared.
#include <dlfcn.h>

namespace mmprof::gpu {

// Points `fn` at `name` in `lib` (null when absent); true when found.
template <typename Fn>
bool dl_bind(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

}  // namespace mmprof::gpu
