#include "trace/trace_record.hpp"

#include <cstring>

namespace mmprof::trace {

Phase phase_code(const char* name) noexcept {
  if (std::strcmp(name, "compute") == 0) return Phase::compute;
  if (std::strcmp(name, "pipeline") == 0) return Phase::pipeline;
  if (std::strcmp(name, "end_to_end") == 0) return Phase::end_to_end;
  return Phase::other;
}

const char* phase_name(int64_t code) noexcept {
  switch (static_cast<Phase>(code)) {
    case Phase::compute:
      return "compute";
    case Phase::pipeline:
      return "pipeline";
    case Phase::end_to_end:
      return "end_to_end";
    case Phase::other:
      break;
  }
  return "other";
}

const char* event_name(EventName name) noexcept {
  switch (name) {
    case EventName::worker_start:
      return "worker start";
    case EventName::worker_stop:
      return "worker stop";
    case EventName::read:
      return "read";
    case EventName::decode:
      return "decode";
    case EventName::augment:
      return "augment";
    case EventName::collate:
      return "collate";
    case EventName::batch:
      return "batch";
    case EventName::loader_start:
      return "loader start";
    case EventName::wait:
      return "wait";
    case EventName::pin:
      return "pin";
    case EventName::consumed:
      return "consumed";
    case EventName::queue:
      return "queue";
    case EventName::compute:
      return "compute";
    case EventName::sync:
      return "sync";
    case EventName::step:
      return "step";
    case EventName::phase:
      return "phase";
    case EventName::window_begin:
      return "measured window begin";
    case EventName::window_end:
      return "measured window end";
    case EventName::memory:
      return "memory";
  }
  return "unknown";
}

}  // namespace mmprof::trace
