#include "external/hook_records.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>

#include "mmprof/error.hpp"

namespace mmprof::external {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A complete line that is not a record of the protocol; turned into an InputError naming the
// file and line by the caller.
class BadRecord : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const json& field(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) throw BadRecord(fmt::format("no field '{}'", key));
  return *it;
}

int64_t req_int(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_number_integer()) throw BadRecord(fmt::format("'{}' is not an integer", key));
  return v.get<int64_t>();
}

int req_small_int(const json& j, const char* key) {
  return static_cast<int>(req_int(j, key));
}

// The value at `key` as a T, or nullopt when it is null or absent; BadRecord naming the key when
// it is of another type (`is` tells, `what` says which one it should be).
template <class T>
std::optional<T> optional_at(const json& j, const char* key, bool (json::*is)() const noexcept,
                             const char* what) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!((*it).*is)()) throw BadRecord(fmt::format("'{}' is not {}", key, what));
  return it->get<T>();
}

std::optional<int64_t> opt_int(const json& j, const char* key) {
  return optional_at<int64_t>(j, key, &json::is_number_integer, "an integer");
}

std::optional<int> opt_small_int(const json& j, const char* key) {
  const auto v = opt_int(j, key);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

std::string req_str(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string()) throw BadRecord(fmt::format("'{}' is not a string", key));
  return v.get<std::string>();
}

std::optional<std::string> opt_str(const json& j, const char* key) {
  return optional_at<std::string>(j, key, &json::is_string, "a string");
}

std::optional<bool> opt_bool(const json& j, const char* key) {
  return optional_at<bool>(j, key, &json::is_boolean, "true or false");
}

// Text of a value that is meant to be a string (a repr where the hook could not do better).
// {"file", "line", "function"} at `key`; nullopt for null or absent.
std::optional<CodeLine> code_line(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) throw BadRecord(fmt::format("'{}' is not an object", key));
  return CodeLine{req_str(*it, "file"), opt_str(*it, "function").value_or(""),
                  opt_int(*it, "line").value_or(0)};
}

json code_line_json(const std::optional<CodeLine>& c) {
  if (!c) return nullptr;
  return {{"file", c->file}, {"line", c->line}, {"function", c->function}};
}

std::string text_of(const json& v) {
  if (v.is_array()) {  // indices as the job's Python prints them: [4, 5, 6, 7]
    std::vector<std::string> items;
    for (const json& e : v)
      items.push_back(text_of(e));
    return fmt::format("[{}]", fmt::join(items, ", "));
  }
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> out;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) throw BadRecord(fmt::format("'{}' is not an array", key));
  for (const json& v : *it)
    out.push_back(text_of(v));
  return out;
}

// The loader's configuration is what the job's objects hold: read leniently (a value of an
// unexpected type is left empty, the raw object keeps it).
template <class T>
std::optional<T> lenient(const json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  if constexpr (std::is_same_v<T, bool>) {
    if (it->is_boolean()) return it->get<bool>();
  } else {
    if (it->is_number_integer()) return static_cast<T>(it->get<int64_t>());
  }
  return std::nullopt;
}

std::string lenient_text(const json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return "";
  return text_of(*it);
}

LoaderConfig loader_config(const json& c) {
  LoaderConfig out;
  if (!c.is_object()) return out;
  out.raw = c;
  out.num_workers = lenient<int>(c, "num_workers");
  out.prefetch_factor = lenient<int>(c, "prefetch_factor");
  out.batch_size = lenient<int64_t>(c, "batch_size");
  out.dataset_len = lenient<int64_t>(c, "dataset_len");
  out.pin_memory = lenient<bool>(c, "pin_memory");
  out.persistent_workers = lenient<bool>(c, "persistent_workers");
  out.in_order = lenient<bool>(c, "in_order");
  out.drop_last = lenient<bool>(c, "drop_last");
  out.dataset = lenient_text(c, "dataset");
  out.sampler = lenient_text(c, "sampler");
  out.batch_sampler = lenient_text(c, "batch_sampler");
  out.multiprocessing_context = lenient_text(c, "multiprocessing_context");
  return out;
}

template <class R>
R with_source(int pid, int section) {
  R r;
  r.pid = pid;
  r.section = section;
  return r;
}

// One reader per record type: the fields of line `j` into `r` (its pid and section set).
void read_versions(const json& j, VersionsRecord& r) {
  r.python = opt_str(j, "python");
  r.torch = opt_str(j, "torch");
  r.torchvision = opt_str(j, "torchvision");
  r.pil = opt_str(j, "pil");
  r.numpy = opt_str(j, "numpy");
  r.cuda = opt_str(j, "cuda");
  r.pillow_simd = opt_bool(j, "pillow_simd").value_or(false);
  r.cuda_available = opt_bool(j, "cuda_available").value_or(false);
  r.cuda_check = opt_str(j, "cuda_check").value_or("");
  r.ns = opt_int(j, "ns").value_or(0);
}

void read_loader(const json& j, LoaderRecord& r) {
  r.loader = req_small_int(j, "loader");
  r.ns = req_int(j, "ns");
  r.origin = opt_str(j, "origin").value_or("");
  r.stack = strings(j, "stack");
  if (const auto c = j.find("config"); c != j.end()) r.config = loader_config(*c);
  if (const auto o = j.find("overrides"); o != j.end() && o->is_object()) {
    if (const auto a = o->find("applied"); a != o->end() && a->is_object()) r.applied = *a;
    if (const auto x = o->find("rejected"); x != o->end() && x->is_object()) {
      for (const auto& [k, v] : x->items())
        r.rejected[k] = text_of(v);
    }
    if (const auto g = o->find("original"); g != o->end()) r.original = *g;
  }
  r.follow = opt_bool(j, "follow").value_or(false);
}

void read_epoch(const json& j, EpochRecord& r) {
  r.loader = req_small_int(j, "loader");
  r.epoch = req_int(j, "epoch");
  r.ns = req_int(j, "ns");
  r.ready_ns = opt_int(j, "ready_ns").value_or(r.ns);
  r.iterator = opt_str(j, "iterator").value_or("");
  if (const auto w = j.find("worker_pids"); w != j.end() && w->is_array()) {
    for (const json& p : *w)
      if (p.is_number_integer()) r.worker_pids.push_back(p.get<int>());
  }
  r.reused = opt_bool(j, "reused").value_or(false);
  r.pin_memory = opt_bool(j, "pin_memory");
  r.start_method = opt_str(j, "start_method");
}

void read_batch(const json& j, BatchRecord& r) {
  r.loader = req_small_int(j, "loader");
  r.epoch = req_int(j, "epoch");
  r.i = req_int(j, "i");
  r.n = req_int(j, "n");
  r.call_ns = req_int(j, "call_ns");
  r.ret_ns = req_int(j, "ret_ns");
  if (r.ret_ns < r.call_ns) throw BadRecord("'ret_ns' is before 'call_ns'");
  r.size = opt_int(j, "size");
  r.bytes = static_cast<uint64_t>(std::max<int64_t>(0, opt_int(j, "bytes").value_or(0)));
  r.digest = opt_str(j, "digest");
  r.hook_ns = opt_int(j, "hook_ns").value_or(0);
  if (const auto s = j.find("shapes"); s != j.end() && s->is_array()) r.shapes = *s;
}

void read_epoch_end(const json& j, EpochEndRecord& r) {
  r.loader = req_small_int(j, "loader");
  r.epoch = req_int(j, "epoch");
  r.ns = req_int(j, "ns");
  r.batches = opt_int(j, "batches").value_or(0);
  r.call_ns = opt_int(j, "call_ns");
}

void read_fetch(const json& j, FetchRecord& r) {
  r.loader = req_small_int(j, "loader");
  r.worker = req_small_int(j, "worker");
  r.process = static_cast<int>(opt_int(j, "pid").value_or(r.pid));
  r.start_ns = req_int(j, "start_ns");
  r.end_ns = req_int(j, "end_ns");
  if (r.end_ns < r.start_ns) throw BadRecord("'end_ns' is before 'start_ns'");
  r.size = opt_int(j, "size");
  r.collate_ns = opt_int(j, "collate_ns").value_or(0);
}

void read_getitem(const json& j, GetitemRecord& r) {
  r.loader = req_small_int(j, "loader");
  r.worker = req_small_int(j, "worker");
  r.index = text_of(field(j, "index"));
  r.start_ns = req_int(j, "start_ns");
  r.dur_ns = req_int(j, "dur_ns");
  r.every = opt_int(j, "every").value_or(1);
  r.items = opt_int(j, "items");
  if (const auto parts = j.find("parts"); parts != j.end()) {
    if (!parts->is_object()) throw BadRecord("'parts' is not an object");
    for (const auto& [name, ns] : parts->items()) {
      if (!ns.is_number_integer() || ns.get<int64_t>() < 0)
        throw BadRecord(fmt::format("part '{}' is not a duration in nanoseconds", name));
      r.parts.emplace_back(name, ns.get<int64_t>());
    }
  }
}

void read_pin(const json& j, PinRecord& r) {
  r.loader = req_small_int(j, "loader");
  r.start_ns = req_int(j, "start_ns");
  r.end_ns = req_int(j, "end_ns");
  r.thread = opt_str(j, "thread").value_or("");
}

void read_stop(const json& j, StopRecord& r) {
  r.reason = opt_str(j, "reason").value_or("");
  r.loader = req_small_int(j, "loader");
  r.batches = opt_int(j, "batches").value_or(0);
  r.ns = req_int(j, "ns");
}

void read_error(const json& j, ErrorRecord& r) {
  r.where = opt_str(j, "where").value_or("");
  r.message = opt_str(j, "message").value_or("");
  r.ns = opt_int(j, "ns").value_or(0);
}

void read_partial(const json& j, PartialRecord& r) {
  r.what = opt_str(j, "what").value_or("");
  r.measures = opt_str(j, "measures").value_or("");
  r.why = opt_str(j, "why").value_or("");
  r.ns = opt_int(j, "ns").value_or(0);
}

void read_exception(const json& j, ExceptionRecord& r) {
  r.type = req_str(j, "type");
  r.message = opt_str(j, "message").value_or("");
  r.script = code_line(j, "script");
  r.raised_at = code_line(j, "raised_at");
  if (const auto w = j.find("worker"); w != j.end() && !w->is_null()) {
    if (!w->is_object()) throw BadRecord("'worker' is not an object");
    r.worker = ExceptionRecord::Worker{req_str(*w, "process"), req_str(*w, "error"),
                                       code_line(*w, "raised_at")};
  }
  r.ns = opt_int(j, "ns").value_or(0);
}

void read_item_error(const json& j, ItemErrorRecord& r) {
  r.loader = req_small_int(j, "loader");
  r.worker = req_small_int(j, "worker");
  if (j.contains("index")) {
    r.item = "index " + text_of(j["index"]);
  } else if (j.contains("indices")) {
    r.item = "indices " + text_of(j["indices"]);
  } else {
    r.item = fmt::format("position {} of the dataset's iterator", req_int(j, "position"));
  }
  r.type = req_str(j, "type");
  r.message = opt_str(j, "message").value_or("");
  r.ns = req_int(j, "ns");
}

void read_stuck(const json& j, StuckRecord& r) {
  r.loader = req_small_int(j, "loader");
  r.worker = req_small_int(j, "worker");
  r.pid = req_small_int(j, "pid");
  r.indices = j.contains("indices") ? text_of(j["indices"]) : "";
  r.item = j.contains("item") && !j["item"].is_null() ? text_of(j["item"]) : "";
  r.since_ns = req_int(j, "since_ns");
  r.ns = req_int(j, "ns");
}

void read_optim_step(const json& j, OptimStepRecord& r) {
  r.opt = req_small_int(j, "opt");
  r.ns = req_int(j, "ns");
}

void read_optim_watch(const json& j, OptimWatchRecord& r) {
  r.available = opt_bool(j, "available").value_or(false);
  r.why = opt_str(j, "why").value_or("");
}

void read_proc(const json& j, ProcRecord& r) {
  r.ppid = static_cast<int>(opt_int(j, "ppid").value_or(0));
  r.role = req_str(j, "role");
  r.rank = opt_small_int(j, "rank");
  r.local_rank = opt_small_int(j, "local_rank");
  r.world_size = opt_small_int(j, "world_size");
  r.worker_id = opt_small_int(j, "worker_id");
  r.loader = opt_small_int(j, "loader");
  r.main_pid = opt_small_int(j, "main_pid");
  r.argv = strings(j, "argv");
  r.ns = req_int(j, "ns");
}

template <class R, std::vector<R> HookRecords::*records, void (*read)(const json&, R&)>
void add(const json& j, int pid, int section, HookRecords& out) {
  auto r = with_source<R>(pid, section);
  read(j, r);
  (out.*records).push_back(std::move(r));
}

using RecordReader = void (*)(const json&, int pid, int section, HookRecords&);
// Every record type the hook writes but `proc` (which opens a section), by its "t".
const std::map<std::string_view, RecordReader>& record_readers() {
  static const std::map<std::string_view, RecordReader> readers = {
      {"versions", add<VersionsRecord, &HookRecords::versions, read_versions>},
      {"loader", add<LoaderRecord, &HookRecords::loaders, read_loader>},
      {"epoch", add<EpochRecord, &HookRecords::epochs, read_epoch>},
      {"batch", add<BatchRecord, &HookRecords::batches, read_batch>},
      {"epoch_end", add<EpochEndRecord, &HookRecords::epoch_ends, read_epoch_end>},
      {"fetch", add<FetchRecord, &HookRecords::fetches, read_fetch>},
      {"getitem", add<GetitemRecord, &HookRecords::getitems, read_getitem>},
      {"pin", add<PinRecord, &HookRecords::pins, read_pin>},
      {"stop", add<StopRecord, &HookRecords::stops, read_stop>},
      {"error", add<ErrorRecord, &HookRecords::errors, read_error>},
      {"partial", add<PartialRecord, &HookRecords::partials, read_partial>},
      {"exception", add<ExceptionRecord, &HookRecords::exceptions, read_exception>},
      {"item_error", add<ItemErrorRecord, &HookRecords::item_errors, read_item_error>},
      {"stuck", add<StuckRecord, &HookRecords::stuck, read_stuck>},
      {"optim_step", add<OptimStepRecord, &HookRecords::optim_steps, read_optim_step>},
      {"optim_watch", add<OptimWatchRecord, &HookRecords::optim_watches, read_optim_watch>},
  };
  return readers;
}

// Parses one complete line of the file of `pid` into `out`; `section` is updated by proc lines.
void parse_record(const json& j, int pid, int& section, HookRecords& out) {
  if (!j.is_object()) throw BadRecord("not a JSON object");
  const std::string t = req_str(j, "t");
  if (t == "proc") {
    auto r = with_source<ProcRecord>(pid, static_cast<int>(out.procs.size()));
    read_proc(j, r);
    section = r.section;
    out.procs.push_back(std::move(r));
  } else if (const auto reader = record_readers().find(t); reader != record_readers().end()) {
    reader->second(j, pid, section, out);
  } else {
    out.unknown++;
    out.unknown_types[t]++;
  }
}

// One complete line (without its '\n'). A kill in the middle of a write followed by a recycled
// pid appending its own first write leaves "<cut record>{"t":"proc",...}" on one line: the cut
// part is counted, the proc record read.
void parse_line(std::string_view line, int pid, int& section, HookRecords& out) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded()) {
    constexpr std::string_view kProc = R"({"t":"proc",)";
    const size_t at = line.find(kProc, 1);
    if (at == std::string_view::npos) throw BadRecord("not valid JSON");
    j = json::parse(line.substr(at), nullptr, false);
    if (j.is_discarded()) throw BadRecord("not valid JSON");
    out.cut_lines++;
  }
  parse_record(j, pid, section, out);
}

// "hook-<pid>.jsonl" -> pid; nullopt for other names.
std::optional<int> pid_of(const std::string& name) {
  constexpr std::string_view kPrefix = "hook-", kSuffix = ".jsonl";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return std::nullopt;
  }
  const std::string digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoi(digits);
}

fs::path file_of(const fs::path& dir, int pid) {
  return dir / fmt::format("hook-{}.jsonl", pid);
}

}  // namespace

nlohmann::json VersionsRecord::to_json() const {
  auto opt = [](const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); };
  return {{"python", opt(python)},
          {"torch", opt(torch)},
          {"torchvision", opt(torchvision)},
          {"pil", opt(pil)},
          {"pillow_simd", pillow_simd},
          {"numpy", opt(numpy)},
          {"cuda", opt(cuda)},
          {"cuda_available", cuda_available},
          {"cuda_check", cuda_check}};
}

std::string CodeLine::text() const {
  return function.empty() ? fmt::format("{}:{}", file, line)
                          : fmt::format("{}:{} in {}", file, line, function);
}

std::optional<int> ExceptionRecord::Worker::id() const {
  static constexpr std::string_view kPrefix = "DataLoader worker process ";
  if (!process.starts_with(kPrefix)) return std::nullopt;
  int n = 0;
  const char* end = process.data() + process.size();
  const auto [at, ec] = std::from_chars(process.data() + kPrefix.size(), end, n);
  if (ec != std::errc() || at != end) return std::nullopt;
  return n;
}

std::string ExceptionRecord::text() const {
  const std::string first = message.substr(0, message.find('\n'));
  std::string head = worker ? fmt::format("{} in {}", worker->error, worker->process)
                            : type + (first.empty() ? "" : ": " + first);
  if (!item.empty()) head += " for item " + item;
  const std::optional<CodeLine>& where = script ? script : raised_at;
  const std::optional<CodeLine>& raised = worker ? worker->raised_at : raised_at;
  if (!where) return head;
  return fmt::format("{} (at {}{})", head, where->text(),
                     raised && raised != where ? ", raised at " + raised->text() : "");
}

nlohmann::json ExceptionRecord::to_json() const {
  json w = nullptr;
  if (worker) {
    w = {{"process", worker->process},
         {"error", worker->error},
         {"raised_at", code_line_json(worker->raised_at)}};
  }
  return {{"type", type},
          {"message", message},
          {"script", code_line_json(script)},
          {"raised_at", code_line_json(raised_at)},
          {"worker", w},
          {"item", item.empty() ? json(nullptr) : json(item)},
          {"text", text()}};
}

std::optional<ExceptionRecord> job_exception(const HookRecords& records) {
  const auto first = std::min_element(
      records.exceptions.begin(), records.exceptions.end(),
      [](const ExceptionRecord& a, const ExceptionRecord& b) { return a.ns < b.ns; });
  if (first == records.exceptions.end()) return std::nullopt;
  ExceptionRecord e = *first;
  // The item: raised by the worker torch names (of this main process), or in this process.
  const std::optional<int> worker = e.worker ? e.worker->id() : std::nullopt;
  const auto raised_here = [&](const ItemErrorRecord& r) {
    if (!e.worker) return r.pid == e.pid;
    const ProcRecord* p = records.section(r.section);
    return worker && p != nullptr && p->is_worker() && p->worker_id == worker &&
           p->main_pid.value_or(e.pid) == e.pid;
  };
  // Its type: the worker's error line starts with it ("ValueError: ..."); a main process's
  // exception is of it (a module's type is "module.Name", the record has "Name").
  const auto same_type = [&](const ItemErrorRecord& r) {
    const std::string& of = e.worker ? e.worker->error : e.type;
    const size_t end = e.worker ? of.find(':') : of.size();
    const std::string_view name = std::string_view(of).substr(0, end);
    return name == r.type || name.ends_with("." + r.type);
  };
  for (auto r = records.item_errors.rbegin(); r != records.item_errors.rend(); ++r) {
    if (r->ns <= e.ns && raised_here(*r) && same_type(*r)) {
      e.item = r->item;
      break;
    }
  }
  return e;
}

std::string StuckRecord::text() const {
  return fmt::format(
      "worker {} (pid {}) of loader {} has been on {} for {:.0f} s", worker, pid, loader,
      item.empty() ? "its batch " + indices : "item " + item + " of its batch " + indices,
      static_cast<double>(ns - since_ns) / 1e9);
}

bool HookRecords::empty() const noexcept {
  return procs.empty() && versions.empty() && loaders.empty() && epochs.empty() &&
         batches.empty() && epoch_ends.empty() && fetches.empty() && getitems.empty() &&
         pins.empty() && stops.empty() && errors.empty() && partials.empty() &&
         exceptions.empty() && item_errors.empty() && stuck.empty() && optim_steps.empty() &&
         optim_watches.empty() && unknown == 0;
}

const ProcRecord* HookRecords::section(int index) const noexcept {
  if (index < 0 || static_cast<size_t>(index) >= procs.size()) return nullptr;
  return &procs[static_cast<size_t>(index)];
}

HookTail::HookTail(fs::path dir) : dir_(std::move(dir)) {}

uint64_t HookTail::consumed_bytes() const noexcept {
  uint64_t n = 0;
  for (const auto& [pid, f] : files_)
    n += f.offset;
  return n;
}

size_t HookTail::poll(HookRecords& out) {
  std::error_code ec;
  fs::directory_iterator it(dir_, ec);
  if (ec) return 0;  // not created yet: the hook makes it on its first write
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const auto pid = pid_of(it->path().filename().string());
    if (!pid || files_.count(*pid) != 0) continue;
    files_[*pid].pid = *pid;
    out.pids.insert(std::lower_bound(out.pids.begin(), out.pids.end(), *pid), *pid);
  }
  size_t read = 0;
  constexpr size_t kChunk = size_t{1} << 20;
  for (auto& [pid, f] : files_) {
    if (f.finished) continue;
    const fs::path path = file_of(dir_, pid);
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) continue;  // removed under us: nothing more to read
    if (std::fseek(file, static_cast<long>(f.offset), SEEK_SET) != 0) {
      std::fclose(file);
      continue;
    }
    buffer_.clear();
    size_t begin = 0;  // the first byte of buffer_ not yet consumed
    try {
      for (;;) {
        const size_t old = buffer_.size();
        buffer_.resize(old + kChunk);
        const size_t got = std::fread(buffer_.data() + old, 1, kChunk, file);
        buffer_.resize(old + got);
        for (size_t nl = buffer_.find('\n', begin); nl != std::string::npos;
             nl = buffer_.find('\n', begin)) {
          const int64_t number = f.line + 1;
          try {
            parse_line(std::string_view(buffer_).substr(begin, nl - begin), pid, f.section, out);
          } catch (const BadRecord& e) {
            throw InputError(fmt::format("{}:{}: {}", path.string(), number, e.what()));
          } catch (const nlohmann::json::exception& e) {
            throw InputError(fmt::format("{}:{}: {}", path.string(), number, e.what()));
          }
          f.line = number;
          f.offset += nl + 1 - begin;
          out.lines++;
          read++;
          begin = nl + 1;
        }
        if (got < kChunk) break;
        buffer_.erase(0, begin);  // keep only the unterminated rest
        begin = 0;
      }
    } catch (...) {
      std::fclose(file);
      throw;
    }
    std::fclose(file);
  }
  return read;
}

void HookTail::finish(HookRecords& out) {
  for (auto& [pid, f] : files_) {
    if (f.finished) continue;
    f.finished = true;
    std::error_code ec;
    const uintmax_t size = fs::file_size(file_of(dir_, pid), ec);
    if (!ec && size > f.offset) out.cut_lines++;
  }
}

HookRecords read_hook_dir(const fs::path& dir) {
  HookRecords out;
  HookTail tail(dir);
  tail.poll(out);
  tail.finish(out);
  return out;
}

std::string ProcessIdentity::label() const {
  if (worker) {
    std::string s = fmt::format("DataLoader worker {} of loader {}",
                                worker_id ? std::to_string(*worker_id) : "?",
                                loader ? std::to_string(*loader) : "?");
    if (main_pid) {
      s += rank ? fmt::format(" (main pid {}, rank {})", *main_pid, *rank)
                : fmt::format(" (main pid {})", *main_pid);
    }
    return s;
  }
  return rank ? fmt::format("main process of rank {}", *rank) : "main process";
}

nlohmann::json ProcessIdentity::to_json() const {
  auto opt = [](const std::optional<int>& v) { return v ? json(*v) : json(nullptr); };
  return {{"pid", pid},
          {"role", worker ? "worker" : "main"},
          {"rank", opt(rank)},
          {"worker_id", opt(worker_id)},
          {"loader", opt(loader)},
          {"main_pid", opt(main_pid)},
          {"label", label()}};
}

std::optional<ProcessIdentity> identify(const HookRecords& records, int pid) {
  for (auto it = records.procs.rbegin(); it != records.procs.rend(); ++it) {
    if (it->pid != pid) continue;
    ProcessIdentity id;
    id.pid = pid;
    id.worker = it->is_worker();
    id.rank = it->rank;
    if (id.worker) {
      id.worker_id = it->worker_id;
      id.loader = it->loader;
      id.main_pid = it->main_pid;
    }
    return id;
  }
  return std::nullopt;
}

}  // namespace mmprof::external
