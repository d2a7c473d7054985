#include "util/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "util/error.hpp"

namespace mmprof {
namespace fs = std::filesystem;

bool write_all(int fd, std::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool unlink_for_output(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT;
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return false;
  }
  return ::unlink(path.c_str()) == 0 || errno == ENOENT;
}

int open_new_output(const fs::path& path, int extra_flags) {
  if (!unlink_for_output(path)) return -1;
  return ::open(path.c_str(), kNewOutputFlags | extra_flags, 0644);
}

int open_new_output_at(int dir_fd, const char* name) {
  if (::unlinkat(dir_fd, name, 0) != 0 && errno != ENOENT) return -1;  // EISDIR for a folder
  return ::openat(dir_fd, name, kNewOutputFlags, 0644);
}

int open_folder_below(const fs::path& root, const fs::path& rel) {
  constexpr int kFolder = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  int fd = ::open(root.c_str(), kFolder);
  for (const fs::path& part : rel) {
    const std::string name = part.string();
    if (fd < 0 || name.empty() || name == ".") continue;
    int next = -1;
    if (name == "..") {
      errno = EINVAL;
    } else {
      next = ::openat(fd, name.c_str(), kFolder | O_NOFOLLOW);
      if (next < 0 && errno == ENOENT &&
          (::mkdirat(fd, name.c_str(), 0755) == 0 || errno == EEXIST))
        next = ::openat(fd, name.c_str(), kFolder | O_NOFOLLOW);
    }
    const int saved = errno;
    ::close(fd);
    errno = saved;
    fd = next;
  }
  return fd;
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = open_new_output(tmp);
  if (fd < 0) throw_output_errno("cannot create", tmp.string());
  // fsync reports a write-back failure (ENOSPC on some filesystems, EIO) that write(2) did not.
  if (!write_all(fd, content) || ::fsync(fd) != 0) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    errno = saved;
    throw_output_errno("cannot write", path.string());
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    throw_output_errno("cannot rename into", path.string());
  }
}

namespace {

// The value with the fewest significant digits within 1e-13 of it (relative): the noise of
// binary arithmetic is about 1e-16, and no figure mmprof measures has 13 significant digits. A
// value that 15 digits already write exactly has no noise and stays as it is: so a figure read
// back from a file mmprof wrote (at most 14 digits) is written again unchanged, where trimming it
// a second time could move it by another 1e-13 (405.42928190284 to 405.4292819028).
double without_noise(double v) {
  if (std::strtod(fmt::format("{:.15g}", v).c_str(), nullptr) == v) return v;
  for (int digits = 1; digits < 17; ++digits) {
    const double r = std::strtod(fmt::format("{:.{}g}", v, digits).c_str(), nullptr);
    if (std::fabs(r - v) <= 1e-13 * std::fabs(v)) return r;
  }
  return v;
}

void round_fractions(nlohmann::json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (std::isfinite(v)) j = without_noise(v);
  } else if (j.is_structured()) {
    for (auto& x : j)
      round_fractions(x);
  }
}

}  // namespace

std::string json_text(const nlohmann::json& value) {
  nlohmann::json rounded = value;
  round_fractions(rounded);
  // Invalid UTF-8 from a file name must not abort the write: replace it.
  return rounded.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

void write_json_atomic(const fs::path& path, const nlohmann::json& value) {
  write_file_atomic(path, json_text(value) + "\n");
}

std::string read_input_file(const fs::path& path, std::string_view what, uint64_t max_bytes) {
  // Non-blocking, so that opening a FIFO returns at once; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    throw InputError(
        fmt::format("cannot read {} {}: {}", what, path.string(), std::strerror(errno)));
  }
  struct stat st {};
  std::string text;
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = S_ISDIR(st.st_mode) ? "it is a folder" : "it is not a regular file (a FIFO or a device)";
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    why = fmt::format("it holds {} bytes, more than the {} a {} may", st.st_size, max_bytes, what);
  } else {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);  // a file cut while read: what was there
  }
  ::close(fd);
  if (!why.empty())
    throw InputError(fmt::format("cannot read {} {}: {}", what, path.string(), why));
  return text;
}

fs::path fresh_partial_dir(const fs::path& out) {
  const fs::path dir = fs::absolute(out).lexically_normal();
  fs::path tmp = dir.parent_path() / ("." + dir.filename().string() + ".partial");
  std::error_code ec;
  fs::remove_all(tmp, ec);  // what an interrupted run left
  if (!fs::create_directories(tmp, ec) && ec) {
    throw OutputError(fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
  }
  return tmp;
}

void replace_dir(const fs::path& partial, const fs::path& out) {
  const fs::path dir = fs::absolute(out).lexically_normal();
  const fs::path old = dir.parent_path() / ("." + dir.filename().string() + ".old");
  std::error_code ec;
  fs::remove_all(old, ec);
  if (fs::exists(dir)) fs::rename(dir, old, ec);
  if (!ec) fs::rename(partial, dir, ec);
  if (ec) {
    throw OutputError(
        fmt::format("cannot move {} to {}: {}", partial.string(), dir.string(), ec.message()));
  }
  fs::remove_all(old, ec);
}

AppendFile::AppendFile(const fs::path& path, std::string_view header) : path_(path) {
  fd_ = open_new_output(path);
  if (fd_ < 0) throw_output_errno("cannot create", path.string());
  if (!header.empty()) write(header);
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::write(std::string_view text) {
  if (write_all(fd_, text)) {
    size_ += text.size();
    return;
  }
  const int saved = errno;
  // Cut the partial write off, so a reader never sees half a row; the offset goes back with it,
  // so a later write that fits continues the file without a hole.
  if (::ftruncate(fd_, static_cast<off_t>(size_)) == 0)
    ::lseek(fd_, static_cast<off_t>(size_), SEEK_SET);
  errno = saved;
  throw_output_errno("cannot write", path_.string());
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
