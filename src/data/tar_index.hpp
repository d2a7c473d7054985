#pragma once
// The tar-shard reader: one pass over the headers of a WebDataset shard (libarchive) that lists
// each regular member with the offset of its data, so workers can pread() it later. Nothing is
// ever extracted: member names become sample keys only, and members whose names point outside
// the shard (absolute paths, "..") or that are links are refused, never followed. A shard cut
// mid-member or with a corrupt header keeps the members before the damage.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof {

struct TarMember {
  std::string name;  // as stored, minus a leading "./"
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct TarRejection {
  std::string name;  // the member's name, or "" for damage not tied to one member
  std::string reason;
};

struct TarScan {
  std::vector<TarMember> members;
  std::vector<TarRejection> rejected;
};

// Throws InputError naming the shard when it cannot be opened at all.
TarScan scan_tar_file(const std::filesystem::path& shard);
// The same over bytes in memory (tests and the fuzz target).
TarScan scan_tar_memory(std::span<const uint8_t> bytes);

// Why a member name must not be used (absolute, or a ".." component), or nullopt when it is safe.
std::optional<std::string> unsafe_member_name(std::string_view name);

}  // namespace mmprof
