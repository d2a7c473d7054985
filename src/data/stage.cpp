#include "data/stage.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "data/dataset_store.hpp"
#include "data/range_reader.hpp"
#include "mmprof/error.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/interrupt.hpp"

namespace mmprof {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kBuffer = 1 << 20;

// An open file descriptor, closed on destruction.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// Free bytes for an unprivileged writer on the file system that holds `path` (or would: its
// nearest existing parent).
uint64_t free_bytes(fs::path path) {
  while (!path.empty() && !fs::exists(path))
    path = path.parent_path();
  struct statvfs v {};
  if (statvfs(path.empty() ? "." : path.c_str(), &v) != 0) return UINT64_MAX;
  return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

// The digest of a whole file, read in kBuffer blocks; false when it cannot be read.
bool file_digest(const fs::path& path, std::vector<uint8_t>& buf, uint64_t& digest) {
  const Fd f(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0) return false;
  digest = 0;
  for (;;) {
    const ssize_t n = read(f.fd, buf.data(), buf.size());
    if (n < 0) return false;
    if (n == 0) return true;
    digest = digest64(buf.data(), static_cast<size_t>(n), digest);
  }
}

// Copies file `file` of the dataset (`size` bytes: local, or remote through range requests of
// kBuffer each, data.remote.concurrency of them in flight) to `rel` below `dest`, through
// rel.partial renamed when whole, both opened from their folder's descriptor (open_folder_below:
// a symbolic link planted on the way in a shared staging folder is not followed); `done` counts
// the bytes as they go. Returns the bytes copied.
uint64_t copy_file(RangeReader& reader, const Dataset& source, uint32_t file, uint64_t size,
                   const fs::path& dest, const fs::path& rel, std::vector<uint8_t>& buf,
                   std::atomic<uint64_t>& done) {
  std::vector<ByteRange> chunks;
  for (uint64_t at = 0; at < size; at += kBuffer)
    chunks.push_back({file, at, std::min<uint64_t>(kBuffer, size - at)});
  reader.begin(chunks);
  const fs::path dst = dest / rel;
  const Fd dir(open_folder_below(dest, rel.parent_path()));
  if (dir.fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
    throw OutputError(fmt::format(
        "cannot stage {}: a folder on its way in {} is a symbolic link or a file (a link is not "
        "followed: in a shared folder it could send the copy elsewhere); make it a folder",
        rel.string(), dest.string()));
  }
  if (dir.fd < 0) throw_output_errno("cannot create the folder of", dst.string());
  const std::string name = rel.filename().string(), partial = name + ".partial";
  const std::string partial_path = dst.string() + ".partial";
  {
    const Fd out(open_new_output_at(dir.fd, partial.c_str()));
    if (out.fd < 0) throw_output_errno("cannot create", partial_path);
    for (const ByteRange& chunk : chunks) {
      if (interrupted()) {
        ::unlinkat(dir.fd, partial.c_str(), 0);  // the next run copies this file again
        throw Error(ExitCode::interrupted, "interrupted");
      }
      try {
        reader.read(chunk, buf);
      } catch (const ReadFailure& f) {
        throw InputError(fmt::format("cannot stage {}: {}", source.files()[file], f.message));
      }
      for (size_t w = 0; w < chunk.size;) {
        const ssize_t k = write(out.fd, buf.data() + w, chunk.size - w);
        if (k < 0) {
          const int saved = errno;
          ::unlinkat(dir.fd, partial.c_str(), 0);  // no cut file left behind, under any name
          errno = saved;
          throw_output_errno("cannot write", partial_path);
        }
        w += static_cast<size_t>(k);
      }
      done += chunk.size;
    }
  }
  if (::renameat(dir.fd, partial.c_str(), dir.fd, name.c_str()) != 0)
    throw_output_errno("cannot rename", partial_path);
  return size;
}

// The shards.json and index.csv of mmprof shard beside the shards, when the source has them (the
// copy is then indexed the same way).
void copy_sidecars(const Dataset& source, const fs::path& dest) {
  const auto store = source.remote() ? remote_store(source.root().string(), source.remote_config())
                                     : local_store(source.root());
  for (const char* name : {"shards.json", "index.csv"}) {
    if (const auto text = store->text(name)) write_file_atomic(dest / name, *text);
  }
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The earlier sessions of staging `source_name` into `dest`, from the stage.json there: an
// interrupted or repeated stage adds to what the copy cost, never replaces it. A record of
// another source, or none, starts afresh; a record from before sessions were kept is one session.
json earlier_sessions(const fs::path& dest, const std::string& source_name) {
  std::ifstream in(dest / "stage.json");
  // Missing or unreadable: this session's record replaces it.
  const json old = in ? json::parse(in, nullptr, false) : json();
  if (!old.is_object() || old.value("schema", "") != "mmprof.stage/1" ||
      old.value("source", "") != source_name)
    return json::array();
  if (old.contains("sessions") && old["sessions"].is_array()) return old["sessions"];
  json one = json::object();
  for (const char* k : {"wall_s", "cpu_s", "copied_files", "copied_bytes", "already_there_files"})
    one[k] = old.value(k, json(0));
  one["complete"] = true;  // written only once a stage had finished
  return json::array({one});
}

// stage.json's `total`: what every session together copied and cost; `costed` when mmprof stage
// copied every byte of the copy at some time (a copy made otherwise has no known cost).
json sessions_total(const json& sessions, uint64_t bytes) {
  double wall = 0, cpu = 0;
  uint64_t copied = 0;
  for (const auto& x : sessions) {
    wall += x.value("wall_s", 0.0);
    cpu += x.value("cpu_s", 0.0);
    copied += x.value("copied_bytes", uint64_t{0});
  }
  return {{"sessions", sessions.size()},
          {"wall_s", wall},
          {"cpu_s", cpu},
          {"copied_bytes", copied},
          {"costed", copied >= bytes}};
}

// What a stage copies: every file the loader reads, their sizes, and which are already there.
struct StagePlan {
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  std::vector<char> present;  // same size there: a candidate for skipping (its digest decides)
  uint64_t free_before = 0;
};

// Refuses a stage without room for the files not already there, before anything is copied.
StagePlan plan_stage(const Dataset& source, const fs::path& dest) {
  const std::vector<std::string>& names = source.files();
  StagePlan plan;
  plan.sizes.resize(names.size());
  plan.present.resize(names.size());
  uint64_t need = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    std::error_code ec;
    // A remote file's size is its listing's; a local one's is taken now.
    plan.sizes[i] = source.remote() ? source.file_size(static_cast<uint32_t>(i))
                                    : fs::file_size(source.root() / names[i], ec);
    if (ec) {
      throw InputError(
          fmt::format("cannot read {}: {}", (source.root() / names[i]).string(), ec.message()));
    }
    plan.total += plan.sizes[i];
    plan.present[i] = fs::file_size(dest / names[i], ec) == plan.sizes[i] && !ec;
    if (!plan.present[i]) need += plan.sizes[i];
  }
  plan.free_before = free_bytes(dest);
  if (need > plan.free_before) {
    throw OutputError(
        fmt::format("{} has {:.1f} MB free and staging {} needs {:.1f} MB more: nothing was copied",
                    dest.string(), static_cast<double>(plan.free_before) / 1e6,
                    source.root().string(), static_cast<double>(need) / 1e6));
  }
  return plan;
}

// What the copying threads did; the first error one of them met stops them all.
struct StageProgress {
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0}, copied_bytes{0};
  std::atomic<size_t> copied{0}, verified{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;
};

// One copying thread: takes the next file until none is left, an error, or Ctrl-C.
void copy_files(const Dataset& source, const StageOptions& o, const StagePlan& plan,
                StageProgress& p) {
  const std::vector<std::string>& names = source.files();
  // Two blocks for the digests of both copies (their chaining follows the block size), and one
  // the reader fills.
  std::vector<uint8_t> buf(kBuffer), other(kBuffer), chunk;
  RangeReader reader(source, std::max(o.threads, 1));
  while (!p.failed && !interrupted()) {
    const size_t i = p.next++;
    if (i >= names.size()) return;
    const fs::path src = source.root() / names[i], dst = o.dest / names[i];
    try {
      // A remote file of the same size is taken as whole (the .partial protocol never leaves a
      // cut one under its name): its digest would cost downloading it again.
      uint64_t a = 0, b = 1;
      const bool same =
          plan.present[i] &&
          (source.remote() || (file_digest(src, buf, a) && file_digest(dst, other, b) && a == b));
      if (same) {
        ++p.verified;
        p.done += plan.sizes[i];
        std::error_code gone;
        fs::remove(dst.string() + ".partial", gone);  // an interrupted earlier copy's
        continue;
      }
      p.copied_bytes += copy_file(reader, source, static_cast<uint32_t>(i), plan.sizes[i], o.dest,
                                  names[i], chunk, p.done);
      ++p.copied;
    } catch (...) {
      const std::lock_guard lock(p.error_mutex);
      if (!p.error) p.error = std::current_exception();
      p.failed = true;
    }
  }
}

// The copying threads, with progress every 200 ms; the reporter is woken at the end, so its wait
// never adds to the wall time staged.
void copy_all(const Dataset& source, const StageOptions& o, const StagePlan& plan,
              StageProgress& p) {
  bool finished = false;
  std::mutex finish_mutex;
  std::condition_variable finish_cv;
  std::thread reporter([&] {
    std::unique_lock lock(finish_mutex);
    while (!finished && o.progress) {
      o.progress(p.done, plan.total);
      finish_cv.wait_for(lock, std::chrono::milliseconds(200));
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(o.threads, 1); ++t)
    threads.emplace_back([&] { copy_files(source, o, plan, p); });
  for (auto& t : threads)
    t.join();
  {
    const std::lock_guard lock(finish_mutex);
    finished = true;
  }
  finish_cv.notify_one();
  reporter.join();
}

}  // namespace

json stage_dataset(const Dataset& source, const StageOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  const std::vector<std::string>& names = source.files();
  const StagePlan plan = plan_stage(source, o.dest);
  std::error_code ec;
  fs::create_directories(o.dest, ec);
  StageProgress p;
  copy_all(source, o, plan, p);
  const std::string source_name =
      source.remote() ? source.root().string() : fs::absolute(source.root()).string();
  json sessions = earlier_sessions(o.dest, source_name);
  // stage.json for this session: also when it stops early, so that the next one adds to its cost.
  const auto record = [&](bool complete) {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - cpu0;
    sessions.push_back({{"wall_s", wall},
                        {"cpu_s", cpu},
                        {"copied_files", p.copied.load()},
                        {"copied_bytes", p.copied_bytes.load()},
                        {"already_there_files", p.verified.load()},
                        {"complete", complete}});
    json st = {{"schema", "mmprof.stage/1"},
               {"source", source_name},
               {"verified_by", source.remote() ? "size" : "size and digest"},
               {"dest", fs::absolute(o.dest).string()},
               {"complete", complete},
               {"files", names.size()},
               {"bytes", plan.total},
               {"copied_files", p.copied.load()},
               {"copied_bytes", p.copied_bytes.load()},
               {"already_there_files", p.verified.load()},
               {"threads", std::max(o.threads, 1)},
               {"wall_s", wall},
               {"copied_mb_per_s",
                wall > 0 ? json(static_cast<double>(p.copied_bytes) / 1e6 / wall) : json(nullptr)},
               {"cpu_s", cpu},
               {"dest_free_bytes_before", plan.free_before},
               {"dest_free_bytes_after", free_bytes(o.dest)},
               {"sessions", sessions},
               {"total", sessions_total(sessions, plan.total)}};
    write_json_atomic(o.dest / "stage.json", st);
    return st;
  };
  // Interrupted (Ctrl-C): the files copied so far stay, whole; the same command continues.
  if (interrupted()) {
    record(false);
    throw Error(ExitCode::interrupted,
                fmt::format("interrupted: {} of {} files staged in {} ({} copied now); run the "
                            "same command again to copy the rest",
                            p.copied.load() + p.verified.load(), names.size(), o.dest.string(),
                            p.copied.load()));
  }
  if (p.error) {
    record(false);
    std::rethrow_exception(p.error);
  }
  // On the device before the figures are taken: staged means safe there, and the file system's
  // free space counts the copy only once its blocks are allocated (ext4 delays that).
  if (const Fd d(open(o.dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); d.fd >= 0) syncfs(d.fd);
  copy_sidecars(source, o.dest);
  if (o.progress) o.progress(p.done, plan.total);
  return record(true);
}

}  // namespace mmprof
