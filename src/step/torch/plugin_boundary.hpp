#pragma once
// What both entry points of the torch plugin (the step and the process group) need at the C
// boundary of torch_plugin_abi.hpp: a status with its message thrown inside the plugin, and the
// guard that turns every exception into a status, since nothing may unwind through a C call.
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "step/torch_plugin_abi.hpp"

namespace mmprof_torch {

struct PluginError {
  MmprofTorchStatus status;
  std::string message;
};

inline void write_error(const std::string& message, char* error, size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const size_t n = std::min(message.size(), error_size - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

// Runs `body`; a PluginError keeps its status, anything else is a failure named by `what`.
template <typename Body>
MmprofTorchStatus guarded(const char* what, char* error, size_t error_size, Body&& body) {
  try {
    body();
    return MMPROF_TORCH_OK;
  } catch (const PluginError& e) {
    write_error(e.message, error, error_size);
    return e.status;
  } catch (const c10::Error& e) {
    // what_without_backtrace(): the C++ backtrace libtorch appends is noise in a one-line error.
    write_error(std::string(what) + ": " + e.what_without_backtrace(), error, error_size);
  } catch (const std::exception& e) {
    write_error(std::string(what) + ": " + e.what(), error, error_size);
  } catch (...) {
    write_error(std::string(what) + ": unknown exception", error, error_size);
  }
  return MMPROF_TORCH_FAILURE;
}

// The plugin's answer to a caller of another ABI version.
inline MmprofTorchStatus abi_mismatch(const char* what, char* error, size_t error_size) {
  write_error(std::string(what) + " plugin speaks ABI version " +
                  std::to_string(MMPROF_TORCH_ABI_VERSION) + ", the caller another one",
              error, error_size);
  return MMPROF_TORCH_UNAVAILABLE;
}

}  // namespace mmprof_torch
