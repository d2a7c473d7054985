#include "gen/output_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>
#include <system_error>

#include "util/error.hpp"
#include "util/files.hpp"

namespace mmprof::gen {
namespace fs = std::filesystem;

void make_writable_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw OutputError("cannot create directory " + dir.string() + ": " + ec.message());
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw_output_errno("cannot write to directory", dir);
}

void write_file(const fs::path& path, const void* data, size_t size) {
  const int fd = open_new_output(path);
  if (fd < 0) throw_output_errno("cannot create", path);
  const bool written = write_all(fd, std::string_view(static_cast<const char*>(data), size));
  const int saved = errno;
  if (::close(fd) != 0 || !written) {
    if (!written) errno = saved;
    throw_output_errno("cannot write", path);
  }
}

void remove_stale(const fs::path& dir, bool (*is_ours)(const std::string& name)) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file() || !is_ours(entry.path().filename().string())) continue;
    if (!fs::remove(entry.path(), ec) && ec)
      throw OutputError("cannot remove stale " + entry.path().string() + ": " + ec.message());
  }
  if (ec) throw InputError("cannot list " + dir.string() + ": " + ec.message());
}

bool is_sample_file_name(const std::string& name) {
  static const std::regex pattern("[0-9]{6,}\\.(jpg|png|mp4|txt)");
  return std::regex_match(name, pattern);
}

bool is_shard_file_name(const std::string& name) {
  static const std::regex pattern("shard-[0-9]{6,}\\.tar");
  return std::regex_match(name, pattern);
}

}  // namespace mmprof::gen
