#include "gpu/gpu_event.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace mmprof::gpu {
namespace {

constexpr std::array<std::pair<GpuEventKind, const char*>, 4> kEventKinds{{
    {GpuEventKind::kernel, "kernel"},
    {GpuEventKind::memcpy, "memcpy"},
    {GpuEventKind::memset, "memset"},
    {GpuEventKind::synchronization, "synchronization"},
}};

constexpr std::array<std::pair<CopyKind, const char*>, 5> kCopyKinds{{
    {CopyKind::none, "none"},
    {CopyKind::h2d, "h2d"},
    {CopyKind::d2h, "d2h"},
    {CopyKind::d2d, "d2d"},
    {CopyKind::other, "other"},
}};

template <typename Enum, size_t N>
const char* name_of(const std::array<std::pair<Enum, const char*>, N>& table, Enum value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}

template <typename Enum, size_t N>
bool value_of(const std::array<std::pair<Enum, const char*>, N>& table, std::string_view name,
              Enum& out) {
  for (const auto& [e, n] : table) {
    if (name == n) {
      out = e;
      return true;
    }
  }
  return false;
}

}  // namespace

const char* to_string(GpuEventKind kind) noexcept {
  return name_of(kEventKinds, kind);
}
const char* to_string(CopyKind kind) noexcept {
  return name_of(kCopyKinds, kind);
}
bool parse_kind(const std::string& name, GpuEventKind& out) noexcept {
  return value_of(kEventKinds, name, out);
}
bool parse_copy_kind(const std::string& name, CopyKind& out) noexcept {
  return value_of(kCopyKinds, name, out);
}

}  // namespace mmprof::gpu
