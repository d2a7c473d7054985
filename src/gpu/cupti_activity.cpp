#include "gpu/cupti_activity.hpp"

#include <algorithm>
#include <stdexcept>

#if defined(MMPROF_HAVE_CUDA)
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <new>
#include <utility>

#include "gpu/dl_symbol.hpp"
#include "probe/clock.hpp"
#endif

namespace mmprof::gpu {

ClockConversion calibrate_offset(const std::vector<ClockSample>& samples) {
  const ClockSample* best = nullptr;
  for (const ClockSample& s : samples) {
    const int64_t width = s.monotonic_after_ns - s.monotonic_before_ns;
    if (width < 0 || s.cupti_ns == 0) continue;
    if (!best || width < best->monotonic_after_ns - best->monotonic_before_ns) best = &s;
  }
  if (!best) throw std::invalid_argument("no valid (monotonic, CUPTI, monotonic) clock sample");
  const int64_t width = best->monotonic_after_ns - best->monotonic_before_ns;
  const int64_t midpoint = best->monotonic_before_ns + width / 2;
  return {"calibrated_offset", midpoint - static_cast<int64_t>(best->cupti_ns), width / 2};
}

#if defined(MMPROF_HAVE_CUDA)

// Every CUPTI function mmprof calls, resolved with dlsym. Types come from cupti.h's declarations.
struct CuptiActivityApi::Functions {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) get_next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) get_num_dropped_records = nullptr;
  decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  // Optional: absent before CUPTI 12.x; without it the clock offset is calibrated.
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp_callback = nullptr;
};

namespace {

// CUPTI recommends buffers of 1-10 MB; fewer, larger buffers mean fewer callbacks.
constexpr size_t kBufferBytes = 8u << 20;

constexpr CUpti_ActivityKind kActivityKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};

// State the buffer callbacks reach. CUPTI's callbacks carry no user pointer, and its worker
// thread may call them until the process ends, so this lives for the whole process (never
// destroyed: a static destructor could run while CUPTI still calls back).
struct CallbackState {
  std::mutex mutex;  // guards `completed` only; never held across a CUPTI call
  std::vector<ActivityBuffer> completed;
  std::atomic<uint64_t> dropped{0};
  std::atomic<const CuptiActivityApi::Functions*> fns{nullptr};
  std::atomic<bool> active{false};  // one enabled CuptiActivityApi per process
};

CallbackState& callback_state() {
  static auto* state = new CallbackState;
  return *state;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // Ownership goes to CUPTI until buffer_completed takes it back. A failed allocation makes
  // CUPTI drop records, which cuptiActivityGetNumDroppedRecords then counts.
  *buffer = new (std::nothrow) uint8_t[kBufferBytes];
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid_size) {
  CallbackState& state = callback_state();
  ActivityBuffer owned{std::unique_ptr<uint8_t[]>(buffer), valid_size};
  if (valid_size > 0) {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.completed.push_back(std::move(owned));
  }
  // Outside the lock: this is a CUPTI call, and CUPTI may be inside its own locks calling us.
  size_t dropped = 0;
  const auto* fns = state.fns.load();
  if (fns && fns->get_num_dropped_records(context, stream, &dropped) == CUPTI_SUCCESS)
    state.dropped += dropped;
}

// CUPTI asks for timestamps through this once registered, so records carry CLOCK_MONOTONIC.
uint64_t CUPTIAPI monotonic_timestamp() {
  return static_cast<uint64_t>(monotonic_ns());
}

std::string result_text(const CuptiActivityApi::Functions& fns, CUptiResult result) {
  const char* text = nullptr;
  if (fns.get_result_string(result, &text) != CUPTI_SUCCESS || !text) text = "unknown error";
  return fmt::format("{} ({})", text, static_cast<int>(result));
}

const char* kind_name(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return "MEMSET";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return "SYNCHRONIZATION";
    default:
      return "other";
  }
}

template <typename Fn>
bool resolve(void* handle, const char* symbol, Fn& out, std::string& missing) {
  if (!dl_bind(handle, symbol, out)) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  return out != nullptr;
}

// Loads one library and resolves the table. libcupti is never dlclose'd: its threads may still
// run, and the tables live for the process (one per path) so callbacks never see a dead one.
const CuptiActivityApi::Functions* load_functions(const std::string& path, std::string& error) {
  static std::mutex mutex;
  static auto* tables = new std::deque<std::pair<std::string, CuptiActivityApi::Functions>>;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [p, fns] : *tables) {
    if (p == path) return &fns;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    error = fmt::format("{} not found (dlopen: {})", path, e ? e : "unknown error");
    return nullptr;
  }
  CuptiActivityApi::Functions f;
  std::string missing;
  resolve(handle, "cuptiActivityRegisterCallbacks", f.register_callbacks, missing);
  resolve(handle, "cuptiActivityEnable", f.enable, missing);
  resolve(handle, "cuptiActivityDisable", f.disable, missing);
  resolve(handle, "cuptiActivityFlushAll", f.flush_all, missing);
  resolve(handle, "cuptiActivityGetNextRecord", f.get_next_record, missing);
  resolve(handle, "cuptiActivityGetNumDroppedRecords", f.get_num_dropped_records, missing);
  resolve(handle, "cuptiGetTimestamp", f.get_timestamp, missing);
  resolve(handle, "cuptiGetResultString", f.get_result_string, missing);
  if (!missing.empty()) {
    error = fmt::format("{} is not a usable libcupti (missing {})", path, missing);
    return nullptr;
  }
  std::string optional;
  resolve(handle, "cuptiActivityRegisterTimestampCallback", f.register_timestamp_callback,
          optional);
  tables->emplace_back(path, f);
  return &tables->back().second;
}

std::vector<std::string> library_candidates() {
  if (const char* env = std::getenv("MMPROF_CUPTI_LIB"); env && *env) return {env};
  std::vector<std::string> out{"libcupti.so.13", "libcupti.so"};
#if defined(MMPROF_CUPTI_BUILD_LIB)
  out.push_back(MMPROF_CUPTI_BUILD_LIB);  // the toolkit mmprof was built against
#endif
  return out;
}

std::string demangle(const char* name) {
  if (!name) return "(unnamed kernel)";
  int status = 0;
  char* plain = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && plain ? plain : name;
  std::free(plain);
  return out;
}

// An event with the record's timestamps, or nothing when they are not valid.
std::optional<GpuEvent> timed(GpuEventKind kind, uint64_t start, uint64_t end,
                              const ClockConversion& clock) {
  if (start == 0 || end < start) return std::nullopt;
  GpuEvent e;
  e.kind = kind;
  e.start_ns = clock.to_monotonic(start);
  e.end_ns = clock.to_monotonic(end);
  return e;
}

// Records that run on a stream (kernel, memcpy, memset) carry the same placement fields.
template <class Record>
std::optional<GpuEvent> on_stream(GpuEventKind kind, const Record& r, const ClockConversion& c) {
  auto e = timed(kind, r.start, r.end, c);
  if (!e) return e;
  e->device = r.deviceId;
  e->stream = r.streamId;
  e->correlation = r.correlationId;
  return e;
}

std::optional<GpuEvent> from_kernel(const CUpti_ActivityKernel10& k, const ClockConversion& c) {
  auto e = on_stream(GpuEventKind::kernel, k, c);
  if (!e) return e;
  e->name = demangle(k.name);
  return e;
}

std::optional<GpuEvent> from_memcpy(const CUpti_ActivityMemcpy6& m, const ClockConversion& c) {
  auto e = on_stream(GpuEventKind::memcpy, m, c);
  if (!e) return e;
  e->bytes = m.bytes;
  switch (m.copyKind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      e->copy = CopyKind::h2d;
      e->pinned_host = m.srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
      e->name = "memcpy HtoD";
      break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      e->copy = CopyKind::d2h;
      e->pinned_host = m.dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
      e->name = "memcpy DtoH";
      break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      e->copy = CopyKind::d2d;
      e->name = "memcpy DtoD";
      break;
    default:
      e->copy = CopyKind::other;
      e->name = "memcpy other";
  }
  return e;
}

std::optional<GpuEvent> from_memset(const CUpti_ActivityMemset4& m, const ClockConversion& c) {
  auto e = on_stream(GpuEventKind::memset, m, c);
  if (!e) return e;
  e->bytes = m.bytes;
  e->name = "memset";
  return e;
}

const char* sync_name(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "event synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "stream synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "context synchronize";
    default:
      return "synchronize";
  }
}

// Synchronisation records carry a context, not a device: device stays 0.
std::optional<GpuEvent> from_sync(const CUpti_ActivitySynchronization2& s,
                                  const ClockConversion& c) {
  auto e = timed(GpuEventKind::synchronization, s.start, s.end, c);
  if (!e) return e;
  e->stream = s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s.streamId;
  e->correlation = s.correlationId;
  e->name = sync_name(s.type);
  return e;
}

}  // namespace

std::optional<GpuEvent> convert_record(const void* record, const ClockConversion& clock,
                                       ConvertStats& stats) {
  const auto* r = static_cast<const CUpti_Activity*>(record);
  ++stats.records;
  std::optional<GpuEvent> e;
  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      e = from_kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(r), clock);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      e = from_memcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(r), clock);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      e = from_memset(*reinterpret_cast<const CUpti_ActivityMemset4*>(r), clock);
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      e = from_sync(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(r), clock);
      break;
    default:
      ++stats.ignored;
      return std::nullopt;
  }
  if (e) {
    ++stats.converted;
  } else {
    ++stats.incomplete;
  }
  return e;
}

void convert_buffer(uint8_t* buffer, size_t valid_size, const RecordWalker& next,
                    const ClockConversion& clock, std::vector<GpuEvent>& out, ConvertStats& stats) {
  void* record = nullptr;
  while (next(buffer, valid_size, &record)) {
    if (auto e = convert_record(record, clock, stats)) out.push_back(std::move(*e));
  }
}

std::unique_ptr<CuptiActivityApi> CuptiActivityApi::open(std::string* unavailable_reason) {
  std::string first_error;
  for (const std::string& path : library_candidates()) {
    std::string error;
    if (const Functions* fns = load_functions(path, error))
      return std::unique_ptr<CuptiActivityApi>(new CuptiActivityApi(fns, path));
    if (first_error.empty()) first_error = error;
  }
  if (unavailable_reason) *unavailable_reason = first_error;
  return nullptr;
}

CuptiActivityApi::CuptiActivityApi(const Functions* fns, std::string library)
    : fns_(fns), library_(std::move(library)) {}

CuptiActivityApi::~CuptiActivityApi() {
  if (enabled_) flush_and_disable();
}

bool CuptiActivityApi::enable(std::string* reason) {
  CallbackState& state = callback_state();
  if (state.active.exchange(true)) {
    if (reason) *reason = "another CUPTI activity session is active in this process";
    return false;
  }
  state.fns = fns_;
  take_completed();  // buffers a previous session left behind are not ours
  dropped_at_enable_ = state.dropped;
  const auto fail = [&](const std::string& what, CUptiResult r) {
    for (CUpti_ActivityKind k : kActivityKinds)
      fns_->disable(k);
    state.active = false;
    if (reason) *reason = fmt::format("{}: {}", what, result_text(*fns_, r));
    return false;
  };
  if (CUptiResult r = fns_->register_callbacks(buffer_requested, buffer_completed);
      r != CUPTI_SUCCESS)
    return fail("cuptiActivityRegisterCallbacks", r);
  // The callback must be registered before any kind is enabled for every record to use it.
  if (fns_->register_timestamp_callback &&
      fns_->register_timestamp_callback(monotonic_timestamp) == CUPTI_SUCCESS) {
    clock_ = {"timestamp_callback", 0, 0};
  } else {
    std::vector<ClockSample> samples(16);
    for (ClockSample& s : samples) {
      s.monotonic_before_ns = monotonic_ns();
      fns_->get_timestamp(&s.cupti_ns);
      s.monotonic_after_ns = monotonic_ns();
    }
    try {
      clock_ = calibrate_offset(samples);
    } catch (const std::invalid_argument&) {
      return fail("cuptiGetTimestamp gave no usable clock sample", CUPTI_ERROR_UNKNOWN);
    }
  }
  for (CUpti_ActivityKind k : kActivityKinds) {
    if (CUptiResult r = fns_->enable(k); r != CUPTI_SUCCESS)
      return fail(fmt::format("cuptiActivityEnable({})", kind_name(k)), r);
  }
  enabled_ = true;
  return true;
}

void CuptiActivityApi::flush_and_disable() {
  // Disable first so that nothing is recorded after the flush. Best effort (a flush that fails
  // loses records, it does not stop the run): the forced flush hands back every buffer, partly
  // filled ones included, through buffer_completed before it returns.
  for (CUpti_ActivityKind k : kActivityKinds)
    fns_->disable(k);
  if (CUptiResult r = fns_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS) {
    std::fprintf(stderr, "mmprof: warning: cuptiActivityFlushAll: %s (records may be lost)\n",
                 result_text(*fns_, r).c_str());
  }
  enabled_ = false;
  callback_state().active = false;
}

std::vector<ActivityBuffer> CuptiActivityApi::take_completed() {
  CallbackState& state = callback_state();
  std::lock_guard<std::mutex> lock(state.mutex);
  return std::exchange(state.completed, {});
}

RecordWalker CuptiActivityApi::record_walker() const {
  return [fns = fns_](uint8_t* buffer, size_t valid_size, void** record) {
    auto** r = reinterpret_cast<CUpti_Activity**>(record);
    return fns->get_next_record(buffer, valid_size, r) == CUPTI_SUCCESS;
  };
}

void CuptiActivityApi::convert(const std::vector<ActivityBuffer>& buffers,
                               std::vector<GpuEvent>& out, ConvertStats& stats) const {
  const RecordWalker walk = record_walker();
  for (const ActivityBuffer& b : buffers)
    convert_buffer(b.data.get(), b.valid_size, walk, clock_, out, stats);
}

uint64_t CuptiActivityApi::dropped() const noexcept {
  return callback_state().dropped.load() - dropped_at_enable_;
}

#else  // built without the CUDA toolkit

// open() never returns an instance here, so the members below are never reached; they exist
// so that callers link the same way with and without CUDA.
struct CuptiActivityApi::Functions {};

std::unique_ptr<CuptiActivityApi> CuptiActivityApi::open(std::string* unavailable_reason) {
  if (unavailable_reason)
    *unavailable_reason = "mmprof was built without the CUDA toolkit (no cupti.h)";
  return nullptr;
}
CuptiActivityApi::~CuptiActivityApi() = default;
bool CuptiActivityApi::enable(std::string*) {
  return false;
}
void CuptiActivityApi::flush_and_disable() {}
std::vector<ActivityBuffer> CuptiActivityApi::take_completed() {
  return {};
}
void CuptiActivityApi::convert(const std::vector<ActivityBuffer>&, std::vector<GpuEvent>&,
                               ConvertStats&) const {}
RecordWalker CuptiActivityApi::record_walker() const {
  return {};
}
uint64_t CuptiActivityApi::dropped() const noexcept {
  return 0;
}

#endif

}  // namespace mmprof::gpu
