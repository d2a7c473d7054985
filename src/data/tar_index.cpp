#include "data/tar_index.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <memory>

#include "util/error.hpp"

namespace mmprof {
namespace {

struct ArchiveReaderDeleter {
  void operator()(archive* a) const noexcept { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveReaderDeleter>;

ArchivePtr new_tar_reader() {
  ArchivePtr a(archive_read_new());
  if (!a) throw std::bad_alloc();
  archive_read_support_format_tar(a.get());
  return a;
}

const char* error_text(archive* a) {
  const char* e = archive_error_string(a);
  return e != nullptr ? e : "unknown libarchive error";
}

// Why a non-regular entry is refused, or nullopt for entries that are simply not samples.
std::optional<std::string> link_or_special(archive_entry* entry) {
  if (const char* target = archive_entry_hardlink(entry)) {
    return fmt::format("hard link to '{}', not followed", target);
  }
  switch (archive_entry_filetype(entry)) {
    case AE_IFREG:
    case AE_IFDIR:
      return std::nullopt;
    case AE_IFLNK: {
      const char* target = archive_entry_symlink(entry);
      return fmt::format("symbolic link to '{}', not followed", target != nullptr ? target : "");
    }
    default:
      return std::string("not a regular file (device, fifo or socket)");
  }
}

// Walks the headers of an opened archive of `total` bytes.
TarScan scan(archive* a, uint64_t total) {
  TarScan out;
  archive_entry* entry = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a, &entry)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
    const char* raw = archive_entry_pathname(entry);
    std::string name = raw != nullptr ? raw : "";
    if (name.rfind("./", 0) == 0) name.erase(0, 2);
    if (auto why = link_or_special(entry)) {
      out.rejected.push_back({name, *why});
      continue;
    }
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    if (auto why = unsafe_member_name(name)) {
      out.rejected.push_back({name, *why});
      continue;
    }
    // Right after the header, the bytes consumed by the format reader are the member's data
    // offset (pax and GNU long-name headers included); workers then pread() the member.
    const auto offset = static_cast<uint64_t>(archive_filter_bytes(a, 0));
    const auto size = static_cast<uint64_t>(std::max<la_int64_t>(archive_entry_size(entry), 0));
    if (offset > total || size > total - offset) {
      out.rejected.push_back(
          {name, fmt::format("shard cut mid-member: the data would end at byte {} of a {}-byte "
                             "shard",
                             offset + size, total)});
      return out;  // nothing after a cut can be read
    }
    out.members.push_back({std::move(name), offset, size});
  }
  if (rc != ARCHIVE_EOF) {
    out.rejected.push_back({"", fmt::format("corrupt or cut tar header after {} members: {}",
                                            out.members.size(), error_text(a))});
  }
  return out;
}

}  // namespace

std::optional<std::string> unsafe_member_name(std::string_view name) {
  if (name.empty()) return "empty member name";
  if (name.front() == '/') return "absolute member path, not used";
  for (size_t start = 0; start <= name.size();) {
    const size_t slash = std::min(name.find('/', start), name.size());
    if (name.substr(start, slash - start) == "..") return "member path with '..', not used";
    start = slash + 1;
  }
  return std::nullopt;
}

TarScan scan_tar_file(const std::filesystem::path& shard) {
  std::error_code ec;
  const uint64_t total = std::filesystem::file_size(shard, ec);
  ArchivePtr a = new_tar_reader();
  if (ec || archive_read_open_filename(a.get(), shard.c_str(), 1 << 16) != ARCHIVE_OK) {
    throw InputError(fmt::format("cannot open tar shard {}: {}", shard.string(),
                                 ec ? ec.message() : error_text(a.get())));
  }
  return scan(a.get(), total);
}

TarScan scan_tar_memory(std::span<const uint8_t> bytes) {
  ArchivePtr a = new_tar_reader();
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    return {{}, {{"", fmt::format("not a tar archive: {}", error_text(a.get()))}}};
  }
  return scan(a.get(), bytes.size());
}

}  // namespace mmprof
