#include "env/host_files.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace mmprof::env {

namespace fs = std::filesystem;

fs::path HostFiles::resolve(std::string_view path) const {
  std::string_view rel = path;
  while (!rel.empty() && rel.front() == '/')
    rel.remove_prefix(1);
  return root_ / fs::path(rel);
}

std::optional<std::string> HostFiles::read(std::string_view path) const {
  // procfs and sysfs files report size 0: read until EOF instead of trusting the size.
  std::ifstream in(resolve(path), std::ios::binary);
  if (!in) return std::nullopt;
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return std::nullopt;
  return text;
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

}  // namespace mmprof::env
