#include "rundir/csv_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "mmprof/error.hpp"
#include "rundir/json_file.hpp"
#include "util/files.hpp"

namespace mmprof::rundir {
namespace {

struct Records {
  std::vector<std::vector<std::string>> rows;
  bool last_unterminated = false;  // the text ends inside a record: a write cut short
};

// Splits RFC 4180 records: quoted fields may hold commas, doubled quotes and newlines.
Records parse_records(std::string_view text) {
  Records out;
  std::vector<std::string> fields(1);
  bool quoted = false;
  bool any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      out.rows.push_back(std::move(fields));
      fields.assign(1, std::string());
      any = false;
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (any) {
    out.rows.push_back(std::move(fields));
    out.last_unterminated = true;
  }
  return out;
}

}  // namespace

CsvTable::CsvTable(std::string_view text, std::string name) : name_(std::move(name)) {
  Records records = parse_records(text);
  if (records.rows.empty()) throw InputError(fmt::format("{} is empty (no header row)", name_));
  header_ = std::move(records.rows.front());
  for (size_t i = 1; i < records.rows.size(); ++i) {
    std::vector<std::string>& row = records.rows[i];
    if (row.size() == header_.size()) {
      rows_.push_back(std::move(row));
      continue;
    }
    // A run interrupted mid-write leaves its last line unfinished: only that one is left out.
    if (i + 1 == records.rows.size() && records.last_unterminated) break;
    throw InputError(fmt::format("{} row {} has {} fields where the header has {}", name_, i + 1,
                                 row.size(), header_.size()));
  }
}

std::optional<size_t> CsvTable::column(std::string_view name) const {
  const auto it = std::find(header_.begin(), header_.end(), name);
  if (it == header_.end()) return std::nullopt;
  return static_cast<size_t>(it - header_.begin());
}

size_t CsvTable::require(std::string_view name) const {
  const auto c = column(name);
  if (!c) throw InputError(fmt::format("{} has no column '{}'", name_, name));
  return *c;
}

std::optional<double> CsvTable::number(size_t row, size_t col) const {
  const std::string& cell = rows_.at(row).at(col);
  if (cell.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (ec != std::errc() || end != cell.data() + cell.size()) {
    throw InputError(fmt::format("{} row {} column '{}': '{}' is not a number", name_, row + 2,
                                 header_[col], cell));
  }
  return v;
}

CsvTable read_csv(const std::filesystem::path& path) {
  return CsvTable(read_input_file(path, "run file", kMaxRunFileBytes), path.string());
}

}  // namespace mmprof::rundir
