#pragma once
// Claiming --out for the one process that writes a run or an experiment directory. A run
// directory is the output of one process (docs/architecture.md), so a second mmprof writing into
// the same --out is refused while the first holds it, and a directory that already holds
// something is refused unless the user says --force, which removes mmprof's own files first:
// no stale trace.json or report.* of an earlier run survives beside the new run's files.
#include <filesystem>
#include <string>
#include <vector>

namespace mmprof::rundir {

enum class OutputKind { run, experiment };

class OutputDir {
 public:
  // Creates `dir` (and parents) and takes an exclusive lock on it (flock on the directory, held
  // until destruction; workers forked later share it, the user's job exec'd later does not).
  // Throws UsageError when another process holds the lock, when `dir` is not empty and `force` is
  // false, or when it holds files that are not mmprof's and no run or experiment of mmprof
  // (--force never removes another file); OutputError when it cannot be created or cleared.
  OutputDir(std::filesystem::path dir, OutputKind kind, bool force);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::filesystem::path& path() const noexcept { return dir_; }
  // What --force removed (names relative to the directory), in directory order.
  const std::vector<std::string>& removed() const noexcept { return removed_; }

 private:
  std::filesystem::path dir_;
  int fd_ = -1;
  std::vector<std::string> removed_;
};

// An exclusive lock on an existing directory, the one OutputDir takes on --out: held until
// destruction. `mmprof baseline --resume RUN` holds RUN's, so a resume of a run whose process is
// still writing it is refused (both would end "complete", and checkpoint.json lose resumed_by),
// and a second resume waits its turn. Throws UsageError(`busy`) when another process holds it,
// InputError when the directory cannot be opened.
class DirectoryLock {
 public:
  DirectoryLock(const std::filesystem::path& dir, const std::string& busy);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// Whether `name` (an entry directly under the directory) is one mmprof writes into a directory of
// `kind`: the run_file names, their ".tmp" siblings, and the report's files.
bool is_own_entry(const std::string& name, OutputKind kind);

}  // namespace mmprof::rundir
