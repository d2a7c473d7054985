#pragma once
// The one way mmprof reads procfs, sysfs and /etc files. HostFiles (the inventory's reader) takes
// paths absolute as on a live system ("/proc/self/mountinfo") and resolves them under an
// injectable root, so tests point it at a fake tree of copied files (tests/fixtures/env/...)
// instead of the machine they run on; the sampler's ProcFs reads under its own roots.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof::procfs {

// Reads a small file whole with open/read: procfs and sysfs files report size 0 and must be read
// in one go to be consistent, and some fail on read() (/sys/class/net/lo/speed gives EINVAL),
// which libstdc++'s filebuf would turn into an exception. nullopt when it cannot be opened or read.
std::optional<std::string> read_small_file(const std::filesystem::path& path);

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

}  // namespace mmprof::procfs
