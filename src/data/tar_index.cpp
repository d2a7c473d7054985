#include "data/tar_index.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace mmprof {
namespace {

constexpr uint64_t kBlock = 512;

uint64_t padded(uint64_t size) {
  return (size + kBlock - 1) / kBlock * kBlock;
}

// The bytes of a shard: a file read with pread, or a span in memory.
class ShardBytes {
 public:
  virtual ~ShardBytes() = default;
  virtual uint64_t size() const noexcept = 0;
  // Up to n bytes at offset into buf: the count (0 at the end), or -1 with errno set.
  virtual ssize_t read_at(uint64_t offset, uint8_t* buf, size_t n) noexcept = 0;
};

class MemoryShard final : public ShardBytes {
 public:
  explicit MemoryShard(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t size() const noexcept override { return bytes_.size(); }
  ssize_t read_at(uint64_t offset, uint8_t* buf, size_t n) noexcept override {
    if (offset >= bytes_.size()) return 0;
    n = std::min<size_t>(n, bytes_.size() - offset);
    std::memcpy(buf, bytes_.data() + offset, n);
    return static_cast<ssize_t>(n);
  }

 private:
  std::span<const uint8_t> bytes_;
};

class FileShard final : public ShardBytes {
 public:
  FileShard(int fd, uint64_t size) : fd_(fd), size_(size) {}
  ~FileShard() override { ::close(fd_); }
  FileShard(const FileShard&) = delete;
  FileShard& operator=(const FileShard&) = delete;
  uint64_t size() const noexcept override { return size_; }
  ssize_t read_at(uint64_t offset, uint8_t* buf, size_t n) noexcept override {
    for (;;) {
      const ssize_t got = ::pread(fd_, buf, n, static_cast<off_t>(offset));
      if (got >= 0 || errno != EINTR) return got;
    }
  }

 private:
  int fd_;
  uint64_t size_;
};

// libarchive reading a ShardBytes from `pos` on; skips (member data) move the position without
// reading, so indexing a shard reads its headers only.
struct Cursor {
  ShardBytes* bytes;
  uint64_t pos;
  std::vector<uint8_t> buffer = std::vector<uint8_t>(1 << 16);
};

la_ssize_t read_callback(archive* a, void* client, const void** out) {
  auto* c = static_cast<Cursor*>(client);
  const ssize_t n = c->bytes->read_at(c->pos, c->buffer.data(), c->buffer.size());
  if (n < 0) {
    archive_set_error(a, errno, "read failed at byte %llu: %s",
                      static_cast<unsigned long long>(c->pos), std::strerror(errno));
    return -1;
  }
  c->pos += static_cast<uint64_t>(n);
  *out = c->buffer.data();
  return n;
}

la_int64_t skip_callback(archive*, void* client, la_int64_t request) {
  auto* c = static_cast<Cursor*>(client);
  const uint64_t left = c->bytes->size() > c->pos ? c->bytes->size() - c->pos : 0;
  const auto n = std::min<uint64_t>(static_cast<uint64_t>(std::max<la_int64_t>(request, 0)), left);
  c->pos += n;
  return static_cast<la_int64_t>(n);
}

struct ArchiveReaderDeleter {
  void operator()(archive* a) const noexcept { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveReaderDeleter>;

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

// Where one pass of libarchive stopped short of the end-of-archive marker.
struct Damage {
  uint64_t at = 0;   // where the next header was expected
  std::string why;   // libarchive's message, or the cut
  bool cut = false;  // `member`'s data would end past the end of the shard
  // The regular member read just before the damage (or the cut one): its size field decided
  // where the next header was looked for, so it is the suspect when that header is missing.
  std::optional<TarMember> member;

  static Damage at_byte(uint64_t at, std::string why) {
    Damage d;
    d.at = at;
    d.why = std::move(why);
    return d;
  }
};

// Reads headers from byte `start` to the end-of-archive marker (nullopt, `end` set to the byte
// after it) or to damage.
std::optional<Damage> scan_from(ShardBytes& bytes, uint64_t start, TarScan& out, uint64_t& end) {
  Cursor cursor{&bytes, start};
  ArchivePtr a(archive_read_new());
  if (!a) throw std::bad_alloc();
  archive_read_support_format_tar(a.get());
  archive_read_set_read_callback(a.get(), read_callback);
  archive_read_set_skip_callback(a.get(), skip_callback);
  archive_read_set_callback_data(a.get(), &cursor);
  if (archive_read_open1(a.get()) != ARCHIVE_OK) return Damage::at_byte(start, error_text(a.get()));
  const uint64_t total = bytes.size();
  Damage next = Damage::at_byte(start, "");
  archive_entry* entry = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
    const char* raw = archive_entry_pathname(entry);
    std::string name = raw != nullptr ? raw : "";
    if (name.rfind("./", 0) == 0) name.erase(0, 2);
    // Right after the header, the bytes consumed by the format reader are the member's data
    // offset (pax and GNU long-name headers included); workers then pread() the member.
    const uint64_t offset = start + static_cast<uint64_t>(archive_filter_bytes(a.get(), 0));
    const auto size = static_cast<uint64_t>(std::max<la_int64_t>(archive_entry_size(entry), 0));
    next = Damage::at_byte(offset + padded(size), "");
    if (auto why = link_or_special(entry)) {
      out.rejected.push_back({name, *why});
      continue;
    }
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    if (offset > total || size > total - offset) {
      Damage cut = Damage::at_byte(
          offset, fmt::format("shard cut mid-member: the data would end at byte {} of a {}-byte "
                              "shard",
                              offset + size, total));
      cut.cut = true;
      cut.member = TarMember{std::move(name), offset, size};
      return cut;
    }
    if (auto why = unsafe_member_name(name)) {
      out.rejected.push_back({name, *why});
      continue;
    }
    out.members.push_back({name, offset, size});
    next.member = out.members.back();
  }
  if (rc == ARCHIVE_EOF) {
    end = start + static_cast<uint64_t>(archive_filter_bytes(a.get(), 0));
    return std::nullopt;
  }
  next.why = error_text(a.get());
  return next;
}

// The first block at or after `from` (rounded up to a block) and before `before` that is a tar
// header, or nullopt.
std::optional<uint64_t> next_header(ShardBytes& bytes, uint64_t from, uint64_t before) {
  std::vector<uint8_t> buffer(64 * kBlock);
  before = std::min(before, bytes.size());
  for (uint64_t pos = padded(from); pos + kBlock <= before;) {
    const ssize_t n =
        bytes.read_at(pos, buffer.data(), std::min<uint64_t>(buffer.size(), before - pos));
    if (n < static_cast<ssize_t>(kBlock)) return std::nullopt;
    for (ssize_t b = 0; b + static_cast<ssize_t>(kBlock) <= n; b += kBlock, pos += kBlock) {
      if (is_tar_header_block(std::span<const uint8_t, 512>(buffer.data() + b, kBlock))) return pos;
    }
  }
  return std::nullopt;
}

// What the first bytes of a shard say when it is not a tar archive at all.
std::optional<std::string> not_a_tar(ShardBytes& bytes) {
  if (bytes.size() == 0) return "empty shard (0 bytes), not a tar archive";
  struct Magic {
    std::string_view bytes, name, tool;
  };
  static constexpr Magic kCompressed[] = {{"\x1F\x8B", "gzip", "gunzip"},
                                          {"BZh", "bzip2", "bunzip2"},
                                          {"\xFD"
                                           "7zXZ",
                                           "xz", "unxz"},
                                          {"\x28\xB5\x2F\xFD", "zstd", "unzstd"}};
  uint8_t head[8] = {};
  const ssize_t n = bytes.read_at(0, head, sizeof head);
  for (const Magic& m : kCompressed) {
    if (n >= static_cast<ssize_t>(m.bytes.size()) &&
        std::memcmp(head, m.bytes.data(), m.bytes.size()) == 0) {
      return fmt::format(
          "{}-compressed, not a plain tar archive: members are read in place at their offsets, "
          "so shards must be uncompressed ({} it)",
          m.name, m.tool);
    }
  }
  return std::nullopt;
}

TarScan scan(ShardBytes& bytes) {
  TarScan out;
  if (auto why = not_a_tar(bytes)) {
    out.rejected.push_back({"", std::move(*why)});
    return out;
  }
  const uint64_t total = bytes.size();
  for (uint64_t start = 0;;) {
    uint64_t end = total;
    const std::optional<Damage> damage = scan_from(bytes, start, out, end);
    if (!damage) {
      // A zeroed header reads as the end-of-archive marker: a header after it means members
      // would be lost without a word.
      const auto after = next_header(bytes, std::max(end, start + kBlock), total);
      if (!after) return out;
      out.rejected.push_back(
          {"", fmt::format("a zeroed block before byte {} read as the end of the archive, but a "
                           "tar header follows at byte {}: reading resumes there",
                           end, *after)});
      start = *after;
      continue;
    }
    // A header inside the suspect member's data means its size field lies (too large, or past
    // the end of the shard): its extent is unknown, and reading resumes at that header.
    if (damage->member) {
      const TarMember& m = *damage->member;
      if (const auto inside = next_header(bytes, m.offset, damage->cut ? total : damage->at)) {
        if (!damage->cut) out.members.pop_back();
        out.rejected.push_back(
            {m.name, fmt::format("its size field says {} bytes, but a tar header starts {} "
                                 "bytes into its data (byte {}): its extent is unknown, not used; "
                                 "reading resumes at that header",
                                 m.size, *inside - m.offset, *inside)});
        start = *inside;
        continue;
      }
      if (damage->cut) {
        out.rejected.push_back({m.name, damage->why});
        return out;
      }
    }
    const uint64_t from = damage->at > start ? damage->at : start + kBlock;
    const auto resume = next_header(bytes, from, total);
    if (!resume) {
      out.rejected.push_back(
          {"", start == 0 && out.members.empty() && out.rejected.empty()
                   ? fmt::format("not a tar archive: {}", damage->why)
                   : fmt::format("corrupt or cut tar header after {} members: {}",
                                 out.members.size(), damage->why)});
      return out;
    }
    out.rejected.push_back(
        {"", fmt::format("corrupt tar header at byte {} ({}): {} bytes skipped to the next tar "
                         "header, at byte {}",
                         damage->at, damage->why, *resume - damage->at, *resume)});
    start = *resume;
  }
}

}  // namespace

bool is_tar_header_block(std::span<const uint8_t, 512> block) noexcept {
  constexpr size_t kChecksum = 148, kChecksumSize = 8;
  if (std::all_of(block.begin(), block.end(), [](uint8_t b) { return b == 0; })) return false;
  uint64_t stored = 0;
  size_t i = kChecksum;
  while (i < kChecksum + kChecksumSize && block[i] == ' ')
    ++i;
  const size_t first_digit = i;
  for (; i < kChecksum + kChecksumSize && block[i] >= '0' && block[i] <= '7'; ++i)
    stored = stored * 8 + (block[i] - '0');
  if (i == first_digit) return false;
  for (; i < kChecksum + kChecksumSize; ++i) {
    if (block[i] != ' ' && block[i] != '\0') return false;
  }
  int64_t unsigned_sum = 0, signed_sum = 0;
  for (size_t b = 0; b < block.size(); ++b) {
    const bool in_field = b >= kChecksum && b < kChecksum + kChecksumSize;
    const uint8_t v = in_field ? ' ' : block[b];
    unsigned_sum += v;
    signed_sum += static_cast<int8_t>(v);
  }
  return static_cast<int64_t>(stored) == unsigned_sum || static_cast<int64_t>(stored) == signed_sum;
}

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
  const int fd = ::open(shard.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return {{}, {{"", fmt::format("cannot open the shard: {}", std::strerror(err))}}};
  }
  FileShard bytes(fd, static_cast<uint64_t>(st.st_size));
  return scan(bytes);
}

TarScan scan_tar_memory(std::span<const uint8_t> bytes) {
  MemoryShard shard(bytes);
  return scan(shard);
}

nlohmann::json libarchive_version() {
  return {{"version", archive_version_string()}, {"source", "runtime: archive_version_string()"}};
}

}  // namespace mmprof
