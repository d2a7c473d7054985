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

// A figure of a struct S under its key: optional (Field: empty is "not measured", null in the
// file) or one every S has (Figure: a count, a time; read as 0 when absent). One table of them per
// struct serves both its writer and its reader, so each key is spelled once.
template <class S, class T>
struct Field {
  const char* key;
  std::optional<T> S::*member;
};
template <class S, class T>
struct Figure {
  const char* key;
  T S::*member;
};

// The figure at `pointer` of `j` as a member of type M (an optional or a plain number).
template <class M>
M read_member(const FigureReader& r, const nlohmann::json& j, const std::string& pointer,
              const std::string& at) {
  if constexpr (std::is_same_v<M, std::optional<double>>) {
    return r.number(j, pointer, at);
  } else if constexpr (std::is_same_v<M, double>) {
    return r.number(j, pointer, at).value_or(0);
  } else if constexpr (std::is_integral_v<M>) {
    return r.whole<M>(j, pointer, at, 0);
  } else {
    return r.optional_whole<typename M::value_type>(j, pointer, at);
  }
}

template <class T>
nlohmann::json member_json(const std::optional<T>& v) {
  return nullable(v);
}
template <class T>
nlohmann::json member_json(const T& v) {
  return v;
}

// Each field of `s` into `j` (an empty one null).
template <class S, class F, size_t N>
void write_fields(nlohmann::json& j, const S& s, const std::array<F, N>& fields) {
  for (const F& f : fields)
    j[f.key] = member_json(s.*f.member);
}

// Each field of `s` from `j`, found at `at` in `r`'s file.
template <class S, class F, size_t N>
void read_fields(const FigureReader& r, const nlohmann::json& j, const std::string& at, S& s,
                 const std::array<F, N>& fields) {
  for (const F& f : fields) {
    using Member = std::remove_reference_t<decltype(s.*f.member)>;
    s.*f.member = read_member<Member>(r, j, std::string("/") + f.key, at);
  }
}

// The objects of the array `a` (found at `at`), each read by `read(object, where it is)`; none
// when `a` is null, and refused when it, or one of its elements, is something else.
template <class Read>
auto read_objects(const FigureReader& r, const nlohmann::json& a, const std::string& at,
                  Read read) {
  std::vector<std::invoke_result_t<Read, const nlohmann::json&, const std::string&>> out;
  if (a.is_null()) return out;
  if (!a.is_array()) r.refuse(at, a, "an array");
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string item_at = at + "/" + std::to_string(i);
    if (!a[i].is_object()) r.refuse(item_at, a[i], "an object");
    out.push_back(read(a[i], item_at));
  }
  return out;
}

// The whole numbers of the array at `key` of `j` (found at `at`): none when absent or null; an
// array of something else, or a number out of T's range, is refused.
template <class T>
std::vector<T> read_wholes(const FigureReader& r, const nlohmann::json& j, const std::string& at,
                           const std::string& key) {
  const std::string array_at = at + "/" + key;
  const nlohmann::json a = j.is_object() && j.contains(key) ? j[key] : nlohmann::json();
  if (!a.is_null() && !a.is_array()) r.refuse(array_at, a, "an array");
  std::vector<T> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(r.whole<T>(a, "/" + std::to_string(i), array_at, 0));
  return out;
}

// Each element of `items` written by `write` into a JSON array.
template <class T, class Write>
nlohmann::json json_array(const std::vector<T>& items, Write write) {
  nlohmann::json out = nlohmann::json::array();
  for (const T& x : items)
    out.push_back(write(x));
  return out;
}

}  // namespace mmprof::rundir
