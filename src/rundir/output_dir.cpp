#include "rundir/output_dir.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/json_file.hpp"
#include "util/files.hpp"

namespace mmprof::rundir {
namespace {

namespace fs = std::filesystem;

constexpr std::array kRunEntries = {
    run_file::manifest,   run_file::summary,   run_file::steps,       run_file::stages,
    run_file::resources,  run_file::host,      run_file::errors,      run_file::digests,
    run_file::checkpoint, run_file::steady,    run_file::trace,       run_file::hook,
    run_file::gpu,        run_file::report_md, run_file::report_html, run_file::report_json,
    run_file::reserve,    run_file::job_log};
constexpr std::array kExperimentEntries = {
    run_file::experiment, run_file::matrix_csv,  run_file::matrix_md,  run_file::trials,
    run_file::report_md,  run_file::report_html, run_file::report_json};

// The file that makes `dir` an mmprof directory of `kind`.
const char* marker(OutputKind kind) {
  return kind == OutputKind::run ? run_file::manifest : run_file::experiment;
}

// Whether the marker in `dir` is mmprof's: a JSON object whose schema is of mmprof's kind (any
// version). A user's own manifest.json beside a gpu/ folder is not.
bool marker_is_ours(const fs::path& dir, OutputKind kind) {
  const std::string family = kind == OutputKind::run ? "mmprof.manifest/" : "mmprof.experiment/";
  try {
    const auto doc = nlohmann::json::parse(
        read_input_file(dir / marker(kind), "run file", kMaxRunFileBytes), nullptr, false);
    return doc.is_object() && doc.value("schema", "").rfind(family, 0) == 0;
  } catch (const Error&) {
    return false;  // not a regular file, or too large: not mmprof's
  }
}

const char* noun(OutputKind kind) {
  return kind == OutputKind::run ? "run" : "experiment";
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path());
  if (ec) throw InputError(fmt::format("cannot list --out {}: {}", dir.string(), ec.message()));
  return out;
}

}  // namespace

bool is_own_entry(const std::string& name, OutputKind kind) {
  const auto own = [&](const char* n) { return name == n || name == std::string(n) + ".tmp"; };
  return kind == OutputKind::run
             ? std::any_of(kRunEntries.begin(), kRunEntries.end(), own)
             : std::any_of(kExperimentEntries.begin(), kExperimentEntries.end(), own);
}

namespace {

// `fd` (an open directory) locked exclusively, without waiting; closed and thrown (`busy`) when
// another process holds the lock.
int locked(int fd, const fs::path& dir, const std::string& busy) {
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int why = errno;
    ::close(fd);
    if (why == EWOULDBLOCK) throw UsageError(busy);
    throw OutputError(fmt::format("cannot lock {}: {}", dir.string(), std::strerror(why)));
  }
  return fd;
}

}  // namespace

DirectoryLock::DirectoryLock(const fs::path& dir, const std::string& busy) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    throw InputError(fmt::format("cannot open {}: {}", dir.string(), std::strerror(errno)));
  fd_ = locked(fd, dir, busy);
}

DirectoryLock::~DirectoryLock() {
  ::close(fd_);
}

OutputDir::OutputDir(fs::path dir, OutputKind kind, bool force) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) {
    throw OutputError(fmt::format("cannot create --out {}: {}", dir_.string(),
                                  ec ? ec.message() : "it exists and is not a directory"));
  }
  fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) {
    throw OutputError(fmt::format("cannot open --out {}: {}", dir_.string(), std::strerror(errno)));
  }
  locked(fd_, dir_,
         fmt::format("--out {} is being written by another mmprof process; wait for it or choose "
                     "another path",
                     dir_.string()));
  try {
    const std::vector<fs::path> present = entries(dir_);
    if (present.empty()) return;
    // mmprof's by its marker (schema); without one, only loose files of mmprof's names (a
    // report, a .tmp) are taken as its leftovers: a folder named like one of mmprof's (gpu/,
    // hook/) in a directory without mmprof's marker is the user's, and --force never deletes it.
    const bool loose = std::all_of(present.begin(), present.end(), [&](const fs::path& p) {
      return is_own_entry(p.filename().string(), kind) && !fs::is_directory(p, ec);
    });
    const bool marked = fs::exists(dir_ / marker(kind), ec);
    if (marked ? !marker_is_ours(dir_, kind) : !loose) {
      throw UsageError(
          fmt::format("--out {} exists and is not an mmprof {} directory ({}); choose another path",
                      dir_.string(), noun(kind),
                      marked ? fmt::format("its {} is not mmprof's", marker(kind))
                             : fmt::format("no {} of mmprof's", marker(kind))));
    }
    if (!force) {
      throw UsageError(fmt::format(
          "--out {} already holds an mmprof {}; choose another path, or pass --force to replace "
          "it (mmprof's own files there are removed first)",
          dir_.string(), noun(kind)));
    }
    for (const fs::path& p : present) {
      const std::string name = p.filename().string();
      if (!is_own_entry(name, kind)) continue;
      fs::remove_all(p, ec);
      if (ec) throw OutputError(fmt::format("cannot remove {}: {}", p.string(), ec.message()));
      removed_.push_back(name);
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

OutputDir::~OutputDir() {
  ::close(fd_);  // releases the lock (the last descriptor of its open file description)
}

}  // namespace mmprof::rundir
