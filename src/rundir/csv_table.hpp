#pragma once
// A CSV file of the run directory read back as a table (RFC 4180 quoting, header row first).
// Cells stay text; numeric access says which cells were empty (an empty cell is "not given",
// never 0: docs/metrics.md).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof::rundir {

class CsvTable {
 public:
  CsvTable() = default;
  // Parses `text`; `name` (the file) names the table in error messages.
  CsvTable(std::string_view text, std::string name);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  size_t size() const { return rows_.size(); }
  const std::vector<std::string>& row(size_t i) const { return rows_[i]; }
  std::optional<size_t> column(std::string_view name) const;
  // The column's index; throws InputError naming the file when it is missing.
  size_t require(std::string_view name) const;
  // The cell as a number; nullopt when empty. Throws InputError naming file, row and column
  // when the cell is not a number.
  std::optional<double> number(size_t row, size_t column) const;

 private:
  std::string name_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Reads a CSV file; a missing file is an InputError naming it.
CsvTable read_csv(const std::filesystem::path& path);

}  // namespace mmprof::rundir
