#pragma once
// The tar-shard reader: one pass over the headers of a WebDataset shard (libarchive) that lists
// each regular member with the offset of its data, so workers can pread() it later. Nothing is
// ever extracted: member names become sample keys only, and members whose names point outside
// the shard (absolute paths, "..") or that are links are refused, never followed.
//
// Damage is a finding about the shard, never an exception: a shard that is empty, compressed or
// not a tar archive at all is one rejection; a corrupt header, or a member whose size field lies
// (the next header would fall inside its data, or its data past the end of the shard), is one
// rejection, after which the reader resynchronises on the next block that is a valid tar header
// (its checksum verified independently of libarchive), so the members after the damage are kept.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
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

// Never throws for the shard's content or for a shard that cannot be opened (one rejection).
TarScan scan_tar_file(const std::filesystem::path& shard);
// The same over bytes in memory (tests and the fuzz target).
TarScan scan_tar_memory(std::span<const uint8_t> bytes);

// Why a member name must not be used (absolute, or a ".." component), or nullopt when it is safe.
std::optional<std::string> unsafe_member_name(std::string_view name);

// Whether a 512-byte block is a tar header: not all zero, and its checksum field (octal, at byte
// 148) equals the sum of its bytes with that field read as spaces (POSIX ustar; the signed sum
// some old tars wrote is accepted too).
bool is_tar_header_block(std::span<const uint8_t, 512> block) noexcept;

// libarchive's version, for the manifest's software block: {"version", "source"}.
nlohmann::json libarchive_version();

}  // namespace mmprof
