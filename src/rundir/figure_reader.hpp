#pragma once
// Reading the typed figures of a file mmprof wrote (summary.json's parts): a figure that is absent
// or null is empty ("not measured"); one of the wrong type (a string where a rate belongs) means
// the file is not one mmprof wrote, and is refused with an InputError naming the file and key.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace mmprof::rundir {

class FigureReader {
 public:
  explicit FigureReader(std::filesystem::path file) : file_(std::move(file)) {}

  // The figure at `pointer` of `j`; `at` is where `j` itself is in the file (for the error).
  std::optional<double> number(const nlohmann::json& j, const std::string& pointer,
                               const std::string& at = "") const;
  // A whole number (a count, a pid), or `fallback` when absent.
  template <class T>
  T whole(const nlohmann::json& j, const std::string& pointer, const std::string& at,
          T fallback) const {
    const auto v = number(j, pointer, at);
    return v ? static_cast<T>(*v) : fallback;
  }
  template <class T>
  std::optional<T> optional_whole(const nlohmann::json& j, const std::string& pointer,
                                  const std::string& at) const {
    const auto v = number(j, pointer, at);
    return v ? std::optional<T>(static_cast<T>(*v)) : std::nullopt;
  }
  // The string at `pointer`, "" when absent or null.
  std::string text(const nlohmann::json& j, const std::string& pointer,
                   const std::string& at = "") const;
  // True only when the value is true.
  static bool flag(const nlohmann::json& j, const std::string& pointer);

  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  std::filesystem::path file_;
};

}  // namespace mmprof::rundir
