#include "trace/trace_session.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>

#include "mmprof/run_dir.hpp"
#include "probe/clock.hpp"
#include "trace/tracer.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace mmprof::trace {
namespace fs = std::filesystem;
namespace {

uint32_t region_count(const Config& config) {
  return kFirstWorkerRegion + static_cast<uint32_t>(std::max(1, config.loader.num_workers));
}

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

// Streams chunks into path.tmp, then fsync + rename (as rundir's write_file_atomic): a reader
// never sees half a trace; a failed write leaves no temp file behind.
TraceCounts write_atomic(const fs::path& path, const TraceSource& source) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = open_new_output(tmp);
  if (fd < 0) throw_output_errno("cannot create", tmp.string());
  std::unique_ptr<std::FILE, FileCloser> file(::fdopen(fd, "w"));
  if (!file) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    throw_output_errno("cannot create", tmp.string());
  }
  bool ok = true;
  TraceCounts counts;
  try {
    counts = write_chrome_trace(source, [&](std::string_view chunk) {
      ok = ok && std::fwrite(chunk.data(), 1, chunk.size(), file.get()) == chunk.size();
    });
  } catch (...) {
    file.reset();
    ::unlink(tmp.c_str());
    throw;
  }
  ok = ok && std::fflush(file.get()) == 0 && ::fsync(fileno(file.get())) == 0;
  const int saved = errno;
  file.reset();
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int why = ok ? errno : saved;
    ::unlink(tmp.c_str());
    errno = why;
    throw_output_errno("cannot write", path.string());
  }
  return counts;
}

}  // namespace

TraceSession::TraceSession(const Config& config)
    : arena_(region_count(config), static_cast<uint64_t>(config.trace.max_events),
             static_cast<uint32_t>(config.trace.sample_every)),
      origin_ns_(monotonic_ns()),
      main_pid_(getpid()),
      main_tid_(static_cast<int>(gettid())) {
  set_active(&arena_, &gpu_events_);
}

TraceSession::~TraceSession() {
  set_active(nullptr, nullptr);
}

TraceCounts TraceSession::write(const fs::path& file, const Dataset& dataset) const {
  TraceSource source;
  for (uint32_t r = 0; r < arena_.regions(); ++r)
    source.regions.push_back(arena_.records(r));
  source.dropped = arena_.dropped_total();
  source.max_events = arena_.max_events();
  source.sample_every = arena_.sample_every();
  source.origin_ns = origin_ns_;
  source.main_pid = main_pid_;
  source.main_tid = main_tid_;
  source.sample_key = [&dataset](uint32_t index) {
    return index < dataset.samples().size() ? dataset.samples()[index].key : std::string();
  };
  source.gpu_events = gpu_events_;
  return write_atomic(file, source);
}

TraceFigures trace_summary(const TraceCounts& counts, const TraceArena& arena) {
  TraceFigures t;
  t.file = run_file::trace;
  t.events = counts.events;
  t.recorded_events = counts.recorded;
  t.dropped_events = counts.dropped;
  t.max_events = arena.max_events();
  t.sample_every = arena.sample_every();
  t.flows = counts.flows;
  t.gpu_events = counts.gpu_events;
  return t;
}

}  // namespace mmprof::trace
