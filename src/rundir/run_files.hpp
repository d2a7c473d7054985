#pragma once
// Writers for the run directory of DESIGN.md. JSON files are written atomically (temp + rename);
// CSV and JSONL files are appended and flushed as the run goes, so an interrupted run keeps what
// it measured.
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace mmprof {

// Writes `content` to path via path.tmp + fsync + rename. Throws InputError naming the path.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& value);

// Creates `dir` (and parents); refuses a non-empty existing directory that is not a run directory.
void prepare_run_dir(const std::filesystem::path& dir);

// An append-only text file, flushed after every write call.
class AppendFile {
 public:
  AppendFile(const std::filesystem::path& path, std::string_view header);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  void write(std::string_view text);
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

// Quotes a CSV field when it holds a comma, quote or newline (RFC 4180).
std::string csv_field(std::string_view s);

}  // namespace mmprof
