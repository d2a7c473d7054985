#pragma once
// Reading figures out of the JSON mmprof writes (summary, manifest, experiment, job) by JSON
// pointer: the one reader for every layer above rundir (report, ab, measure, external). A missing
// key and a null are the same thing here ("not measured"), never a 0.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mmprof/error.hpp"

namespace mmprof::rundir {

// A figure that is present but not a number (a string, true, an object): not a file mmprof wrote.
// An InputError; the report names the file it came from (report_builder).
class FigureTypeError : public InputError {
 public:
  FigureTypeError(std::string pointer, nlohmann::json value);
  const std::string& pointer() const noexcept { return pointer_; }
  const nlohmann::json& value() const noexcept { return value_; }

 private:
  std::string pointer_;
  nlohmann::json value_;
};

// The value at JSON pointer `pointer` ("/a/b", "/ci_pct/0"), or null when absent (never throws
// on a null or scalar parent).
nlohmann::json value_at(const nlohmann::json& j, const std::string& pointer);
// The number at `pointer`, or nullopt when absent or null ("not measured"). Throws
// FigureTypeError when something else is there.
std::optional<double> number_at(const nlohmann::json& j, const std::string& pointer);
// The string at `pointer`, or `fallback`.
std::string string_at(const nlohmann::json& j, const std::string& pointer,
                      const std::string& fallback = "");
// A user's job: the record of the DataLoader mmprof followed (dataloader.loaders[] with followed
// true of the job part of a summary or manifest); null when none.
nlohmann::json followed_loader(const nlohmann::json& job);

}  // namespace mmprof::rundir
