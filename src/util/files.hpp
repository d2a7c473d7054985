#pragma once
// Output files that survive an interruption: whole files written atomically (temp + fsync +
// rename), and append-only files flushed after every write, so an interrupted run keeps what it
// measured. The run directory's own names and formats are rundir/'s.
#include <fcntl.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace mmprof {

// write(2) until all of `content` is written (retrying EINTR); false with errno set when the
// kernel took less. A write that returns 0 is reported as ENOSPC, which it means for a file.
bool write_all(int fd, std::string_view content);

// Opens `path` for writing as a new file: whatever entry had the name (an old file, or a symlink or
// hard link planted in a shared folder) is unlinked first, and the open neither follows a symlink
// nor reuses an entry that appeared since (O_CREAT | O_EXCL | O_NOFOLLOW), so a planted name
// cannot redirect mmprof's write to another file. A directory at the name is refused (EISDIR).
// Returns the descriptor, or -1 with errno set.
int open_new_output(const std::filesystem::path& path, int extra_flags = 0);
// The same for the entry `name` of the folder `dir_fd` (openat): with open_folder_below, a file
// is written where its folders are, whatever links appear around them.
int open_new_output_at(int dir_fd, const char* name);
// Opens the folder `rel` below `root` (O_DIRECTORY), creating the folders it needs: each is
// opened from the one above without following a symbolic link, so a link planted in a shared
// folder (`root/sub -> /elsewhere`) is never entered (ELOOP, or ENOTDIR for a file where a folder
// belongs; EINVAL for a ".." in `rel`). Returns the descriptor, or -1 with errno set.
int open_folder_below(const std::filesystem::path& root, const std::filesystem::path& rel);
// The flags open_new_output opens with, for an open done elsewhere (posix_spawn's file actions)
// after unlink_for_output(path).
inline constexpr int kNewOutputFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
// Unlinks what has the name `path` unless it is a directory; false with errno set on failure (a
// name that does not exist is no failure).
bool unlink_for_output(const std::filesystem::path& path);

// Writes `content` to path via path.tmp + fsync + rename. Throws OutputError naming the path
// (the tmp file removed, an existing `path` left as it was).
void write_file_atomic(const std::filesystem::path& path, std::string_view content);
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& value);
// The text every JSON file and --json output of mmprof gets: indented by 2, invalid UTF-8 (a file
// name's) replaced, and each fractional number with the fewest digits within 1e-13 of it, so
// that the noise of binary arithmetic (0.38000000000000006) is not printed as a figure.
std::string json_text(const nlohmann::json& value);

// The whole of a file mmprof reads (a config, criteria, a run's JSON and CSV): refused unless it
// is a regular file (a FIFO would block for ever, /dev/zero never end) of at most `max_bytes`.
// Throws InputError (exit 3) naming `what` (e.g. "config file") and the path, and why.
std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                            uint64_t max_bytes);

// A folder written whole or not at all. fresh_partial_dir(out) is where to write it:
// .NAME.partial beside `out`, emptied of what an interrupted run left and created. replace_dir()
// then moves it into place; an existing `out` goes only once the new one is there. Both throw
// OutputError naming the folders.
std::filesystem::path fresh_partial_dir(const std::filesystem::path& out);
void replace_dir(const std::filesystem::path& partial, const std::filesystem::path& out);

// An append-only text file, written through to the kernel by every write call. A write that
// fails part way (a full disk, a quota, a file size limit) is cut back to where it started, so
// the file only ever holds whole writes (whole CSV rows), and throws OutputError naming it.
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
  int fd_ = -1;
  uint64_t size_ = 0;  // bytes of whole writes
};

// Quotes a CSV field when it holds a comma, quote or newline (RFC 4180).
std::string csv_field(std::string_view s);

}  // namespace mmprof
