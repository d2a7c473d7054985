#pragma once
// The one way the env layer reads procfs, sysfs and /etc: paths are absolute as on a live system
// ("/proc/self/mountinfo") and resolved under an injectable root, so tests point it at a fake
// tree of copied files (tests/fixtures/env/...) instead of the machine they run on.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof::env {

class HostFiles {
 public:
  explicit HostFiles(std::filesystem::path root = "/") : root_(std::move(root)) {}

  // The whole file, or nullopt when it is missing or unreadable (kernels differ; never an error).
  std::optional<std::string> read(std::string_view path) const;
  // The first line without its newline and surrounding blanks.
  std::optional<std::string> read_line(std::string_view path) const;
  // Entry names of a directory, sorted; empty when it is missing.
  std::vector<std::string> list(std::string_view dir) const;
  bool exists(std::string_view path) const;
  std::filesystem::path resolve(std::string_view path) const;
  bool is_live() const { return root_ == "/"; }

 private:
  std::filesystem::path root_;
};

}  // namespace mmprof::env
