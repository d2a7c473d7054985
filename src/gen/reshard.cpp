#include "gen/reshard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <system_error>

#include "data/range_reader.hpp"
#include "data/shard_index.hpp"
#include "gen/dataset_summary.hpp"
#include "gen/tar_writer.hpp"
#include "mmprof/error.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/interrupt.hpp"

namespace mmprof::gen {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

uint64_t sample_tar_bytes(const SampleEntry& s) {
  return tar_member_bytes(s.key + "." + s.ext, s.media.size) +
         (s.has_caption ? tar_member_bytes(s.key + ".txt", s.caption.size) : 0);
}

// Reads one byte range of the dataset into `out`.
void read_range(RangeReader& reader, const ByteRange& r, const std::string& key,
                std::vector<uint8_t>& out) {
  try {
    reader.read(r, out);
  } catch (const ReadFailure& f) {
    throw InputError(fmt::format("cannot read sample {}: {}", key, f.message));
  }
}

void write_index(const fs::path& dir) {
  // The shards read back by mmprof's own tar index: the proof they are whole, and where each
  // sample's bytes are (layout "tar with an index": random access without a scan).
  const Dataset written = Dataset::open(dir, Layout::tar);
  std::vector<ShardIndexRow> rows;
  for (const auto& s : written.samples()) {
    ShardIndexRow r{s.key,        written.files()[s.media.file],
                    s.ext,        s.media.offset,
                    s.media.size, std::nullopt,
                    std::nullopt};
    if (s.has_caption) {
      r.caption_offset = s.caption.offset;
      r.caption_bytes = s.caption.size;
    }
    rows.push_back(std::move(r));
  }
  write_file_atomic(dir / kShardIndexFile, shard_index_csv(rows));
  if (!written.rejected().empty()) {
    throw OutputError(fmt::format("the shards written to {} do not read back whole: {}",
                                  dir.string(), written.rejected().front().reason));
  }
}

}  // namespace

std::vector<size_t> plan_shards(const std::vector<uint64_t>& sample_bytes, uint64_t shard_bytes,
                                ShardBalance balance) {
  uint64_t total = 0;
  for (const uint64_t b : sample_bytes)
    total += b;
  const size_t samples = sample_bytes.size();
  const auto wanted = static_cast<size_t>(std::llround(
      static_cast<double>(total) / static_cast<double>(std::max<uint64_t>(shard_bytes, 1))));
  const size_t n = std::clamp<size_t>(wanted, 1, std::max<size_t>(samples, 1));
  std::vector<size_t> shard(samples);
  uint64_t before = 0;
  for (size_t i = 0; i < samples; ++i) {
    if (balance == ShardBalance::count) {
      shard[i] = i * n / samples;
    } else {
      const double middle = static_cast<double>(before) + static_cast<double>(sample_bytes[i]) / 2;
      shard[i] = std::min(
          n - 1, static_cast<size_t>(static_cast<double>(n) * middle / static_cast<double>(total)));
    }
    before += sample_bytes[i];
  }
  return shard;
}

namespace {

// Writes the shards, their index and shards.json into `tmp`.
json write_shards(const Dataset& source, const ReshardOptions& o, const fs::path& tmp) {
  std::vector<uint64_t> bytes;
  bytes.reserve(source.size());
  for (const auto& s : source.samples())
    bytes.push_back(sample_tar_bytes(s));
  const std::vector<size_t> plan = plan_shards(bytes, o.shard_bytes, o.balance);
  RangeReader reader(source);
  reader.stop_on_interrupt();  // a slow server's sample does not hold Ctrl-C up
  ShardWriter writer(tmp, UINT64_MAX);
  std::vector<uint8_t> media, caption;
  for (size_t i = 0; i < source.size(); ++i) {
    const SampleEntry& s = source.samples()[i];
    if (i > 0 && plan[i] != plan[i - 1]) writer.end_shard();
    std::vector<TarEntry> members = {{s.key + "." + s.ext, &media}};
    if (s.has_caption) members.push_back({s.key + ".txt", &caption});
    try {  // Ctrl-C between samples or during a read (the reader stops on it)
      throw_if_interrupted();
      read_range(reader, s.media, s.key, media);
      if (s.has_caption) read_range(reader, s.caption, s.key, caption);
    } catch (const Error& e) {
      if (e.code() != ExitCode::interrupted) throw;
      throw Error(ExitCode::interrupted,
                  fmt::format("interrupted after {} of {} samples: nothing written to {}", i,
                              source.size(), o.out.string()));
    }
    writer.add_sample(s.key, members);
    if (o.progress) o.progress(i + 1, source.size());
  }
  const std::vector<ShardInfo> shards = writer.finish();
  write_index(tmp);
  json list = json::array();
  uint64_t total = 0, largest = 0, smallest = UINT64_MAX;
  for (const auto& sh : shards) {
    list.push_back(shard_json(sh));
    total += sh.bytes;
    largest = std::max(largest, sh.bytes);
    smallest = std::min(smallest, sh.bytes);
  }
  json manifest = {{"schema", "mmprof.shards/1"},
                   {"source", fs::absolute(source.root()).string()},
                   {"source_layout", source.layout_info().name},
                   {"samples", source.size()},
                   {"bytes", total},
                   {"balance", o.balance == ShardBalance::bytes ? "bytes" : "count"},
                   {"shard_bytes_asked", o.shard_bytes},
                   {"shards", list},
                   {"largest_over_smallest",
                    shards.empty() || smallest == 0
                        ? json(nullptr)
                        : json(static_cast<double>(largest) / static_cast<double>(smallest))},
                   {"index", kShardIndexFile},
                   // Nothing dropped without a word: what the source's index refused or ignored is
                   // not in the shards, and counted here (mmprof inspect --data SRC lists them).
                   {"source_rejected", source.rejected().size()},
                   {"source_ignored", source.ignored().size()}};
  write_json_atomic(tmp / "shards.json", manifest);
  return manifest;
}

}  // namespace

json reshard(const Dataset& source, const ReshardOptions& o) {
  if (fs::exists(o.out) && !o.force) {
    throw UsageError(fmt::format("--out {} exists; --force replaces it", o.out.string()));
  }
  const fs::path tmp = fresh_partial_dir(o.out);
  json manifest;
  try {
    manifest = write_shards(source, o, tmp);
  } catch (...) {
    // Nothing of a cut set of shards is left, under any name (interrupted, a full disk, a sample
    // that cannot be read): --out is as it was.
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  // Into place: the old --out (with --force) goes only once the new one is whole.
  replace_dir(tmp, o.out);
  return manifest;
}

}  // namespace mmprof::gen
