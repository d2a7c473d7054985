#pragma once
// WebDataset-style shards: plain POSIX tar files (libarchive; ustar, pax for long names), members
// <key>.<ext> grouped by key, a new shard once the current one holds shard_bytes. Samples never
// straddle shards.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct archive;  // libarchive's handle, kept out of this header

namespace mmprof::gen {

struct ShardInfo {
  std::string name;  // file name inside the shards folder
  uint64_t bytes = 0;
  int samples = 0;
  std::string first_key, last_key;
};

// A member's bytes in a tar: its 512-byte header block, its data padded to whole blocks, and
// before them a pax extended header when ustar cannot hold its name.
uint64_t tar_member_bytes(std::string_view name, uint64_t size);

struct TarEntry {
  std::string name;
  const std::vector<uint8_t>* data;
};

class ShardWriter {
 public:
  ShardWriter(std::filesystem::path dir, uint64_t shard_bytes);
  ~ShardWriter();  // closes quietly; call finish() to see errors
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // Appends one sample's members, opening a new shard first if the current one is full.
  void add_sample(const std::string& key, const std::vector<TarEntry>& members);
  // Closes the current shard: the next sample opens a new one, whatever the size.
  void end_shard() { close_current(); }
  // Closes the last shard and returns every shard written, in order.
  std::vector<ShardInfo> finish();

 private:
  struct ArchiveDeleter {
    void operator()(::archive* a) const noexcept;
  };
  void open_next();
  void close_current();

  std::filesystem::path dir_;
  uint64_t shard_bytes_;
  uint64_t current_bytes_ = 0;  // member headers + padded data written to the open shard
  std::unique_ptr<::archive, ArchiveDeleter> archive_;
  std::vector<ShardInfo> shards_;
};

// Name of shard `index`: shard-000000.tar, ...
std::string shard_name(int index);

}  // namespace mmprof::gen
