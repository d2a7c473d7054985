#include "gpu/gpu_events_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "mmprof/error.hpp"
#include "util/files.hpp"

namespace mmprof::gpu {
namespace {

using nlohmann::json;

json header_json(const GpuEventsFile& f) {
  const GpuEventsHeader& h = f.header;
  return {{"schema", kGpuEventsSchema},           {"pid", h.pid},
          {"clock", "CLOCK_MONOTONIC"},           {"clock_method", h.clock_method},
          {"clock_offset_ns", h.clock_offset_ns}, {"dropped", h.dropped},
          {"incomplete", h.incomplete},           {"events", f.events.size()},
          {"cupti_library", h.cupti_library}};
}

json event_json(const GpuEvent& e) {
  return {{"kind", to_string(e.kind)}, {"copy", to_string(e.copy)},
          {"pinned", e.pinned_host},   {"start_ns", e.start_ns},
          {"end_ns", e.end_ns},        {"device", e.device},
          {"stream", e.stream},        {"correlation", e.correlation},
          {"bytes", e.bytes},          {"name", e.name}};
}

// A field of one line, with the line named when it is missing or of the wrong type.
template <typename T>
T field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw InputError(fmt::format("{}: missing key \"{}\"", where, key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError(
        fmt::format("{}: key \"{}\" has the wrong type ({})", where, key, j.at(key).dump()));
  }
}

json parse_line(const std::string& line, const std::string& where) {
  try {
    json j = json::parse(line);
    if (!j.is_object()) throw InputError(where + ": not a JSON object");
    return j;
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw InputError(fmt::format("{}: not valid JSON ({})", where, e.what()));
  }
}

GpuEventsHeader parse_header(const json& j, const std::string& where, uint64_t& events) {
  const auto schema = field<std::string>(j, "schema", where);
  if (schema != kGpuEventsSchema) {
    throw InputError(
        fmt::format("{}: schema \"{}\", expected \"{}\"", where, schema, kGpuEventsSchema));
  }
  if (field<std::string>(j, "clock", where) != "CLOCK_MONOTONIC")
    throw InputError(where + ": clock is not CLOCK_MONOTONIC");
  GpuEventsHeader h;
  h.pid = field<int64_t>(j, "pid", where);
  h.clock_method = field<std::string>(j, "clock_method", where);
  h.clock_offset_ns = field<int64_t>(j, "clock_offset_ns", where);
  h.dropped = field<uint64_t>(j, "dropped", where);
  h.incomplete = field<uint64_t>(j, "incomplete", where);
  h.cupti_library = field<std::string>(j, "cupti_library", where);
  events = field<uint64_t>(j, "events", where);
  return h;
}

GpuEvent parse_event(const json& j, const std::string& where) {
  GpuEvent e;
  const auto kind = field<std::string>(j, "kind", where);
  if (!parse_kind(kind, e.kind))
    throw InputError(fmt::format("{}: unknown kind \"{}\"", where, kind));
  const auto copy = field<std::string>(j, "copy", where);
  if (!parse_copy_kind(copy, e.copy))
    throw InputError(fmt::format("{}: unknown copy kind \"{}\"", where, copy));
  e.pinned_host = field<bool>(j, "pinned", where);
  e.start_ns = field<int64_t>(j, "start_ns", where);
  e.end_ns = field<int64_t>(j, "end_ns", where);
  if (e.end_ns < e.start_ns) {
    throw InputError(
        fmt::format("{}: end_ns {} is before start_ns {}", where, e.end_ns, e.start_ns));
  }
  e.device = field<uint32_t>(j, "device", where);
  e.stream = field<uint32_t>(j, "stream", where);
  e.correlation = field<uint32_t>(j, "correlation", where);
  e.bytes = field<uint64_t>(j, "bytes", where);
  e.name = field<std::string>(j, "name", where);
  return e;
}

}  // namespace

std::string format_gpu_events(const GpuEventsFile& f) {
  // Kernel names come from the traced program: replace invalid UTF-8 rather than fail the file.
  const auto line = [](const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  };
  std::string out = line(header_json(f));
  for (const GpuEvent& e : f.events)
    out += line(event_json(e));
  return out;
}

void write_gpu_events(const std::filesystem::path& path, const GpuEventsFile& file) {
  write_file_atomic(path, format_gpu_events(file));
}

bool is_gpu_events_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string first;
  if (!in || !std::getline(in, first)) return false;
  const json j = json::parse(first, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.value("schema", "") == kGpuEventsSchema;
}

GpuEventsFile read_gpu_events(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot open GPU events file " + path.string());
  GpuEventsFile f;
  uint64_t expected = 0;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = fmt::format("{}:{}", path.string(), number);
    if (number == 1) {
      f.header = parse_header(parse_line(line, where), where, expected);
    } else if (!line.empty()) {
      f.events.push_back(parse_event(parse_line(line, where), where));
    }
  }
  if (number == 0) throw InputError(path.string() + ": empty GPU events file (no header line)");
  if (f.events.size() != expected) {
    throw InputError(fmt::format("{}: header promises {} events but the file holds {} (truncated?)",
                                 path.string(), expected, f.events.size()));
  }
  return f;
}

}  // namespace mmprof::gpu
