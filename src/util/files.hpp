#pragma once
// Output files that survive an interruption: whole files written atomically (temp + fsync +
// rename), and append-only files flushed after every write, so an interrupted run keeps what it
// measured. The run directory's own names and formats are rundir/'s.
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
