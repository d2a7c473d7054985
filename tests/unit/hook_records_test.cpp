// The external hook's records read back (docs/external-hook.md): every record type typed, a cut
// last line tolerated, a malformed complete line refused naming file and line, and HookTail
// reading only complete lines of files that grow and appear while the job runs.
#include "external/hook_records.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "mmprof/error.hpp"
#include "support/test_support.hpp"

namespace mmprof::external {
namespace {

namespace fs = std::filesystem;

const char* const kMainProc =
    R"({"t":"proc","pid":100,"ppid":1,"role":"main","rank":0,"local_rank":0,"world_size":2,)"
    R"("worker_id":null,"loader":null,"main_pid":null,"argv":["train.py","--lr","0.1"],"ns":1000})";
const char* const kVersions =
    R"({"t":"versions","python":"3.11.2","torch":"1.13.0a0","torchvision":"0.14.1a0","pil":"9.4.0",)"
    R"("pillow_simd":false,"numpy":"1.24.2","cuda":null,"cuda_available":false,)"
    R"("cuda_check":"not_compiled","ns":1100})";
const char* const kLoader =
    R"({"t":"loader","loader":0,"ns":1200,"origin":"/src/train.py:42","stack":["/src/train.py:42",)"
    R"("/src/train.py:90"],"config":{"num_workers":2,"batch_size":64,"prefetch_factor":2,)"
    R"("pin_memory":true,"persistent_workers":false,"in_order":null,"drop_last":false,"timeout":0,)"
    R"("multiprocessing_context":"default","sampler":"RandomSampler","batch_sampler":"BatchSampler",)"
    R"("dataset":"ImageFolder","dataset_len":1281167,"collate_fn":"default_collate",)"
    R"("worker_init_fn":null,"transform":null,"dataset_root":"/data"},)"
    R"("overrides":{"applied":{"num_workers":2},"rejected":{"in_order":"not a parameter"},)"
    R"("original":{"num_workers":8}},"follow":true})";
const char* const kEpoch =
    R"({"t":"epoch","loader":0,"epoch":0,"ns":2000,"ready_ns":2500,)"
    R"("iterator":"_MultiProcessingDataLoaderIter","worker_pids":[101,102],"reused":false,)"
    R"("pin_memory":true,"start_method":"fork"})";
const char* const kBatch =
    R"({"t":"batch","loader":0,"epoch":0,"i":0,"n":0,"call_ns":3000,"ret_ns":3500,"size":64,)"
    R"("bytes":38535680,"digest":"5e0d00112233445566778899aabbccdd","hook_ns":21000})";
const char* const kPin =
    R"j({"t":"pin","loader":0,"start_ns":3100,"end_ns":3200,"thread":"Thread-3 (_pin_memory_loop)"})j";
const char* const kEpochEnd = R"({"t":"epoch_end","loader":0,"epoch":0,"ns":9000,"batches":1})";
const char* const kStop = R"({"t":"stop","reason":"max_batches","loader":0,"batches":1,"ns":9500})";
const char* const kError =
    R"({"t":"error","where":"MMPROF_HOOK_MAX_BATCHES","message":"not an integer: 'x'","ns":1050})";
const char* const kWorkerProc =
    R"({"t":"proc","pid":101,"ppid":100,"role":"worker","rank":0,"local_rank":0,"world_size":2,)"
    R"("worker_id":1,"loader":0,"main_pid":100,"argv":["train.py"],"ns":2100})";
const char* const kFetch =
    R"({"t":"fetch","loader":0,"worker":1,"pid":101,"start_ns":2600,"end_ns":2900,"size":64,)"
    R"("collate_ns":1200})";
const char* const kGetitem =
    R"({"t":"getitem","loader":0,"worker":1,"index":1234,"start_ns":2610,"dur_ns":20150,"every":1})";
const char* const kGetitems =
    R"({"t":"getitem","loader":0,"worker":1,"index":"'a/b.jpg'","start_ns":2700,"dur_ns":500,)"
    R"("every":4,"items":8,"parts":{"decode":300,"Resize":120,"ToTensor":50}})";

std::string lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& l : v)
    out += l + "\n";
  return out;
}

void write(const fs::path& path, const std::string& text, bool append = false) {
  std::ofstream out(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out << text;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

class HookRecordsTest : public ::testing::Test {
 protected:
  fs::path file(int pid) const { return dir_.path() / ("hook-" + std::to_string(pid) + ".jsonl"); }
  test::TempDir dir_;
};

TEST_F(HookRecordsTest, EveryRecordTypeIsReadTypedWithThePidOfItsFile) {
  write(file(100),
        lines({kMainProc, kError, kVersions, kLoader, kEpoch, kBatch, kPin, kEpochEnd, kStop}));
  write(file(101), lines({kWorkerProc, kFetch, kGetitem, kGetitems}));
  const HookRecords r = read_hook_dir(dir_.path());
  EXPECT_EQ(r.pids, (std::vector<int>{100, 101}));
  EXPECT_EQ(r.lines, 13);
  EXPECT_EQ(r.cut_lines, 0);
  EXPECT_EQ(r.unknown, 0);

  ASSERT_EQ(r.procs.size(), 2u);
  const ProcRecord& main = r.procs[0];
  EXPECT_EQ(main.pid, 100);
  EXPECT_EQ(main.section, 0);
  EXPECT_EQ(main.ppid, 1);
  EXPECT_FALSE(main.is_worker());
  EXPECT_EQ(main.rank, 0);
  EXPECT_EQ(main.world_size, 2);
  EXPECT_FALSE(main.worker_id.has_value());
  EXPECT_EQ(main.argv, (std::vector<std::string>{"train.py", "--lr", "0.1"}));
  EXPECT_EQ(main.ns, 1000);
  const ProcRecord& worker = r.procs[1];
  EXPECT_EQ(worker.pid, 101);
  EXPECT_EQ(worker.section, 1);
  EXPECT_TRUE(worker.is_worker());
  EXPECT_EQ(worker.worker_id, 1);
  EXPECT_EQ(worker.loader, 0);
  EXPECT_EQ(worker.main_pid, 100);

  ASSERT_EQ(r.versions.size(), 1u);
  EXPECT_EQ(r.versions[0].pid, 100);
  EXPECT_EQ(r.versions[0].torch, "1.13.0a0");
  EXPECT_FALSE(r.versions[0].cuda.has_value());
  EXPECT_EQ(r.versions[0].cuda_check, "not_compiled");
  EXPECT_EQ(r.versions[0].to_json()["torchvision"], "0.14.1a0");
  EXPECT_TRUE(r.versions[0].to_json()["cuda"].is_null());

  ASSERT_EQ(r.loaders.size(), 1u);
  const LoaderRecord& l = r.loaders[0];
  EXPECT_EQ(l.pid, 100);
  EXPECT_EQ(l.section, 0);
  EXPECT_EQ(l.loader, 0);
  EXPECT_EQ(l.ns, 1200);
  EXPECT_EQ(l.origin, "/src/train.py:42");
  EXPECT_EQ(l.stack.size(), 2u);
  EXPECT_EQ(l.config.num_workers, 2);
  EXPECT_EQ(l.config.batch_size, 64);
  EXPECT_EQ(l.config.persistent_workers, false);
  EXPECT_FALSE(l.config.in_order.has_value());  // this torch has no in_order
  EXPECT_EQ(l.config.dataset, "ImageFolder");
  EXPECT_EQ(l.config.dataset_len, 1281167);
  EXPECT_EQ(l.config.raw["dataset_root"], "/data");
  EXPECT_EQ(l.applied["num_workers"], 2);
  EXPECT_EQ(l.rejected.at("in_order"), "not a parameter");
  EXPECT_EQ(l.original["num_workers"], 8);
  EXPECT_TRUE(l.follow);

  ASSERT_EQ(r.epochs.size(), 1u);
  EXPECT_EQ(r.epochs[0].ready_ns, 2500);
  EXPECT_EQ(r.epochs[0].worker_pids, (std::vector<int>{101, 102}));
  EXPECT_EQ(r.epochs[0].start_method, "fork");
  EXPECT_EQ(r.epochs[0].pin_memory, true);

  ASSERT_EQ(r.batches.size(), 1u);
  const BatchRecord& b = r.batches[0];
  EXPECT_EQ(b.pid, 100);
  EXPECT_EQ(b.call_ns, 3000);
  EXPECT_EQ(b.ret_ns, 3500);
  EXPECT_EQ(b.size, 64);
  EXPECT_EQ(b.bytes, 38535680u);
  EXPECT_EQ(b.digest, "5e0d00112233445566778899aabbccdd");
  EXPECT_EQ(b.hook_ns, 21000);

  ASSERT_EQ(r.pins.size(), 1u);
  EXPECT_EQ(r.pins[0].end_ns - r.pins[0].start_ns, 100);
  EXPECT_EQ(r.pins[0].thread, "Thread-3 (_pin_memory_loop)");
  ASSERT_EQ(r.epoch_ends.size(), 1u);
  EXPECT_EQ(r.epoch_ends[0].ns, 9000);
  EXPECT_EQ(r.epoch_ends[0].batches, 1);
  EXPECT_FALSE(r.epoch_ends[0].call_ns.has_value());
  ASSERT_EQ(r.stops.size(), 1u);
  EXPECT_EQ(r.stops[0].reason, "max_batches");
  EXPECT_EQ(r.stops[0].ns, 9500);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].where, "MMPROF_HOOK_MAX_BATCHES");

  ASSERT_EQ(r.fetches.size(), 1u);
  const FetchRecord& f = r.fetches[0];
  EXPECT_EQ(f.pid, 101);
  EXPECT_EQ(f.section, 1);
  EXPECT_EQ(f.worker, 1);
  EXPECT_EQ(f.process, 101);
  EXPECT_EQ(f.end_ns - f.start_ns, 300);
  EXPECT_EQ(f.collate_ns, 1200);
  ASSERT_EQ(r.getitems.size(), 2u);
  EXPECT_EQ(r.getitems[0].index, "1234");
  EXPECT_EQ(r.getitems[0].dur_ns, 20150);
  EXPECT_FALSE(r.getitems[0].items.has_value());
  EXPECT_EQ(r.getitems[1].index, "'a/b.jpg'");  // a non-integer index: the hook's text
  EXPECT_EQ(r.getitems[1].every, 4);
  EXPECT_EQ(r.getitems[1].items, 8);
  EXPECT_TRUE(r.getitems[0].parts.empty());
  EXPECT_EQ(r.getitems[1].parts, (std::vector<std::pair<std::string, int64_t>>{
                                     {"Resize", 120}, {"ToTensor", 50}, {"decode", 300}}));
  EXPECT_FALSE(r.empty());
}

// The exception that ended the job: its text names the script's line and, for torch's re-raise
// of a worker's exception, the worker's own error and line; the first raised is the job's.
TEST_F(HookRecordsTest, TheJobsExceptionIsReadAndTheFirstRaisedIsTheJobs) {
  write(file(100),
        lines({kMainProc,
               R"({"t":"exception","type":"ValueError","message":"Caught ValueError in DataLoader )"
               R"(worker process 0.\nOriginal Traceback ...\nValueError: sample 5 is corrupt\n",)"
               R"("script":{"file":"/src/train.py","line":63,"function":"main"},)"
               R"("raised_at":{"file":"/torch/_utils.py","line":543,"function":"reraise"},)"
               R"("worker":{"process":"DataLoader worker process 0","error":"ValueError: sample )"
               R"(5 is corrupt","raised_at":{"file":"/src/data.py","line":9,"function":"load"}},)"
               R"("ns":5000})"}));
  write(file(200),
        lines({R"({"t":"proc","pid":200,"ppid":1,"role":"main","argv":["torchrun"],"ns":10})",
               R"({"t":"exception","type":"torch.distributed.elastic.ChildFailedError",)"
               R"("message":"train.py FAILED","script":null,"raised_at":{"file":"/bin/torchrun",)"
               R"("line":8,"function":"<module>"},"ns":7000})"}));
  // Worker 0 of pid 100 raised for item 5, after a worker 1 and another job's worker 0 did.
  const auto worker = [&](int pid, int id, int main_pid, const std::string& item_error) {
    write(file(pid), lines({fmt::format(R"({{"t":"proc","pid":{},"ppid":{},"role":"worker",)"
                                        R"("worker_id":{},"loader":0,"main_pid":{},"ns":1}})",
                                        pid, main_pid, id, main_pid),
                            item_error}));
  };
  worker(101, 1, 100,
         R"({"t":"item_error","loader":0,"worker":1,"index":3,"type":"ValueError",)"
         R"("message":"sample 3 is corrupt","ns":3000})");
  worker(111, 0, 110,
         R"({"t":"item_error","loader":0,"worker":0,"index":4,"type":"ValueError",)"
         R"("message":"sample 4 is corrupt","ns":3500})");
  worker(102, 0, 100,
         R"({"t":"item_error","loader":0,"worker":0,"index":5,"type":"ValueError",)"
         R"("message":"sample 5 is corrupt","ns":4000})");
  const HookRecords r = read_hook_dir(dir_.path());
  ASSERT_EQ(r.exceptions.size(), 2u);
  ASSERT_EQ(r.item_errors.size(), 3u);
  EXPECT_FALSE(r.empty());
  const auto first = job_exception(r);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->pid, 100);
  EXPECT_EQ(first->item, "index 5");
  EXPECT_EQ(first->text(),
            "ValueError: sample 5 is corrupt in DataLoader worker process 0 for item index 5 (at "
            "/src/train.py:63 in main, raised at /src/data.py:9 in load)");
  const nlohmann::json j = first->to_json();
  EXPECT_EQ(j["worker"]["raised_at"]["line"], 9);
  EXPECT_EQ(j["script"]["file"], "/src/train.py");
  EXPECT_EQ(j["item"], "index 5");
  EXPECT_EQ(r.exceptions[1].text(),
            "torch.distributed.elastic.ChildFailedError: train.py FAILED (at /bin/torchrun:8 in "
            "<module>)");

  ExceptionRecord plain;
  plain.type = "KeyError";
  plain.raised_at = plain.script = CodeLine{"/src/train.py", "main", 12};
  EXPECT_EQ(plain.text(), "KeyError (at /src/train.py:12 in main)");  // no message, one line
  EXPECT_FALSE(job_exception(HookRecords{}).has_value());

  // In the main process (num_workers=0): its own item error of the same type, an iterable's
  // position; one of another type is not it.
  HookRecords main_only;
  main_only.exceptions.push_back(plain);
  main_only.exceptions[0].pid = 7;
  main_only.exceptions[0].ns = 90;
  ItemErrorRecord other;
  other.pid = 7;
  other.type = "OSError";
  other.item = "index 1";
  other.ns = 10;
  main_only.item_errors.push_back(other);
  EXPECT_EQ(job_exception(main_only)->item, "");
  other.type = "KeyError";
  other.item = "position 12 of the dataset's iterator";
  main_only.item_errors.push_back(other);
  EXPECT_EQ(
      job_exception(main_only)->text(),
      "KeyError for item position 12 of the dataset's iterator (at /src/train.py:12 in main)");
  main_only.item_errors.back().pid = 8;  // another process's
  EXPECT_EQ(job_exception(main_only)->item, "");

  write(file(200), lines({kMainProc, R"({"t":"exception","type":"E","worker":"w"})"}));
  EXPECT_NE(error_of([&] { read_hook_dir(dir_.path()); }).find(":2: 'worker' is not an object"),
            std::string::npos);
}

TEST_F(HookRecordsTest, OptimizerStepsAndTheirWatchAreRead) {
  write(file(100),
        lines({kMainProc, R"({"t":"optim_watch","available":true,"why":null,"ns":10})",
               R"({"t":"optim_step","opt":0,"ns":20})", R"({"t":"optim_step","opt":1,"ns":30})"}));
  write(file(200), lines({R"({"t":"proc","pid":200,"ppid":1,"role":"main","ns":1})",
                          R"({"t":"optim_watch","available":false,"why":"old torch","ns":10})"}));
  const HookRecords r = read_hook_dir(dir_.path());
  ASSERT_EQ(r.optim_steps.size(), 2u);
  EXPECT_EQ(r.optim_steps[1].opt, 1);
  EXPECT_EQ(r.optim_steps[1].ns, 30);
  EXPECT_EQ(r.optim_steps[1].pid, 100);
  ASSERT_EQ(r.optim_watches.size(), 2u);
  EXPECT_TRUE(r.optim_watches[0].available);
  EXPECT_FALSE(r.optim_watches[1].available);
  EXPECT_EQ(r.optim_watches[1].why, "old torch");
  EXPECT_EQ(r.unknown, 0);

  write(file(200), lines({kMainProc, R"({"t":"optim_step","ns":5})"}));
  EXPECT_NE(error_of([&] { read_hook_dir(dir_.path()); }).find(":2: no field 'opt'"),
            std::string::npos);
}

TEST_F(HookRecordsTest, AMissingDirectoryIsNoRecords) {
  const HookRecords r = read_hook_dir(dir_.path() / "never-created");
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(r.pids.empty());
  EXPECT_TRUE(read_hook_dir(dir_.path()).empty());  // exists, no hook file
}

TEST_F(HookRecordsTest, OtherFileNamesAreNotRead) {
  write(dir_.path() / "hook-abc.jsonl", "garbage\n");
  write(dir_.path() / "notes.txt", "garbage\n");
  write(dir_.path() / "hook-100.jsonl.tmp", "garbage\n");
  write(file(100), lines({kMainProc}));
  const HookRecords r = read_hook_dir(dir_.path());
  EXPECT_EQ(r.pids, (std::vector<int>{100}));
  EXPECT_EQ(r.procs.size(), 1u);
}

TEST_F(HookRecordsTest, ALastLineCutShortByAKillIsSkippedAndCounted) {
  write(file(100), lines({kMainProc, kBatch}) + R"({"t":"batch","loader":0,"epoch":0,"i":1,"n)");
  const HookRecords r = read_hook_dir(dir_.path());
  EXPECT_EQ(r.batches.size(), 1u);
  EXPECT_EQ(r.cut_lines, 1);
  EXPECT_EQ(r.lines, 2);
}

TEST_F(HookRecordsTest, AMalformedCompleteLineIsRefusedNamingFileAndLine) {
  write(file(100), lines({kMainProc, kBatch, R"({"t":"batch","loader":0,"epo)", kEpochEnd}));
  const std::string e = error_of([&] { read_hook_dir(dir_.path()); });
  EXPECT_NE(e.find(file(100).string() + ":3: not valid JSON"), std::string::npos) << e;

  write(file(100),
        lines({kMainProc, R"({"t":"batch","loader":0,"epoch":0,"i":0,"n":0,"call_ns":"soon",)"
                          R"("ret_ns":2})"}));
  const std::string typed = error_of([&] { read_hook_dir(dir_.path()); });
  EXPECT_NE(typed.find(":2: 'call_ns' is not an integer"), std::string::npos) << typed;

  write(file(100), lines({kMainProc, R"({"t":"fetch","loader":0})"}));
  const std::string missing = error_of([&] { read_hook_dir(dir_.path()); });
  EXPECT_NE(missing.find(":2: no field 'worker'"), std::string::npos) << missing;

  write(file(100), lines({kMainProc, R"({"t":"getitem","loader":0,"worker":1,"index":1,)"
                                     R"("start_ns":2,"dur_ns":5,"parts":{"decode":-3}})"}));
  const std::string part = error_of([&] { read_hook_dir(dir_.path()); });
  EXPECT_NE(part.find(":2: part 'decode' is not a duration in nanoseconds"), std::string::npos)
      << part;

  write(file(100), lines({kMainProc, "[1,2]"}));
  EXPECT_NE(error_of([&] { read_hook_dir(dir_.path()); }).find(":2: not a JSON object"),
            std::string::npos);
}

TEST_F(HookRecordsTest, AnUnknownRecordTypeIsIgnoredAndCounted) {
  write(file(100), lines({kMainProc, R"({"t":"gpu_sample","util":0.5})", "", kBatch,
                          R"({"t":"gpu_sample","util":0.7})"}));
  const HookRecords r = read_hook_dir(dir_.path());
  EXPECT_EQ(r.unknown, 2);
  EXPECT_EQ(r.unknown_types.at("gpu_sample"), 2);
  EXPECT_EQ(r.batches.size(), 1u);
  EXPECT_EQ(r.lines, 5);  // the blank line is a line, and no record
}

// A recycled pid appends to the file of a process killed in the middle of a write: the new
// process's first write (its proc line) is glued to the cut record.
TEST_F(HookRecordsTest, ACutRecordGluedToARecycledPidsProcLineIsCountedAndTheSectionRead) {
  const std::string cut = R"({"t":"batch","loader":0,"epoch":0,"i":1,"n":1,"call)";
  write(file(100), lines({kMainProc, kBatch}) + cut + lines({kMainProc, kBatch}));
  const HookRecords r = read_hook_dir(dir_.path());
  EXPECT_EQ(r.cut_lines, 1);
  ASSERT_EQ(r.procs.size(), 2u);
  ASSERT_EQ(r.batches.size(), 2u);
  EXPECT_EQ(r.batches[0].section, 0);
  EXPECT_EQ(r.batches[1].section, 1);
}

// A spawn child that ran the script's module-level DataLoader as "main" and then became a worker:
// a second proc line starts the worker's section; the process is now a worker.
TEST_F(HookRecordsTest, ASecondProcLineStartsANewSectionAndIdentifyUsesTheLatest) {
  const std::string as_main =
      R"({"t":"proc","pid":101,"ppid":100,"role":"main","rank":null,"local_rank":null,)"
      R"("world_size":null,"worker_id":null,"loader":null,"main_pid":null,"argv":[],"ns":5})";
  write(file(101), lines({as_main, kLoader, kWorkerProc, kFetch}));
  write(file(100), lines({kMainProc}));
  const HookRecords r = read_hook_dir(dir_.path());
  ASSERT_EQ(r.procs.size(), 3u);
  ASSERT_EQ(r.loaders.size(), 1u);
  ASSERT_EQ(r.fetches.size(), 1u);
  EXPECT_FALSE(r.section(r.loaders[0].section)->is_worker());
  EXPECT_TRUE(r.section(r.fetches[0].section)->is_worker());
  EXPECT_EQ(r.section(-1), nullptr);
  EXPECT_EQ(r.section(3), nullptr);

  const auto w = identify(r, 101);
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(w->worker);
  EXPECT_EQ(w->label(), "DataLoader worker 1 of loader 0 (main pid 100, rank 0)");
  EXPECT_EQ(w->to_json()["role"], "worker");
  const auto m = identify(r, 100);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->label(), "main process of rank 0");
  EXPECT_FALSE(identify(r, 999).has_value());

  write(file(100), lines({R"({"t":"proc","pid":100,"ppid":1,"role":"main","ns":1})"}));
  const auto plain = identify(read_hook_dir(dir_.path()), 100);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->label(), "main process");
}

// A file written in two halves, the first ending in the middle of a line: the tail reads the
// complete lines, never the half line, and the rest once it is complete; nothing twice.
TEST_F(HookRecordsTest, HookTailReadsAFileWrittenInTwoHalvesWithoutParsingTheHalfLine) {
  const std::string text = lines({kMainProc, kLoader, kBatch, kEpochEnd});
  const size_t split = text.find(R"("call_ns")");  // inside the batch line
  ASSERT_NE(split, std::string::npos);
  write(file(100), text.substr(0, split));
  HookRecords r;
  HookTail tail(dir_.path());
  EXPECT_EQ(tail.poll(r), 2u);  // proc and loader; the batch's half is not parsed (it would throw)
  EXPECT_EQ(r.procs.size(), 1u);
  EXPECT_EQ(r.loaders.size(), 1u);
  EXPECT_TRUE(r.batches.empty());
  EXPECT_EQ(tail.consumed_bytes(), text.find(R"({"t":"batch")"));
  EXPECT_EQ(tail.poll(r), 0u);  // nothing new

  write(file(100), text.substr(split), true);
  EXPECT_EQ(tail.poll(r), 2u);
  EXPECT_EQ(r.batches.size(), 1u);
  EXPECT_EQ(r.batches[0].call_ns, 3000);
  EXPECT_EQ(r.epoch_ends.size(), 1u);
  EXPECT_EQ(r.procs.size(), 1u);
  EXPECT_EQ(r.lines, 4);
  EXPECT_EQ(tail.consumed_bytes(), text.size());
  tail.finish(r);
  EXPECT_EQ(r.cut_lines, 0);
}

// Split at every byte of a line: whatever the split, no poll sees a partial line.
TEST_F(HookRecordsTest, HookTailNeverParsesAMidLineSplit) {
  const std::string line = lines({kBatch});
  for (size_t split = 1; split < line.size(); ++split) {
    write(file(100), lines({kMainProc}) + line.substr(0, split));
    HookRecords r;
    HookTail tail(dir_.path());
    ASSERT_EQ(tail.poll(r), 1u) << split;
    ASSERT_TRUE(r.batches.empty()) << split;
    write(file(100), line.substr(split), true);
    ASSERT_EQ(tail.poll(r), 1u) << split;
    ASSERT_EQ(r.batches.size(), 1u) << split;
  }
}

// Cheap: a poll reads from the remembered offset, not the whole file again. Bytes already
// consumed are overwritten with garbage: a re-read would refuse them.
TEST_F(HookRecordsTest, HookTailReadsOnlyWhatWasAppendedAndFilesThatAppearLater) {
  const std::string first = lines({kMainProc, kBatch});
  write(file(100), first);
  HookRecords r;
  HookTail tail(dir_.path());
  EXPECT_EQ(tail.poll(r), 2u);
  EXPECT_EQ(tail.files(), 1u);
  {
    std::fstream f(file(100), std::ios::binary | std::ios::in | std::ios::out);
    f << std::string(first.size() - 1, 'x');  // same length, still ends in '\n'
  }
  write(file(100), lines({kEpochEnd}), true);
  write(file(101), lines({kWorkerProc, kFetch}));  // a worker started meanwhile
  EXPECT_EQ(tail.poll(r), 3u);
  EXPECT_EQ(tail.files(), 2u);
  EXPECT_EQ(r.pids, (std::vector<int>{100, 101}));
  EXPECT_EQ(r.batches.size(), 1u);
  EXPECT_EQ(r.epoch_ends.size(), 1u);
  EXPECT_EQ(r.fetches.size(), 1u);
  EXPECT_EQ(r.fetches[0].section, 1);
}

TEST_F(HookRecordsTest, HookTailKeepsTheLinesBeforeABadOneAndFinishCountsCutTails) {
  write(file(100), lines({kMainProc, kBatch, "{oops", kEpochEnd}));
  HookRecords r;
  HookTail tail(dir_.path());
  const std::string e = error_of([&] { tail.poll(r); });
  EXPECT_NE(e.find(":3: not valid JSON"), std::string::npos) << e;
  EXPECT_EQ(r.batches.size(), 1u);
  EXPECT_NE(error_of([&] { tail.poll(r); }).find(":3:"), std::string::npos);  // again at it
  EXPECT_EQ(r.batches.size(), 1u);                                            // not read twice

  write(file(101), lines({kWorkerProc}) + R"({"t":"fetch","lo)");
  HookRecords r2;
  HookTail tail2(dir_.path());
  write(file(100), lines({kMainProc}));
  EXPECT_EQ(tail2.poll(r2), 2u);
  tail2.finish(r2);
  EXPECT_EQ(r2.cut_lines, 1);
  write(file(101), "ad\":0}\n", true);
  EXPECT_EQ(tail2.poll(r2), 0u);  // finished: the tail was counted as cut, not read later
}

}  // namespace
}  // namespace mmprof::external
