#include "probe/host_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace mmprof::procfs {

namespace fs = std::filesystem;

fs::path HostFiles::resolve(std::string_view path) const {
  std::string_view rel = path;
  while (!rel.empty() && rel.front() == '/')
    rel.remove_prefix(1);
  return root_ / fs::path(rel);
}

std::optional<std::string> read_small_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

std::optional<std::string> HostFiles::read(std::string_view path) const {
  return read_small_file(resolve(path));
}

std::optional<std::string> HostFiles::read_line(std::string_view path) const {
  auto text = read(path);
  if (!text) return std::nullopt;
  std::string line = text->substr(0, text->find('\n'));
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return std::string();
  const auto last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

std::vector<std::string> HostFiles::list(std::string_view dir) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(resolve(dir), ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool HostFiles::exists(std::string_view path) const {
  std::error_code ec;
  return fs::exists(resolve(path), ec);
}

}  // namespace mmprof::procfs
