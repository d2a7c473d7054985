#pragma once
// A CSV file of the run directory read record by record (RFC 4180 quoting, header row first),
// its cells views into the file's text: no copy of a cell and no table of every row, so a job of
// thousands of ranks is merged in one pass over each file (docs/distributed.md). An empty cell is
// "not given", never 0 (docs/metrics.md).
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof::rundir {

class CsvReader {
 public:
  // Reads the header of `text`, which must outlive the reader; `name` (the file) names it in
  // errors. Throws InputError when there is no header row.
  CsvReader(std::string_view text, std::string name);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  std::optional<size_t> column(std::string_view name) const;
  // The column's index; throws InputError naming the file when it is missing.
  size_t require(std::string_view name) const;

  // Moves to the next record; false after the last. A record with another number of fields than
  // the header is an InputError naming its row, except the last one when the text ends inside it
  // (a run interrupted mid-write): that one is left out.
  bool next();
  // The current record's cell (valid until the next call of next()).
  std::string_view cell(size_t column) const { return cells_[column]; }
  // The current record's row in the file, the header being row 1 (a record, not a line: a
  // quoted cell may hold a newline).
  size_t row() const { return row_; }

 private:
  // Reads one record from pos_ into cells_; false when the text ends inside it.
  bool read_record();

  std::string_view text_;
  std::string name_;
  std::vector<std::string> header_;
  size_t pos_ = 0;
  size_t row_ = 1;
  std::vector<std::string_view> cells_;
  std::deque<std::string> unescaped_;  // quoted cells with their quotes undone
};

}  // namespace mmprof::rundir
