// `mmprof trace` end to end: trace.json parses, follows the trace-event format the way
// ui.perfetto.dev's JSON importer reads it (named tracks, properly nested spans, arrows whose ends
// bind to the slices they belong to, ids that pair up), binds its arrows the same way in Chrome
// DevTools' own trace engine, and agrees with the run directory it sits in (steps.csv,
// stages.csv, summary.json). Structure only, no speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

using test::read_json;

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kSteps = 5, kBatch = 4;

using Track = std::pair<int64_t, int64_t>;  // pid, tid

// A span in integer nanoseconds since the origin: adjacent spans (a read ending where its decode
// begins) must compare equal, which sums of microsecond doubles do not.
struct Span {
  int64_t ts = 0, end = 0;
  const json* event = nullptr;
};

int64_t rel_ns(const json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

// ts back to CLOCK_MONOTONIC nanoseconds, the clock of steps.csv and stages.csv.
int64_t to_ns(const json& ts, int64_t origin) {
  return origin + rel_ns(ts);
}

// The trace, indexed the way the checks need it.
struct Trace {
  json doc;
  int64_t origin = 0;
  std::map<Track, std::vector<Span>> spans;  // "X" events by thread, in file order
  std::map<std::pair<std::string, uint64_t>, std::vector<const json*>> flows;
  std::map<Track, std::string> thread_names;
  std::map<int64_t, std::string> process_names;

  explicit Trace(const fs::path& file) : doc(read_json(file)) {
    origin = doc["otherData"]["origin_monotonic_ns"].get<int64_t>();
    for (const auto& e : doc["traceEvents"]) {
      const Track track{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()};
      const std::string ph = e["ph"];
      if (ph == "X") {
        const int64_t ts = rel_ns(e["ts"]);
        spans[track].push_back({ts, ts + rel_ns(e["dur"]), &e});
      } else if (ph == "s" || ph == "f") {
        flows[{e["name"], e["id"].get<uint64_t>()}].push_back(&e);  // in file order
      } else if (ph == "M" && e["name"] == "thread_name") {
        EXPECT_TRUE(thread_names.emplace(track, e["args"]["name"]).second) << e;
      } else if (ph == "M" && e["name"] == "process_name") {
        EXPECT_TRUE(process_names.emplace(track.first, e["args"]["name"]).second) << e;
      }
    }
  }

  std::vector<const json*> named(const std::string& ph, const std::string& name) const {
    std::vector<const json*> out;
    for (const auto& e : doc["traceEvents"])
      if (e["ph"] == ph && e.value("name", "") == name) out.push_back(&e);
    return out;
  }

  // The slice Perfetto binds a flow event to: the innermost one open at ts on the event's thread.
  // Its importer opens the spans that start at ts (longest first) before it reads the other
  // events at ts, and closes a span at its end, so open means ts <= t < end; innermost is the
  // latest start, then the shortest.
  const json* perfetto_binding(const json& flow_end) const {
    const auto it = spans.find({flow_end["pid"].get<int64_t>(), flow_end["tid"].get<int64_t>()});
    if (it == spans.end()) return nullptr;
    const int64_t ts = rel_ns(flow_end["ts"]);
    const Span* best = nullptr;
    for (const auto& s : it->second) {
      if (s.ts > ts || ts >= s.end) continue;
      if (best == nullptr || s.ts > best->ts || (s.ts == best->ts && s.end < best->end)) best = &s;
    }
    return best == nullptr ? nullptr : best->event;
  }

  // The step span on the main thread that contains the span `inner`.
  const json* enclosing_step(const json& inner) const {
    const Track track{inner["pid"].get<int64_t>(), inner["tid"].get<int64_t>()};
    const int64_t ts = rel_ns(inner["ts"]), end = ts + rel_ns(inner["dur"]);
    for (const auto& s : spans.at(track)) {
      if ((*s.event)["name"] == "step" && s.ts <= ts && end <= s.end) return s.event;
    }
    return nullptr;
  }

  // The slice Chrome DevTools binds a flow event to: the first one in the file with the same ts,
  // pid, tid and cat (its FlowsHandler).
  const json* devtools_binding(const json& flow_end) const {
    const auto it = spans.find({flow_end["pid"].get<int64_t>(), flow_end["tid"].get<int64_t>()});
    if (it == spans.end()) return nullptr;
    for (const auto& s : it->second) {
      if (s.ts == rel_ns(flow_end["ts"]) && (*s.event)["cat"] == flow_end["cat"]) return s.event;
    }
    return nullptr;
  }
};

// What Perfetto's importer needs: the object form, every event with ph/pid/tid, spans that nest
// on each thread (a span starts after its predecessor ends, or inside it and ends inside it),
// each kind of span in time order per thread, and flow ids that pair one "s" with one "f", both
// inside a slice of their thread.
void check_format(const Trace& t) {
  ASSERT_TRUE(t.doc["traceEvents"].is_array());
  EXPECT_EQ(t.doc["displayTimeUnit"], "ms");
  EXPECT_EQ(t.doc["otherData"]["schema"], "mmprof.trace/1");
  EXPECT_EQ(t.doc["otherData"]["clock"], "CLOCK_MONOTONIC");
  for (const auto& e : t.doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid")) << e;
    if (e["ph"] == "X") {
      ASSERT_GE(e["dur"].get<double>(), 0.0) << e;
    }
    if (e["ph"] == "C") {
      ASSERT_TRUE(e["args"].is_object() && !e["args"].empty()) << e;
    }
  }
  for (const auto& [track, spans] : t.spans) {
    std::map<std::string, int64_t> last_ts;
    for (const auto& s : spans) {
      const std::string name = (*s.event)["name"];
      EXPECT_GE(s.ts, last_ts[name]) << "out of order on its thread: " << *s.event;
      last_ts[name] = s.ts;
    }
    std::vector<Span> sorted = spans;
    std::sort(sorted.begin(), sorted.end(), [](const Span& a, const Span& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
    });
    std::vector<const Span*> open;
    for (const auto& s : sorted) {
      while (!open.empty() && open.back()->end <= s.ts)
        open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(s.end, open.back()->end)
            << *s.event << " overlaps " << *open.back()->event << " without nesting";
      }
      open.push_back(&s);
    }
  }
  // Arrows: one "s" then one "f" per id, in the file and in time (both viewers drop an end they
  // read before its start), each binding to the same slice in Perfetto as in DevTools.
  for (const auto& [id, ends] : t.flows) {
    ASSERT_EQ(ends.size(), 2u) << "flow " << id.first << " " << id.second;
    EXPECT_EQ((*ends[0])["ph"], "s");
    EXPECT_EQ((*ends[1])["ph"], "f");
    EXPECT_LE(rel_ns((*ends[0])["ts"]), rel_ns((*ends[1])["ts"])) << *ends[0];
    for (const json* e : ends) {
      EXPECT_EQ((*e)["bp"], "e");
      const json* bound = t.perfetto_binding(*e);
      EXPECT_NE(bound, nullptr) << "flow end outside every slice: " << *e;
      EXPECT_EQ(bound, t.devtools_binding(*e))
          << "Perfetto and DevTools bind " << *e << " to different slices";
    }
  }
}

struct Expect {
  std::string mode;  // process | thread
  int workers = 2;   // per phase; the pipeline and the end-to-end phase fork their own
};

// Tracks: main named, every worker named after its phase ("pipeline · worker 0") with no two
// tracks sharing a name, every worker event inside its worker's lifetime.
void check_tracks(const Trace& t, const Expect& x) {
  const auto main_pid = t.named("X", "step").at(0)->at("pid").get<int64_t>();
  EXPECT_EQ(t.process_names.at(main_pid), "mmprof main");
  std::set<std::string> worker_names;
  for (const auto& [track, name] : t.thread_names) {
    if (name.find("worker ") == std::string::npos) continue;
    EXPECT_TRUE(name.rfind("pipeline \u00b7 worker ", 0) == 0 ||
                name.rfind("end_to_end \u00b7 worker ", 0) == 0)
        << name;
    EXPECT_TRUE(worker_names.insert(name).second) << "two tracks named " << name;
    EXPECT_EQ(track.first != main_pid, x.mode == "process") << name;
    if (x.mode == "process") {
      EXPECT_EQ(t.process_names.at(track.first), name);
    }
    const auto& spans = t.spans.at(track);
    std::vector<const Span*> lives;
    for (const auto& s : spans)
      if ((*s.event)["name"] == "worker") lives.push_back(&s);
    ASSERT_FALSE(lives.empty()) << name << " has no lifetime span";
    for (const auto& s : spans) {
      const bool inside = std::any_of(lives.begin(), lives.end(), [&](const Span* l) {
        return l->ts <= s.ts && s.end <= l->end;
      });
      EXPECT_TRUE(inside) << *s.event << " outside the lifetime of " << name;
    }
  }
  EXPECT_EQ(worker_names.size(), static_cast<size_t>(2 * x.workers));
}

// Steps: one span per steps.csv row at the same nanosecond; the warm-up steps are flagged.
void check_steps(const Trace& t, const fs::path& run) {
  const test::Csv steps = test::read_csv(run / "steps.csv");
  std::map<std::pair<std::string, int64_t>, int64_t> traced;  // (phase, step) -> t_start_ns
  for (const json* e : t.named("X", "step")) {
    const json& a = (*e)["args"];
    if (a["warmup"] == true) continue;
    EXPECT_TRUE(traced
                    .emplace(std::pair{a["phase"].get<std::string>(), a["step"].get<int64_t>()},
                             to_ns((*e)["ts"], t.origin))
                    .second)
        << *e;
  }
  ASSERT_EQ(traced.size(), steps.rows.size());
  const size_t phase = steps.column("phase"), step = steps.column("step"),
               t_start = steps.column("t_start_ns");
  for (const auto& row : steps.rows) {
    const auto it = traced.find({row[phase], std::stoll(row[step])});
    ASSERT_NE(it, traced.end()) << row[phase] << " step " << row[step];
    EXPECT_EQ(it->second, std::stoll(row[t_start])) << row[phase] << " step " << row[step];
  }
}

// A batch's identity in the trace: batch ids restart with every loader of the run.
std::pair<int64_t, int64_t> loader_batch(const json& args) {
  return {args["loader"].get<int64_t>(), args["batch"].get<int64_t>()};
}

// Arrows join what belongs together: a batch to each of its samples' collate spans, and to the
// consumer's wait that received it (of the same loader and batch).
// Samples: the read spans of the batches that measured steps consumed (found by following the
// arrows from each batch to its wait, inside a step) are exactly stages.csv's rows: same keys,
// same start, same read time.
void check_samples(const Trace& t, const fs::path& run) {
  std::set<std::pair<int64_t, int64_t>> measured;  // (loader, batch)
  for (const auto& [id, ends] : t.flows) {
    std::map<std::string, const json*> bound;  // slice name -> slice
    for (const json* e : ends) {
      const json* slice = t.perfetto_binding(*e);
      ASSERT_NE(slice, nullptr) << *e;
      bound[(*slice)["name"]] = slice;
    }
    const std::string other = id.first == "batch" ? "wait" : "collate";
    ASSERT_EQ(bound.size(), 2u) << id.first << " " << id.second;
    ASSERT_TRUE(bound.count("batch") != 0 && bound.count(other) != 0) << id.first;
    EXPECT_EQ(loader_batch(bound["batch"]->at("args")), loader_batch(bound[other]->at("args")));
    if (id.first != "batch") continue;
    const json* step = t.enclosing_step(*bound["wait"]);
    ASSERT_NE(step, nullptr) << "a wait outside every step: " << *bound["wait"];
    if ((*step)["args"]["warmup"] == false)
      measured.insert(loader_batch(bound["batch"]->at("args")));
  }
  const test::Csv stages = test::read_csv(run / "stages.csv");
  const size_t key = stages.column("key"), t_start = stages.column("t_start_ns"),
               read_ms = stages.column("read_ms");
  std::map<std::pair<std::string, int64_t>, double> read_spans;
  for (const json* e : t.named("X", "read")) {
    const json& a = (*e)["args"];
    if (a.contains("failed") || measured.count(loader_batch(a)) == 0) continue;
    read_spans[{a["key"].get<std::string>(), to_ns((*e)["ts"], t.origin)}] =
        (*e)["dur"].get<double>() / 1000.0;
  }
  ASSERT_EQ(read_spans.size(), stages.rows.size());
  for (const auto& row : stages.rows) {
    const auto it = read_spans.find({row[key], std::stoll(row[t_start])});
    ASSERT_NE(it, read_spans.end()) << "no read span for " << row[key] << " at " << row[t_start];
    EXPECT_NEAR(it->second, std::stod(row[read_ms]), 1e-4) << row[key];  // CSV has 4 decimals
  }
}

// Where scripts/fetch-trace-engine put DevTools' trace engine.
fs::path trace_engine_dir() {
  if (const char* dir = std::getenv("MMPROF_TRACE_ENGINE")) return dir;
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const fs::path base =
      cache != nullptr ? fs::path(cache) : fs::path(std::getenv("HOME")) / ".cache";
  return base / "mmprof" / "trace-engine-0.0.65";
}

// The arrows as Chrome DevTools binds them, by its own trace engine (@paulirish/trace_engine under
// Node.js, tests/support/devtools-flows.mjs): every flow event read, one flow per arrow, and each
// flow between the two slices the checks above found (Perfetto's binding).
void check_devtools(const Trace& t, const fs::path& trace_json) {
  ASSERT_EQ(test::run_command("command -v node").exit_code, 0)
      << "node is missing: scripts/install-deps installs nodejs";
  const fs::path engine = trace_engine_dir();
  ASSERT_TRUE(fs::exists(engine / ".complete"))
      << "DevTools' trace engine is not in " << engine << ": scripts/install-deps fetches it";
  const fs::path out = trace_json.parent_path() / "devtools-flows.json";
  const auto r = test::run_command(
      "node " + test::shell_quote(test::source_dir() / "tests/support/devtools-flows.mjs") + " " +
      test::shell_quote(engine) + " " + test::shell_quote(trace_json) + " > " +
      test::shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json d = read_json(out);
  EXPECT_EQ(d["flow_events"].get<size_t>(), 2 * t.flows.size());
  using SliceId = std::tuple<std::string, int64_t, int64_t, int64_t>;  // name, pid, tid, ts
  const auto id_of = [](const json& e) {
    return SliceId{e["name"], e["pid"].get<int64_t>(), e["tid"].get<int64_t>(), rel_ns(e["ts"])};
  };
  std::set<std::set<SliceId>> devtools, perfetto;
  for (const auto& flow : d["flows"]) {
    std::set<SliceId> slices;
    for (const auto& e : flow)
      slices.insert(id_of(e));
    devtools.insert(slices);
  }
  for (const auto& [id, ends] : t.flows) {
    std::set<SliceId> slices;
    for (const json* e : ends)
      if (const json* slice = t.perfetto_binding(*e)) slices.insert(id_of(*slice));
    perfetto.insert(slices);
  }
  EXPECT_EQ(d["flows"].size(), t.flows.size());
  EXPECT_EQ(devtools, perfetto);
}

// Memory counters: one per resources.csv row with an RSS (same instant, same pid, same value);
// in process mode the workers are among them.
void check_memory(const Trace& t, const fs::path& run, const Expect& x) {
  std::map<std::pair<int64_t, int64_t>, double> traced;  // (t_ns, pid) -> rss kB
  for (const json* e : t.named("C", "memory")) {
    traced[{to_ns((*e)["ts"], t.origin), (*e)["pid"].get<int64_t>()}] =
        (*e)["args"]["rss_mib"].get<double>() * 1024;
  }
  const test::Csv res = test::read_csv(run / "resources.csv");
  const size_t t_ns = res.column("t_ns"), pid = res.column("pid"), rss = res.column("rss_kb");
  size_t rows = 0;
  std::set<int64_t> pids;
  for (const auto& row : res.rows) {
    if (row[rss].empty()) continue;
    ++rows;
    pids.insert(std::stoll(row[pid]));
    const auto it = traced.find({std::stoll(row[t_ns]), std::stoll(row[pid])});
    ASSERT_NE(it, traced.end()) << "no memory counter for pid " << row[pid] << " at " << row[t_ns];
    EXPECT_NEAR(it->second, std::stod(row[rss]), 0.52);  // written in MB with 3 decimals
  }
  EXPECT_EQ(traced.size(), rows);
  EXPECT_GE(pids.size(), x.mode == "process" ? 1u + x.workers : 1u);  // main (+ each worker)
}

void check_counters_and_instants(const Trace& t) {
  EXPECT_FALSE(t.named("C", "queue").empty());
  for (const char* name : {"phase pipeline", "phase compute", "phase end_to_end", "epoch 0",
                           "measured window begin pipeline", "measured window end end_to_end"}) {
    EXPECT_FALSE(t.named("i", name).empty()) << name;
  }
  for (const char* name : {"wait", "compute", "batch", "collate"})
    EXPECT_FALSE(t.named("X", name).empty()) << name;
}

class TraceCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    gen_ = std::make_unique<test::CommandResult>(test::run_mmprof(
        "gen --out " + test::shell_quote(dir_->path() / "ds") +
        " --images 12 --videos 2 --video-max-s 2 --video-max-height 360 --layout files --seed 5"));
  }
  static void TearDownTestSuite() {
    gen_.reset();
    dir_.reset();
  }
  void SetUp() override { ASSERT_EQ(gen_->exit_code, 0) << gen_->output; }

  static fs::path data() { return dir_->path() / "ds" / "files"; }

  static test::CommandResult trace(const fs::path& data, const fs::path& out,
                                   const std::string& extra) {
    return test::run_mmprof("trace --data " + test::shell_quote(data) +
                            " --set loader.batch_size=" + std::to_string(kBatch) +
                            " --set phases.steps=" + std::to_string(kSteps) +
                            " --set phases.warmup_steps=1 --set step.kind=sleep --set step.ms=5"
                            " --set metrics.interval_ms=20 --json " +
                            extra + " --out " + test::shell_quote(out));
  }

  void check_run(const Expect& x, const std::string& extra) {
    const fs::path out = dir_->path() / ("run-" + x.mode);
    const auto r = trace(data(), out, "--set loader.worker_mode=" + x.mode + " " + extra);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_TRUE(fs::exists(out / "trace.json"));
    EXPECT_FALSE(fs::exists(out / "trace.json.tmp"));
    const Trace t(out / "trace.json");
    check_format(t);
    check_tracks(t, x);
    check_steps(t, out);
    check_samples(t, out);
    check_devtools(t, out / "trace.json");
    check_memory(t, out, x);
    check_counters_and_instants(t);
    const json s = read_json(out / "summary.json");
    EXPECT_EQ(s["status"], "complete");
    EXPECT_EQ(s["trace"]["dropped_events"], 0);
    EXPECT_EQ(s["trace"]["events"], t.doc["traceEvents"].size());
    EXPECT_EQ(s["trace"]["recorded_events"], t.doc["otherData"]["recorded_events"]);
    EXPECT_EQ(s["trace"]["flows"].get<size_t>(), t.flows.size());
  }

  static std::unique_ptr<test::TempDir> dir_;
  static std::unique_ptr<test::CommandResult> gen_;
};

std::unique_ptr<test::TempDir> TraceCliTest::dir_;
std::unique_ptr<test::CommandResult> TraceCliTest::gen_;

TEST_F(TraceCliTest, ProcessWorkersTraceAgreesWithTheRunDirectory) {
  check_run({"process", 2}, "--set loader.num_workers=2");
}

TEST_F(TraceCliTest, ThreadWorkersTraceAgreesWithTheRunDirectory) {
  check_run({"thread", 2}, "--set loader.num_workers=2");
}

TEST_F(TraceCliTest, CapAndSamplingBoundTheTraceAndSaySo) {
  const fs::path out = dir_->path() / "run-capped";
  const auto r = trace(data(), out, "--set trace.sample_every=2 --set trace.max_events=150");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Trace t(out / "trace.json");
  check_format(t);  // a capped trace is still whole: no arrow loses an end
  const json s = read_json(out / "summary.json");
  const uint64_t dropped = s["trace"]["dropped_events"].get<uint64_t>();
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(t.doc["otherData"]["dropped_events"].get<uint64_t>(), dropped);
  EXPECT_LE(s["trace"]["recorded_events"].get<uint64_t>(), 150u);
  EXPECT_EQ(s["trace"]["max_events"], 150);
  EXPECT_EQ(s["trace"]["sample_every"], 2);
  for (const json* e : t.named("X", "read"))
    EXPECT_EQ((*e)["args"]["batch"].get<int64_t>() % 2, 0) << *e;
}

TEST_F(TraceCliTest, AFailedRunKeepsItsTrace) {
  const fs::path bad = dir_->path() / "bad";
  fs::copy(data(), bad);
  test::write_bytes(bad / "0000-bad.jpg", std::vector<uint8_t>(300, 0x5a));
  const fs::path out = dir_->path() / "run-failed";
  const auto r = trace(bad, out, "--set loader.shuffle=false --set loader.on_error=fail");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const Trace t(out / "trace.json");
  check_format(t);
  EXPECT_EQ(read_json(out / "summary.json")["status"], "failed");
  EXPECT_TRUE(read_json(out / "summary.json").contains("trace"));
  bool failed_sample = false;
  for (const json* e : t.named("X", "read"))
    failed_sample |= (*e)["args"]["key"] == "0000-bad" && (*e)["args"]["failed"] == "decode";
  EXPECT_TRUE(failed_sample);
}

TEST_F(TraceCliTest, BadTraceOptionExitsTwoNamingIt) {
  const auto r = trace(data(), dir_->path() / "run-bad-option", "--set trace.sample_every=0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("trace.sample_every"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace mmprof
