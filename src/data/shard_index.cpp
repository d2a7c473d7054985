#include "data/shard_index.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <exception>

#include "mmprof/error.hpp"
#include "util/files.hpp"

namespace mmprof {
namespace {

constexpr const char* kColumns[] = {
    "key", "shard", "media_offset", "media_bytes", "caption_offset", "caption_bytes", "media_ext"};

// RFC 4180 rows: fields split at commas, a quoted field may hold commas, doubled quotes and line
// breaks.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    std::string& field = rows.back().back();
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n') {
      rows.emplace_back(1);
    } else if (c != '\r') {
      field += c;
    }
  }
  if (rows.back().size() == 1 && rows.back().front().empty()) rows.pop_back();
  return rows;
}

}  // namespace

std::string shard_index_csv(const std::vector<ShardIndexRow>& rows) {
  std::string out;
  for (const char* c : kColumns)
    out += fmt::format("{}{}", out.empty() ? "" : ",", c);
  out += '\n';
  for (const ShardIndexRow& r : rows) {
    out += fmt::format("{},{},{},{},", csv_field(r.key), csv_field(r.shard), r.media_offset,
                       r.media_bytes);
    out += r.caption_offset && r.caption_bytes
               ? fmt::format("{},{}", *r.caption_offset, *r.caption_bytes)
               : std::string(",");
    out += fmt::format(",{}\n", csv_field(r.media_ext));
  }
  return out;
}

std::vector<ShardIndexRow> parse_shard_index(const std::string& text, const std::string& where) {
  const auto rows = csv_rows(text);
  std::map<std::string, size_t> col;
  for (size_t i = 0; !rows.empty() && i < rows[0].size(); ++i)
    col[rows[0][i]] = i;
  for (const char* need : kColumns) {
    if (!col.contains(need)) {
      throw InputError(
          fmt::format("{} has no column {} (an older mmprof shard wrote it: re-run mmprof shard)",
                      where, need));
    }
  }
  std::vector<ShardIndexRow> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    const auto field = [&](const char* name) -> const std::string& {
      const size_t i = col.at(name);
      if (i >= row.size()) {
        throw InputError(fmt::format("{} row {} has {} fields, fewer than its header's {}", where,
                                     r + 1, row.size(), rows[0].size()));
      }
      return row[i];
    };
    const auto number = [&](const char* name) {
      const std::string& v = field(name);
      // stoull alone would take " 5", "+5" and "-1" (as 2^64 - 1).
      if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) {
        try {
          return static_cast<uint64_t>(std::stoull(v));
        } catch (const std::exception&) {  // beyond 2^64
        }
      }
      throw InputError(
          fmt::format("{} row {}: {} '{}' is not a byte count", where, r + 1, name, v));
    };
    ShardIndexRow x{
        field("key"),          field("shard"), field("media_ext"), number("media_offset"),
        number("media_bytes"), std::nullopt,   std::nullopt};
    if (!field("caption_offset").empty()) {
      x.caption_offset = number("caption_offset");
      x.caption_bytes = number("caption_bytes");
    }
    out.push_back(std::move(x));
  }
  return out;
}

std::map<std::string, TarScan> shard_members(const std::vector<ShardIndexRow>& rows) {
  std::map<std::string, TarScan> out;
  const auto add = [](TarScan& scan, std::string name, uint64_t offset, uint64_t bytes) {
    if (auto why = unsafe_member_name(name)) {
      scan.rejected.push_back({std::move(name), "index.csv: " + *why});
    } else if (offset > UINT64_MAX - bytes) {
      scan.rejected.push_back(
          {std::move(name),
           fmt::format("index.csv: its {} bytes at offset {} end past 2^64, not read", bytes,
                       offset)});
    } else {
      scan.members.push_back({std::move(name), offset, bytes});
    }
  };
  for (const ShardIndexRow& r : rows) {
    TarScan& scan = out[r.shard];
    add(scan, r.key + "." + r.media_ext, r.media_offset, r.media_bytes);
    if (r.caption_offset) add(scan, r.key + ".txt", *r.caption_offset, *r.caption_bytes);
  }
  return out;
}

}  // namespace mmprof
