#include "gpu/nvjpeg_info.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

namespace mmprof::gpu {

std::optional<std::string> nvjpeg_version(std::string& reason) {
  // nvjpegGetProperty(libraryPropertyType, int*): MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2.
  using GetProperty = int (*)(int, int*);
  std::string errors;
  for (const char* file :
       {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so.11", "libnvjpeg.so"}) {
    void* lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      errors += fmt::format("{}{}", errors.empty() ? "" : "; ", dlerror());
      continue;
    }
    const auto get = reinterpret_cast<GetProperty>(dlsym(lib, "nvjpegGetProperty"));
    int v[3] = {0, 0, 0};
    const bool ok =
        get != nullptr && get(0, &v[0]) == 0 && get(1, &v[1]) == 0 && get(2, &v[2]) == 0;
    dlclose(lib);
    if (ok) return fmt::format("{}.{}.{}", v[0], v[1], v[2]);
    errors += fmt::format("{}{}: nvjpegGetProperty failed", errors.empty() ? "" : "; ", file);
  }
  reason = "nvJPEG not found: " + errors;
  return std::nullopt;
}

}  // namespace mmprof::gpu
