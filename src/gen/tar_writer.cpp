#include "gen/tar_writer.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <cerrno>
#include <cstdio>
#include <utility>

#include "util/error.hpp"

namespace mmprof::gen {
namespace {

constexpr uint64_t kBlock = 512;

uint64_t whole_blocks(uint64_t bytes) {
  return (bytes + kBlock - 1) / kBlock * kBlock;
}

struct EntryDeleter {
  void operator()(archive_entry* e) const noexcept { archive_entry_free(e); }
};

// A failed write of a shard: the system's reason where libarchive kept one (a full disk is
// exit 6, as for every output), else libarchive's own sentence.
[[noreturn]] void write_failed(::archive* a, const char* what, const std::string& path) {
  if (const int err = archive_errno(a); err > 0) {
    errno = err;
    throw_output_errno(what, path);
  }
  throw OutputError(std::string(what) + " " + path + ": " + archive_error_string(a));
}

// Whether the ustar header holds `name` itself: 100 bytes, or split at a '/' into a prefix of at
// most 155 and a name of at most 100 (POSIX ustar, the rule libarchive's pax writer applies
// before it adds an extended header).
bool fits_ustar(std::string_view name) {
  for (const char c : name) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;  // pax writes non-ASCII names
  }
  if (name.size() <= 100) return true;
  size_t slash = name.find('/', name.size() - 101);
  if (slash == 0) slash = name.find('/', 1);
  return slash != std::string_view::npos && slash + 1 < name.size() && slash <= 155;
}

}  // namespace

uint64_t tar_member_bytes(std::string_view name, uint64_t size) {
  uint64_t bytes = kBlock + whole_blocks(size);
  if (!fits_ustar(name)) {
    // A pax extended header first: its own header block and the record "<length> path=<name>\n",
    // whose length counts its own digits.
    const uint64_t rest = name.size() + 7;
    uint64_t record = rest + 1;
    while (std::to_string(record).size() + rest != record)
      record = std::to_string(record).size() + rest;
    bytes += kBlock + whole_blocks(record);
  }
  return bytes;
}

std::string shard_name(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "shard-%06d.tar", index);
  return name;
}

void ShardWriter::ArchiveDeleter::operator()(::archive* a) const noexcept {
  archive_write_free(a);  // closes first if still open
}

ShardWriter::ShardWriter(std::filesystem::path dir, uint64_t shard_bytes)
    : dir_(std::move(dir)), shard_bytes_(shard_bytes) {}

ShardWriter::~ShardWriter() = default;

void ShardWriter::open_next() {
  ShardInfo info;
  info.name = shard_name(static_cast<int>(shards_.size()));
  const std::string path = (dir_ / info.name).string();
  archive_.reset(archive_write_new());
  if (!archive_) throw RunError("libarchive: out of memory");
  // POSIX ustar headers, with a pax extended header only for a member name ustar cannot hold
  // (longer than 100 bytes, or not ASCII): every tar reader reads both.
  archive_write_set_format_pax_restricted(archive_.get());
  archive_write_add_filter_none(archive_.get());
  // Written in 1 MiB blocks (libarchive's default, 10 KiB, is a write(2) per 10 KiB), with no
  // padding of the last block: shard sizes stay close to their content.
  archive_write_set_bytes_per_block(archive_.get(), 1 << 20);
  archive_write_set_bytes_in_last_block(archive_.get(), 1);
  if (archive_write_open_filename(archive_.get(), path.c_str()) != ARCHIVE_OK)
    write_failed(archive_.get(), "cannot create shard", path);
  shards_.push_back(std::move(info));
  current_bytes_ = 0;
}

void ShardWriter::close_current() {
  if (!archive_) return;
  const std::string path = (dir_ / shards_.back().name).string();
  if (archive_write_close(archive_.get()) != ARCHIVE_OK)
    write_failed(archive_.get(), "cannot write shard", path);
  archive_.reset();
  shards_.back().bytes = std::filesystem::file_size(dir_ / shards_.back().name);
}

void ShardWriter::add_sample(const std::string& key, const std::vector<TarEntry>& members) {
  if (archive_ && current_bytes_ >= shard_bytes_) close_current();
  if (!archive_) open_next();
  std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
  for (const auto& m : members) {
    archive_entry_clear(entry.get());
    archive_entry_set_pathname(entry.get(), m.name.c_str());
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(m.data->size()));
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), 0644);
    archive_entry_set_mtime(entry.get(), 0, 0);  // fixed, so shards are byte-identical per seed
    // A warning (a name not in the locale's charset, written as its bytes) is not a failure.
    if (archive_write_header(archive_.get(), entry.get()) < ARCHIVE_WARN ||
        archive_write_data(archive_.get(), m.data->data(), m.data->size()) !=
            static_cast<la_ssize_t>(m.data->size())) {
      write_failed(archive_.get(), "cannot write shard", (dir_ / shards_.back().name).string());
    }
    current_bytes_ += tar_member_bytes(m.name, m.data->size());
  }
  ShardInfo& info = shards_.back();
  if (info.samples++ == 0) info.first_key = key;
  info.last_key = key;
}

std::vector<ShardInfo> ShardWriter::finish() {
  close_current();
  return shards_;
}

}  // namespace mmprof::gen
