#include "rundir/csv_table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "mmprof/error.hpp"

namespace mmprof::rundir {

CsvReader::CsvReader(std::string_view text, std::string name)
    : text_(text), name_(std::move(name)) {
  if (text_.empty()) throw InputError(fmt::format("{} is empty (no header row)", name_));
  read_record();
  header_.assign(cells_.begin(), cells_.end());
}

bool CsvReader::read_record() {
  cells_.clear();
  unescaped_.clear();
  const size_t n = text_.size();
  for (;;) {
    if (pos_ < n && text_[pos_] == '"') {
      // A quoted cell: commas and newlines inside it are its own, "" is one quote. What follows
      // the closing quote up to the delimiter belongs to the cell too (as the writer never does).
      std::string& cell = unescaped_.emplace_back();
      bool closed = false;
      for (++pos_; pos_ < n; ++pos_) {
        if (text_[pos_] != '"') {
          cell += text_[pos_];
        } else if (pos_ + 1 < n && text_[pos_ + 1] == '"') {
          cell += '"';
          ++pos_;
        } else {
          closed = true;
          ++pos_;
          break;
        }
      }
      for (; pos_ < n && text_[pos_] != ',' && text_[pos_] != '\n'; ++pos_)
        if (text_[pos_] != '\r') cell += text_[pos_];
      cells_.emplace_back(cell);
      if (!closed) return false;
    } else {
      // A plain scan: string_view::find_first_of calls memchr on the set once per character.
      size_t end = pos_;
      while (end < n && text_[end] != ',' && text_[end] != '\n')
        ++end;
      std::string_view cell = text_.substr(pos_, end - pos_);
      if (cell.find('\r') != std::string_view::npos) {  // a CRLF file: the CR is no part of it
        std::string& copy = unescaped_.emplace_back(cell);
        copy.erase(std::remove(copy.begin(), copy.end(), '\r'), copy.end());
        cell = copy;
      }
      cells_.push_back(cell);
      pos_ = end;
    }
    if (pos_ >= n) return false;  // the text ends inside the record
    if (text_[pos_++] == '\n') return true;
  }
}

bool CsvReader::next() {
  if (pos_ >= text_.size()) return false;
  ++row_;
  const bool whole = read_record();
  if (cells_.size() == header_.size()) return true;
  if (!whole) return false;  // cut short by an interrupted write: only the last record
  throw InputError(fmt::format("{} row {} has {} fields where the header has {}", name_, row_,
                               cells_.size(), header_.size()));
}

std::optional<size_t> CsvReader::column(std::string_view name) const {
  const auto it = std::find(header_.begin(), header_.end(), name);
  if (it == header_.end()) return std::nullopt;
  return static_cast<size_t>(it - header_.begin());
}

size_t CsvReader::require(std::string_view name) const {
  const auto c = column(name);
  if (!c) throw InputError(fmt::format("{} has no column '{}'", name_, name));
  return *c;
}

}  // namespace mmprof::rundir
