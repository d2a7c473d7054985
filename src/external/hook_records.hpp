#pragma once
// The external hook's records read back (docs/external-hook.md): one JSON Lines file per Python
// process of a user's job, MMPROF_HOOK_DIR/hook-<pid>.jsonl. Typed records, each carrying the pid
// of its file and its section (the `proc` line it follows: a recycled pid, or a spawn child that
// recorded as main and then became a worker, starts a new section of the same file).
//
// A line is complete when its '\n' is there. A last line without one was cut short by a kill:
// skipped and counted, never parsed. A complete line that is not a record of the protocol is an
// InputError naming the file and line. A record type this reader does not know is ignored and
// counted (a newer hook).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof::external {

// What every record carries: the pid of the file it came from, and the index in
// HookRecords::procs of the `proc` line whose section it is in.
struct RecordSource {
  int pid = 0;
  int section = -1;
};

// `proc`: the first line of every file (and of every later section).
struct ProcRecord : RecordSource {
  int ppid = 0;
  std::string role;  // main | worker
  std::optional<int> rank, local_rank, world_size;
  std::optional<int> worker_id, loader, main_pid;  // workers only
  std::vector<std::string> argv;
  int64_t ns = 0;
  bool is_worker() const noexcept { return role == "worker"; }
};

// `versions`: once per main process.
struct VersionsRecord : RecordSource {
  std::optional<std::string> python, torch, torchvision, pil, numpy, cuda;
  bool pillow_simd = false, cuda_available = false;
  std::string cuda_check;
  int64_t ns = 0;
  nlohmann::json to_json() const;  // the record's fields, without t, pid and ns
};

// `loader`.config, the fields the analysis uses typed (empty where the value is null or of
// another type), the whole object in `raw` (for the manifest).
struct LoaderConfig {
  std::optional<int> num_workers, prefetch_factor;
  std::optional<int64_t> batch_size, dataset_len;
  std::optional<bool> pin_memory, persistent_workers, in_order, drop_last;
  std::string dataset, sampler, batch_sampler, multiprocessing_context;
  nlohmann::json raw = nlohmann::json::object();
};

// `loader`: one DataLoader construction.
struct LoaderRecord : RecordSource {
  int loader = 0;  // construction order in the process, from 0
  int64_t ns = 0;
  std::string origin;  // file:line of the DataLoader(...) call ("" when the hook had none)
  std::vector<std::string> stack;
  LoaderConfig config;
  nlohmann::json applied = nlohmann::json::object();  // overrides applied: key -> value
  std::map<std::string, std::string> rejected;        // overrides rejected: key -> why
  nlohmann::json original;                            // null when no overrides were set
  bool follow = false;
};

// `epoch`: iteration started.
struct EpochRecord : RecordSource {
  int loader = 0;
  int64_t epoch = 0;
  int64_t ns = 0, ready_ns = 0;
  std::string iterator;
  std::vector<int> worker_pids;
  bool reused = false;
  std::optional<bool> pin_memory;
  std::optional<std::string> start_method;
};

// `batch`: a batch `__next__` returned.
struct BatchRecord : RecordSource {
  int loader = 0;
  int64_t epoch = 0, i = 0, n = 0;
  int64_t call_ns = 0, ret_ns = 0;
  std::optional<int64_t> size;
  uint64_t bytes = 0;
  std::optional<std::string> digest;
  int64_t hook_ns = 0;
  // The loader's first batch only: [dtype, shape] of its first tensors and arrays (walk order),
  // null on the others.
  nlohmann::json shapes;
};

// `epoch_end`: a `__next__` raised StopIteration at `ns`. `call_ns`, the entry of that
// `__next__`, is read when a hook writes it (the protocol's records do not have it yet).
struct EpochEndRecord : RecordSource {
  int loader = 0;
  int64_t epoch = 0;
  int64_t ns = 0;
  int64_t batches = 0;
  std::optional<int64_t> call_ns;
};

// `fetch`: one fetcher call (the items of one batch and their collation).
struct FetchRecord : RecordSource {
  int loader = 0;
  int worker = -1;  // -1: the main process (num_workers=0)
  int process = 0;  // the record's own `pid` field (the fetching process)
  int64_t start_ns = 0, end_ns = 0;
  std::optional<int64_t> size;
  int64_t collate_ns = 0;
};

// `getitem`: one `dataset[index]` (or one `__getitems__` call, `items` samples).
struct GetitemRecord : RecordSource {
  int loader = 0;
  int worker = -1;
  std::string index;  // an integer index as its digits, else the hook's text of it
  int64_t start_ns = 0, dur_ns = 0;
  int64_t every = 1;
  std::optional<int64_t> items;
  // The stages inside __getitem__ the hook timed for this item: "decode" (a torchvision
  // dataset's loader) and its transforms by name, in nanoseconds; empty when it timed none.
  std::vector<std::pair<std::string, int64_t>> parts;
};

// `pin`: pinning of one batch.
struct PinRecord : RecordSource {
  int loader = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::string thread;
};

// `stop`: MMPROF_HOOK_MAX_BATCHES ended the job at `ns` (the entry of the next `__next__`).
struct StopRecord : RecordSource {
  std::string reason;
  int loader = 0;
  int64_t batches = 0;
  int64_t ns = 0;
};

// `error`: an exception inside the hook (it is off in that process from then on), or a setting
// that could not be used (`where` is the variable's name; the hook stays on).
struct ErrorRecord : RecordSource {
  std::string where, message;
  int64_t ns = 0;
};

// `partial`: something of torch the hook could not wrap (absent, or a signature it does not
// know), with the figures that therefore are not measured.
struct PartialRecord : RecordSource {
  std::string what, measures, why;
  int64_t ns = 0;
};

// A line of the job's code in a traceback.
struct CodeLine {
  std::string file, function;
  int64_t line = 0;
  std::string text() const;  // "/path/train.py:42 in load"
  bool operator==(const CodeLine&) const = default;
};

// `exception`: an exception that ended a main process of the job (sys.excepthook; the hook's
// own stop is not one). `script`: the last line of the job's script (sys.argv[0]) in its
// traceback; `raised_at`: the line that raised it. Either is empty when the traceback has none.
// `worker`: torch's re-raise in the main process of what a DataLoader worker raised, read from
// its message: the worker ("DataLoader worker process 0"), its last line ("ValueError: sample 5
// is corrupt") and the line that raised it there.
struct ExceptionRecord : RecordSource {
  std::string type, message;
  std::optional<CodeLine> script, raised_at;
  struct Worker {
    std::string process, error;
    std::optional<CodeLine> raised_at;
    std::optional<int> id() const;  // N of "DataLoader worker process N"
  };
  std::optional<Worker> worker;
  int64_t ns = 0;
  // The dataset item it was raised for ("index 5", "indices [4, 5]", "position 12 of the
  // worker's iterator"), from the matching `item_error` record (job_exception); empty if none.
  std::string item;
  // "ValueError: bad sample 17 (at /path/train.py:42 in main, raised at /path/data.py:9 in
  // load)", or "ValueError: sample 5 is corrupt in DataLoader worker process 0 for item index 5
  // (at ...)": the message's first line (the worker's error), the item, the script's line, else
  // the raising one, and the raising one where it is another.
  std::string text() const;
  nlohmann::json to_json() const;  // type, message, script, raised_at, worker, item, text
};

// `item_error`: the job's dataset raised for an item (in a worker, or in the main process with
// num_workers=0); torch's re-raise in the main process does not name the item, this does.
// `item`: "index 5", "indices [4, 5]" (a __getitems__ call) or "position 12 of the worker's
// iterator" (an iterable dataset).
struct ItemErrorRecord : RecordSource {
  int loader = 0, worker = -1;
  std::string item, type, message;
  int64_t ns = 0;
};

// `stuck`: a worker's fetch ran MMPROF_HOOK_STUCK_S or longer (the worker's flush thread saw it,
// once per fetch): its indices and the item __getitem__ was on (null when none had begun).
struct StuckRecord : RecordSource {
  int loader = 0, worker = -1, pid = 0;
  std::string indices, item;  // as the job's indices read: "[12, 13, 14, 15]", "13"
  int64_t since_ns = 0, ns = 0;
  // "worker 1 (pid 4242) of loader 0 has been on item 13 of its batch [12, 13, 14, 15] for 60 s"
  std::string text() const;
};

// `optim_step`: a torch.optim optimizer stepped (torch's global post-step hook); `opt` numbers
// the process's optimizers in the order they first stepped.
struct OptimStepRecord : RecordSource {
  int opt = 0;
  int64_t ns = 0;
};

// `optim_watch`: whether the process's optimizer steps are recorded (torch >= 2.0), and why not.
struct OptimWatchRecord : RecordSource {
  bool available = false;
  std::string why;
};

struct HookRecords {
  std::vector<ProcRecord> procs;  // every section's proc line; RecordSource::section indexes it
  std::vector<VersionsRecord> versions;
  std::vector<LoaderRecord> loaders;
  std::vector<EpochRecord> epochs;
  std::vector<BatchRecord> batches;
  std::vector<EpochEndRecord> epoch_ends;
  std::vector<FetchRecord> fetches;
  std::vector<GetitemRecord> getitems;
  std::vector<PinRecord> pins;
  std::vector<StopRecord> stops;
  std::vector<ErrorRecord> errors;
  std::vector<PartialRecord> partials;
  std::vector<ExceptionRecord> exceptions;
  std::vector<ItemErrorRecord> item_errors;
  std::vector<StuckRecord> stuck;
  std::vector<OptimStepRecord> optim_steps;
  std::vector<OptimWatchRecord> optim_watches;

  std::vector<int> pids;  // the files read, by pid (ascending)
  int64_t lines = 0;      // complete lines read (blank ones included)
  int64_t cut_lines = 0;  // lines cut short by a kill: skipped
  int64_t unknown = 0;    // records of a type this reader does not know: ignored
  std::map<std::string, int64_t> unknown_types;

  // No record at all (no file, or files without a line).
  bool empty() const noexcept;
  // The proc line of `section`, nullptr for -1 or out of range.
  const ProcRecord* section(int index) const noexcept;
};

// The exception that ended the job: the first one raised (a rank's before torchrun's, which
// reports its child's failure after it), with the item its dataset raised it for (the last
// `item_error` of the same type before it, from the worker torch names, or from the same main
// process); nullopt when none was recorded.
std::optional<ExceptionRecord> job_exception(const HookRecords& records);

// Reads every hook-<pid>.jsonl of `dir`. A missing directory gives no records. Throws InputError
// ("<file>:<line>: ...") for a complete line that is not a record of the protocol.
HookRecords read_hook_dir(const std::filesystem::path& dir);

// Incremental reading while the job runs: each poll() appends the lines completed since the
// previous one, in every hook file (files appear over time). It remembers an offset per file
// and reads only what was appended, never a line whose '\n' has not been written yet. Always
// pass the same HookRecords (sections are indices into it).
class HookTail {
 public:
  explicit HookTail(std::filesystem::path dir);

  // The number of complete lines read by this call. Throws InputError as read_hook_dir does;
  // the lines before the bad one are kept, and the next poll throws again at it.
  size_t poll(HookRecords& out);
  // Once the job is over: the unterminated end of each file was cut short by a kill; counts
  // each in out.cut_lines. poll() after finish() reads nothing more of those tails.
  void finish(HookRecords& out);

  size_t files() const noexcept { return files_.size(); }
  // Bytes of every file that poll() has consumed (complete lines only).
  uint64_t consumed_bytes() const noexcept;

 private:
  struct File {
    int pid = 0;
    uint64_t offset = 0;  // after the last complete line read
    int64_t line = 0;     // lines read so far (for error messages)
    int section = -1;
    bool finished = false;
  };
  std::filesystem::path dir_;
  std::map<int, File> files_;  // by pid
  std::string buffer_;
};

// What the hook says a process is, from its latest section's proc line.
struct ProcessIdentity {
  int pid = 0;
  bool worker = false;
  std::optional<int> rank;                         // from RANK (workers inherit it)
  std::optional<int> worker_id, loader, main_pid;  // workers only
  // "main process of rank 0" | "main process" | "DataLoader worker 1 of loader 0 (main pid 1234)"
  std::string label() const;
  nlohmann::json to_json() const;
};

// Nullopt for a pid without a hook file (not a Python process of the job, or one that never
// used a DataLoader).
std::optional<ProcessIdentity> identify(const HookRecords& records, int pid);

}  // namespace mmprof::external
