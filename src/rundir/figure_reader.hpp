#pragma once
// Reading the typed figures of a file mmprof wrote (summary.json's parts): a figure that is absent
// or null is empty ("not measured"); one of the wrong type (a string where a rate belongs) means
// the file is not one mmprof wrote, and is refused with an InputError naming the file and key.
#include <array>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rundir/json_values.hpp"

namespace mmprof::rundir {

class FigureReader {
 public:
  explicit FigureReader(std::filesystem::path file) : file_(std::move(file)) {}

  // The figure at `pointer` of `j`; `at` is where `j` itself is in the file (for the error).
  std::optional<double> number(const nlohmann::json& j, const std::string& pointer,
                               const std::string& at = "") const;
  // A whole number (a count, a pid), or `fallback` when absent; one outside T's range (a pid of
  // 1e300, a negative byte count) is refused like a figure of the wrong type.
  template <class T>
  T whole(const nlohmann::json& j, const std::string& pointer, const std::string& at,
          T fallback) const {
    return optional_whole<T>(j, pointer, at).value_or(fallback);
  }
  template <class T>
  std::optional<T> optional_whole(const nlohmann::json& j, const std::string& pointer,
                                  const std::string& at) const {
    const auto v = number(j, pointer, at);
    if (!v) return std::nullopt;
    // Every integer type's range ends below 2^digits (and, signed, starts at -2^digits).
    const double end = std::ldexp(1.0, std::numeric_limits<T>::digits);
    if (!(*v >= (std::is_signed_v<T> ? -end : 0.0) && *v < end)) out_of_range(at + pointer, *v);
    return static_cast<T>(*v);
  }
  // The string at `pointer`, "" when absent or null.
  std::string text(const nlohmann::json& j, const std::string& pointer,
                   const std::string& at = "") const;
  // Each string of the array at `pointer` (none when absent or null).
  std::vector<std::string> texts(const nlohmann::json& j, const std::string& pointer,
                                 const std::string& at = "") const;
  // True only when the value is true.
  static bool flag(const nlohmann::json& j, const std::string& pointer);
  // A yes/no figure: empty when absent or null.
  std::optional<bool> optional_flag(const nlohmann::json& j, const std::string& pointer,
                                    const std::string& at = "") const;

  const std::filesystem::path& file() const noexcept { return file_; }
  // Refuses the value `v` at `pointer`, where `belongs` ("a string") belongs.
  [[noreturn]] void refuse(const std::string& pointer, const nlohmann::json& v,
                           std::string_view belongs) const;

 private:
  [[noreturn]] void out_of_range(const std::string& pointer, double v) const;

  std::filesystem::path file_;
};

// An optional figure of a struct S under its key: one table of them per struct serves both its
// writer and its reader, so each key is spelled once.
template <class S, class T>
struct Field {
  const char* key;
  std::optional<T> S::*member;
};

// Each field of `s` into `j` (null when empty: "not measured").
template <class S, class T, size_t N>
void write_fields(nlohmann::json& j, const S& s, const std::array<Field<S, T>, N>& fields) {
  for (const Field<S, T>& f : fields)
    j[f.key] = nullable(s.*f.member);
}

// Each field of `s` from `j`, found at `at` in `r`'s file.
template <class S, class T, size_t N>
void read_fields(const FigureReader& r, const nlohmann::json& j, const std::string& at, S& s,
                 const std::array<Field<S, T>, N>& fields) {
  for (const Field<S, T>& f : fields) {
    const std::string pointer = std::string("/") + f.key;
    if constexpr (std::is_same_v<T, double>) {
      s.*f.member = r.number(j, pointer, at);
    } else {
      s.*f.member = r.optional_whole<T>(j, pointer, at);
    }
  }
}

}  // namespace mmprof::rundir
