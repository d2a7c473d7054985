#pragma once
// A CSV table of the run directory defined once: each column names a field of the row struct and
// how it is written, so the writer and the typed reader cannot disagree about a column.
// `required` columns are DESIGN.md's contract (a file without one is refused); the others are
// mmprof's additions, left empty (or at their default) when an older file lacks them.
#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "util/files.hpp"

namespace mmprof::rundir {

template <class Row>
struct Column {
  std::string_view name;
  bool required;
  void (*write)(const Row&, std::string& out);
  // Throws std::invalid_argument when the cell does not hold the field's type.
  void (*read)(std::string_view cell, Row& row);
};

template <class Row>
using Schema = std::vector<Column<Row>>;

namespace detail {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class M>
struct member_of;
template <class R, class T>
struct member_of<T R::*> {
  using row = R;
  using type = T;
};

// Numbers as std::from_chars reads them (no locale, the whole cell).
template <class T>
T parse_number(std::string_view cell) {
  T v{};
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (cell.empty() || ec != std::errc() || end != cell.data() + cell.size())
    throw std::invalid_argument("not a number");
  return v;
}

// Precision < 0: integers and text as they are; else doubles with that many decimals.
template <class T, int Precision>
void write_value(const T& v, std::string& out) {
  if constexpr (is_optional<T>::value) {
    if (v) write_value<typename T::value_type, Precision>(*v, out);
  } else if constexpr (std::is_same_v<T, std::string>) {
    out += csv_field(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    static_assert(Precision >= 0, "a double column states its decimals");
    fmt::format_to(std::back_inserter(out), "{:.{}f}", v, Precision);
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

template <class T>
void read_value(std::string_view cell, T& v) {
  if constexpr (is_optional<T>::value) {
    if (cell.empty()) {
      v.reset();
    } else {
      v.emplace();
      read_value(cell, *v);
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    v.assign(cell.data(), cell.size());  // into the row's own buffer, refilled row after row
  } else {
    v = parse_number<T>(cell);
  }
}

}  // namespace detail

// The column `name` of field `Member` (a pointer to member); doubles need their decimals.
template <auto Member, int Precision = -1>
Column<typename detail::member_of<decltype(Member)>::row> column(std::string_view name,
                                                                 bool required = false) {
  using Row = typename detail::member_of<decltype(Member)>::row;
  return {name, required,
          [](const Row& r, std::string& out) {
            detail::write_value<typename detail::member_of<decltype(Member)>::type, Precision>(
                r.*Member, out);
          },
          [](std::string_view cell, Row& r) { detail::read_value(cell, r.*Member); }};
}

template <class Row>
std::string csv_header(const Schema<Row>& schema) {
  std::string out;
  for (const auto& c : schema) {
    if (!out.empty()) out += ',';
    out += c.name;
  }
  return out + '\n';
}

template <class Row>
void append_csv_row(const Schema<Row>& schema, const Row& row, std::string& out) {
  for (size_t i = 0; i < schema.size(); ++i) {
    if (i > 0) out += ',';
    schema[i].write(row, out);
  }
  out += '\n';
}

}  // namespace mmprof::rundir
