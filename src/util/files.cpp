#include "util/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "util/error.hpp"

namespace mmprof {
namespace fs = std::filesystem;

void write_file_atomic(const fs::path& path, std::string_view content) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno("cannot create", tmp.string());
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      throw_errno("cannot write", tmp.string());
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    throw_errno("cannot rename into", path.string());
  }
}

void write_json_atomic(const fs::path& path, const nlohmann::json& value) {
  // Invalid UTF-8 from a file name must not abort the write: replace it.
  write_file_atomic(path,
                    value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

AppendFile::AppendFile(const fs::path& path, std::string_view header) : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) throw_errno("cannot create", path.string());
  if (!header.empty()) write(header);
}

AppendFile::~AppendFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void AppendFile::write(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) {
    throw_errno("cannot write", path_.string());
  }
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace mmprof
