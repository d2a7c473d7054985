#pragma once
// Whether nvJPEG (the CUDA toolkit's JPEG decoder library) is on this machine, and its version:
// loaded with dlopen, so a machine without it only loses this line of the inventory.
#include <optional>
#include <string>

namespace mmprof::gpu {

// "12.3.1" from the first libnvjpeg.so.N that loads, or nullopt with `reason` set.
std::optional<std::string> nvjpeg_version(std::string& reason);

}  // namespace mmprof::gpu
