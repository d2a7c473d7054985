// libmmprof_cupti_inject.so: GPU activity of an unmodified CUDA process (a PyTorch job, the
// planted-schedule program), recorded with mmprof's own GpuTracer.
//
//   CUDA_INJECTION64_PATH=/path/libmmprof_cupti_inject.so MMPROF_GPU_EVENTS=events.jsonl python3
//   ...
//
// The CUDA driver loads the library during cuInit and calls InitializeInjection(), which starts
// the tracer. At process exit (atexit) the tracer is flushed and the events are written, as
// "mmprof.gpu_events/1" (gpu/gpu_events_file.hpp), to $MMPROF_GPU_EVENTS (default
// ./mmprof-gpu-events.jsonl; "%p" in the name becomes the process id). `mmprof inspect FILE`
// reads it. Messages go to stderr prefixed "mmprof-inject:"; the traced process is never
// stopped by a tracing failure.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "gpu/gpu_events_file.hpp"
#include "gpu/gpu_tracer.hpp"

namespace {

using mmprof::gpu::GpuTracer;

struct Session {
  std::unique_ptr<GpuTracer> tracer;
  pid_t pid = 0;
  std::string path;
};

// Never destroyed: a forked child that exits normally must not run ~GpuTracer (CUPTI calls in a
// child without CUPTI's threads); the parent stops the tracer in its atexit handler.
Session& session() {
  static auto* s = new Session;
  return *s;
}

std::string events_path(pid_t pid) {
  const char* env = std::getenv("MMPROF_GPU_EVENTS");
  std::string path = env && *env ? env : "mmprof-gpu-events.jsonl";
  if (const auto at = path.find("%p"); at != std::string::npos)
    path.replace(at, 2, std::to_string(pid));
  return path;
}

void write_events_at_exit() noexcept {
  Session& s = session();
  // A forked child inherits this handler but not the tracing session: only the parent writes.
  if (!s.tracer || getpid() != s.pid) return;
  try {
    mmprof::gpu::GpuEventsFile file;
    file.events = s.tracer->stop();
    file.header.pid = s.pid;
    file.header.clock_method = s.tracer->clock().method;
    file.header.clock_offset_ns = s.tracer->clock().offset_ns;
    file.header.dropped = s.tracer->dropped();
    file.header.incomplete = s.tracer->incomplete();
    file.header.cupti_library = s.tracer->library();
    mmprof::gpu::write_gpu_events(s.path, file);
    std::fprintf(stderr, "mmprof-inject: %zu GPU events (%llu dropped, %llu incomplete) -> %s\n",
                 file.events.size(), static_cast<unsigned long long>(file.header.dropped),
                 static_cast<unsigned long long>(file.header.incomplete), s.path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mmprof-inject: cannot write GPU events: %s\n", e.what());
  }
  s.tracer.reset();
}

}  // namespace

// Called by the CUDA driver (CUDA_INJECTION64_PATH) once, from cuInit. Returns 1 even when
// tracing is unavailable, so that the traced program runs on.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    Session& s = session();
    s.pid = getpid();
    s.path = events_path(s.pid);
    std::string reason;
    s.tracer = GpuTracer::start(&reason);
    if (!s.tracer) {
      std::fprintf(stderr, "mmprof-inject: GPU tracing unavailable: %s\n", reason.c_str());
      return;
    }
    std::atexit(write_events_at_exit);
  });
  return 1;
}
