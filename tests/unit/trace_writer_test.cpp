// trace.json from fabricated records: structure matched exactly (names, tracks, arrows, counters,
// the GPU tracks, the cap), parsed back with nlohmann-json.
#include "trace/trace_writer.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "trace/tracer.hpp"

namespace mmprof::trace {
namespace {

using nlohmann::json;

constexpr int64_t kOrigin = 1'000'000;
constexpr int kMainPid = 100, kMainTid = 100, kWorkerPid = 4242, kThreadTid = 101;

TraceRecord rec(EventName name, int64_t t, int64_t dur = 0, int64_t a = 0, int64_t b = 0,
                int64_t c = 0, int64_t d = 0) {
  TraceRecord r;
  r.name = name;
  r.t_ns = kOrigin + t;
  r.dur_ns = dur;
  r.a = a;
  r.b = b;
  r.c = c;
  r.d = d;
  r.generation = 1;
  r.published = 1;
  return r;
}

const auto kPipeline = static_cast<int64_t>(Phase::pipeline);

struct Fixture {
  std::vector<TraceRecord> main = {
      rec(EventName::loader_start, 100, 0, 2),
      rec(EventName::phase, 200, 0, kPipeline),
      rec(EventName::wait, 10'000, 10'000, 0),
      rec(EventName::consumed, 25'000, 0, 0, 0),
      rec(EventName::queue, 30'000, 0, 1, 2),
      rec(EventName::step, 5'000, 35'000, kPipeline, 0, 0, 2),
      rec(EventName::consumed, 45'000, 0, 7, 0),  // a batch no worker recorded (capped)
      rec(EventName::step, 41'000, 9'000, kPipeline, 1, 1, 0),
  };
  std::vector<TraceRecord> sampler = {
      rec(EventName::memory, 3'000, 0, kMainPid, 2048, 1024, -1),
      rec(EventName::memory, 3'000, 0, kWorkerPid, 1024, -1, 0),
  };
  std::vector<TraceRecord> worker0 = {
      rec(EventName::worker_start, 500, 0, kWorkerPid, kWorkerPid),
      rec(EventName::read, 1'000, 1'000, 0, 3),
      rec(EventName::decode, 2'000, 2'000, 0, 3),
      rec(EventName::augment, 4'000, 1'000, 0, 3),
      rec(EventName::collate, 5'000, 100, 0, 3),
      rec(EventName::read, 5'200, 300, 0, 4),
      rec(EventName::collate, 6'000, 100, 0, 4),
      rec(EventName::batch, 900, 6'100, 0, 0, 2, 0),
      rec(EventName::batch, 8'000, 1'000, 1, 0, 1, 0),  // prefetched, never consumed
      rec(EventName::worker_stop, 60'000, 0, kWorkerPid, kWorkerPid),
  };
  std::vector<TraceRecord> worker1 = {
      rec(EventName::worker_start, 600, 0, kMainPid, kThreadTid),
      rec(EventName::read, 7'000, 500, 2, 5, 2),  // its decode failed
  };                                              // no stop: the worker was killed
  std::vector<gpu::GpuEvent> gpu;

  Fixture() {
    gpu::GpuEvent k;
    k.kind = gpu::GpuEventKind::kernel;
    k.start_ns = kOrigin + 30'000;
    k.end_ns = kOrigin + 35'000;
    k.stream = 7;
    k.name = "gemm";
    gpu::GpuEvent c;
    c.kind = gpu::GpuEventKind::memcpy;
    c.copy = gpu::CopyKind::h2d;
    c.pinned_host = true;
    c.bytes = 4096;
    c.start_ns = kOrigin + 26'000;
    c.end_ns = kOrigin + 27'000;
    c.stream = 8;
    c.name = "memcpy HtoD";
    gpu = {k, c};
  }

  TraceSource source() const {
    TraceSource s;
    s.regions = {main, sampler, worker0, worker1};
    s.dropped = 3;
    s.max_events = 20;
    s.sample_every = 1;
    s.origin_ns = kOrigin;
    s.main_pid = kMainPid;
    s.main_tid = kMainTid;
    s.sample_key = [](uint32_t i) { return fmt::format("k{}", i); };
    s.gpu_events = gpu;
    return s;
  }
};

json write(const TraceSource& source, TraceCounts* counts = nullptr, int* chunks = nullptr) {
  std::string text;
  int n = 0;
  const TraceCounts c = write_chrome_trace(source, [&](std::string_view chunk) {
    text += chunk;
    ++n;
  });
  if (counts != nullptr) *counts = c;
  if (chunks != nullptr) *chunks = n;
  return json::parse(text);
}

std::vector<json> select(const json& trace, const std::string& ph, const std::string& name) {
  std::vector<json> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == ph && e.value("name", "") == name) out.push_back(e);
  }
  return out;
}

TEST(TraceWriter, FormatsMicrosecondsExactly) {
  EXPECT_EQ(format_us(1'234'567, 1'000), "1233.567");
  EXPECT_EQ(format_us(1'000, 1'000), "0.000");
  EXPECT_EQ(format_us(1'005, 1'000), "0.005");
  EXPECT_EQ(format_us(0, 1'500), "-1.500");
}

TEST(TraceWriter, DocumentHasTheObjectFormAndItsContext) {
  TraceCounts counts;
  const json t = write(Fixture().source(), &counts);
  EXPECT_EQ(t["displayTimeUnit"], "ms");
  const json& o = t["otherData"];
  EXPECT_EQ(o["schema"], "mmprof.trace/1");
  EXPECT_EQ(o["clock"], "CLOCK_MONOTONIC");
  EXPECT_EQ(o["origin_monotonic_ns"], kOrigin);
  EXPECT_EQ(o["max_events"], 20);
  EXPECT_EQ(o["sample_every"], 1);
  EXPECT_EQ(o["dropped_events"], 3);
  EXPECT_EQ(counts.dropped, 3u);
  EXPECT_EQ(counts.events, t["traceEvents"].size());
  // Every record is written except none here: 8 main + 2 sampler + 10 + 2 worker records.
  EXPECT_EQ(counts.recorded, 22u);
  EXPECT_EQ(o["recorded_events"], 22);
  EXPECT_EQ(counts.gpu_events, 2u);
}

// The pipeline phase's first worker (its loader's batches were taken in the pipeline phase).
const std::string kWorker0 = "pipeline \u00b7 worker 0";

TEST(TraceWriter, NamesEveryProcessAndThread) {
  const json t = write(Fixture().source());
  std::map<std::pair<int, int>, std::string> threads, processes;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "M") continue;
    auto& m = e["name"] == "thread_name" ? threads : processes;
    EXPECT_TRUE(m.emplace(std::pair{e["pid"].get<int>(), e["tid"].get<int>()},
                          e["args"]["name"].get<std::string>())
                    .second)
        << "named twice: " << e;
  }
  const int gpu_pid = 1 << 30;
  EXPECT_EQ(processes,
            (std::map<std::pair<int, int>, std::string>{{{kMainPid, kMainPid}, "mmprof main"},
                                                        {{kWorkerPid, kWorkerPid}, kWorker0},
                                                        {{gpu_pid, gpu_pid}, "GPU 0"}}));
  EXPECT_EQ(threads, (std::map<std::pair<int, int>, std::string>{
                         {{kMainPid, kMainTid}, "main (consumer)"},
                         {{kWorkerPid, kWorkerPid}, kWorker0},
                         {{kMainPid, kThreadTid}, "pipeline \u00b7 worker 1"},
                         {{gpu_pid, gpu_pid + 8}, "GPU 0 stream 7"},
                         {{gpu_pid, gpu_pid + 9}, "GPU 0 stream 8"}}));
}

// Each phase forks its own workers: a worker's track names the phase whose steps took its loader's
// batches (the end-to-end loader starts before the compute phase's mark), a respawn in the same
// loader is numbered, and a loader nobody took from is named by its number. No two tracks share a
// name.
TEST(TraceWriter, WorkerTracksNameTheirPhase) {
  const auto gen = [](TraceRecord r, uint32_t g) {
    r.generation = g;
    return r;
  };
  const auto start = [&](int64_t t, int64_t pid, uint32_t g) {
    return gen(rec(EventName::worker_start, t, 0, pid, pid), g);
  };
  const std::vector<TraceRecord> main = {
      gen(rec(EventName::loader_start, 100, 0, 1), 1),
      gen(rec(EventName::phase, 200, 0, kPipeline), 1),
      gen(rec(EventName::consumed, 300, 0, 0, 0), 1),
      gen(rec(EventName::loader_start, 400, 0, 1), 2),
      gen(rec(EventName::phase, 500, 0, static_cast<int64_t>(Phase::compute)), 2),
      gen(rec(EventName::phase, 600, 0, static_cast<int64_t>(Phase::end_to_end)), 2),
      gen(rec(EventName::consumed, 700, 0, 0, 0), 2),
      gen(rec(EventName::loader_start, 800, 0, 1), 3),
  };
  const std::vector<TraceRecord> sampler;
  const std::vector<TraceRecord> worker0 = {start(150, 501, 1), start(450, 502, 2),
                                            start(650, 503, 2), start(850, 504, 3)};
  TraceSource src;
  src.regions = {main, sampler, worker0};
  src.origin_ns = kOrigin;
  src.main_pid = kMainPid;
  src.main_tid = kMainTid;
  std::map<int, std::string> threads;
  std::set<std::string> names;
  const json trace = write(src);
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "M" || e["name"] != "thread_name") continue;
    threads[e["tid"].get<int>()] = e["args"]["name"];
    EXPECT_TRUE(names.insert(e["args"]["name"].get<std::string>()).second) << e;
  }
  EXPECT_EQ(threads, (std::map<int, std::string>{{kMainTid, "main (consumer)"},
                                                 {501, "pipeline \u00b7 worker 0"},
                                                 {502, "end_to_end \u00b7 worker 0"},
                                                 {503, "end_to_end \u00b7 worker 0 #2"},
                                                 {504, "loader 3 \u00b7 worker 0"}}));
}

TEST(TraceWriter, SpansKeepTheirNanosecondsAndArguments) {
  const json t = write(Fixture().source());
  const auto reads = select(t, "X", "read");
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[0]["ts"].dump(), "1.0");  // 1.000 us parses to the number 1.0
  EXPECT_DOUBLE_EQ(reads[0]["dur"].get<double>(), 1.0);
  EXPECT_EQ(reads[0]["pid"], kWorkerPid);
  EXPECT_EQ(reads[0]["args"]["key"], "k3");
  EXPECT_EQ(reads[0]["args"]["batch"], 0);
  EXPECT_EQ(reads[0]["args"]["loader"], 1);
  EXPECT_FALSE(reads[0]["args"].contains("failed"));
  EXPECT_DOUBLE_EQ(reads[1]["ts"].get<double>(), 5.2);
  EXPECT_EQ(reads[2]["tid"], kThreadTid);
  EXPECT_EQ(reads[2]["args"]["failed"], "decode");
  const auto steps = select(t, "X", "step");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0]["args"],
            (json{{"phase", "pipeline"}, {"step", 0}, {"warmup", false}, {"samples", 2}}));
  EXPECT_EQ(steps[1]["args"]["warmup"], true);
  ASSERT_EQ(select(t, "X", "wait").size(), 1u);
  EXPECT_DOUBLE_EQ(select(t, "X", "wait")[0]["dur"].get<double>(), 10.0);
}

TEST(TraceWriter, WorkerLifetimesEncloseTheirWork) {
  const json t = write(Fixture().source());
  const auto lives = select(t, "X", "worker");
  ASSERT_EQ(lives.size(), 2u);
  EXPECT_DOUBLE_EQ(lives[0]["ts"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(lives[0]["dur"].get<double>(), 59.5);
  EXPECT_EQ(lives[0]["args"]["exited"], true);
  // Killed: the lifetime ends with the end of its last event.
  EXPECT_DOUBLE_EQ(lives[1]["ts"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(lives[1]["dur"].get<double>(), 6.9);
  EXPECT_EQ(lives[1]["args"]["exited"], false);
}

// Each end of an arrow sits at the first nanosecond of its span, in the span's category (where
// DevTools binds it), the earlier span's end being the "s", written first.
TEST(TraceWriter, ArrowsJoinABatchToItsSamplesAndToTheWaitThatReceivedItAndAlwaysPairUp) {
  TraceCounts counts;
  const json t = write(Fixture().source(), &counts);
  std::map<std::pair<std::string, uint64_t>, std::vector<json>> flows;  // ends in file order
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "s" || e["ph"] == "f") {
      EXPECT_EQ(e["bp"], "e");
      EXPECT_EQ(e["cat"], "loader");
      flows[{e["name"], e["id"]}].push_back(e);
    }
  }
  // Batch 0 -> its two samples, and batch 0 -> the wait that received it. Batch 1 (never
  // consumed) and batch 7 (never recorded by a worker) get no arrow.
  ASSERT_EQ(flows.size(), 3u);
  EXPECT_EQ(counts.flows, 3u);
  const auto at = [](const json& e) {
    return std::tuple{e["ph"].get<std::string>(), e["ts"].get<double>(), e["pid"].get<int>(),
                      e["tid"].get<int>()};
  };
  using End = std::tuple<std::string, double, int, int>;
  // The batch span starts at 0.9 us on the worker; its samples' collate spans at 5.0 and 6.0.
  EXPECT_EQ(at(flows.at({"sample", 1})[0]), (End{"s", 0.9, kWorkerPid, kWorkerPid}));
  EXPECT_EQ(at(flows.at({"sample", 1})[1]), (End{"f", 5.0, kWorkerPid, kWorkerPid}));
  EXPECT_EQ(at(flows.at({"sample", 2})[1]), (End{"f", 6.0, kWorkerPid, kWorkerPid}));
  // The consumer's wait for batch 0 starts at 10.0 us on the main thread, after the batch began.
  const uint64_t batch0 = uint64_t{1} << 40;  // loader 1, batch 0
  EXPECT_EQ(at(flows.at({"batch", batch0})[0]), (End{"s", 0.9, kWorkerPid, kWorkerPid}));
  EXPECT_EQ(at(flows.at({"batch", batch0})[1]), (End{"f", 10.0, kMainPid, kMainTid}));
  for (const auto& span : select(t, "X", "batch"))
    EXPECT_EQ(span["cat"], "loader");
  EXPECT_EQ(select(t, "X", "collate")[0]["cat"], "loader");
  EXPECT_EQ(select(t, "X", "wait")[0]["cat"], "loader");
}

// When the consumer waits before the worker starts the batch, the wait's end is the "s".
TEST(TraceWriter, AnArrowStartsAtTheEarlierOfItsTwoSpans) {
  Fixture f;
  f.main[2] = rec(EventName::wait, 500, 10'000, 0);  // waiting from 0.5 us, before the batch
  const json t = write(f.source());
  std::vector<json> ends;
  for (const auto& e : t["traceEvents"])
    if ((e["ph"] == "s" || e["ph"] == "f") && e["name"] == "batch") ends.push_back(e);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0]["ph"], "s");
  EXPECT_EQ(ends[0]["pid"], kMainPid);
  EXPECT_DOUBLE_EQ(ends[0]["ts"].get<double>(), 0.5);
  EXPECT_EQ(ends[1]["ph"], "f");
  EXPECT_EQ(ends[1]["pid"], kWorkerPid);
  EXPECT_DOUBLE_EQ(ends[1]["ts"].get<double>(), 0.9);
}

TEST(TraceWriter, CountersInstantsAndGpuTracks) {
  const json t = write(Fixture().source());
  const auto memory = select(t, "C", "memory");
  ASSERT_EQ(memory.size(), 2u);
  EXPECT_EQ(memory[0]["pid"], kMainPid);
  EXPECT_EQ(memory[0]["args"], (json{{"rss_mib", 2.0}, {"pss_mib", 1.0}}));
  EXPECT_EQ(memory[1]["args"], (json{{"rss_mib", 1.0}}));  // PSS not read: left out, not 0
  const auto queue = select(t, "C", "queue");
  ASSERT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue[0]["args"], (json{{"ready", 1}, {"in_flight", 2}}));
  EXPECT_EQ(select(t, "i", "epoch 0").size(), 1u);  // two batches of epoch 0, one instant
  EXPECT_EQ(select(t, "i", "phase pipeline").size(), 1u);
  EXPECT_EQ(select(t, "i", "loader start").size(), 1u);
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "i") {
      EXPECT_EQ(e["s"], "p");
    }
  }
  const auto kernels = select(t, "X", "gemm");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]["cat"], "kernel");
  EXPECT_DOUBLE_EQ(kernels[0]["dur"].get<double>(), 5.0);
  const auto copies = select(t, "X", "memcpy HtoD");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]["args"]["copy"], "h2d");
  EXPECT_EQ(copies[0]["args"]["pinned"], true);
  EXPECT_EQ(copies[0]["args"]["bytes"], 4096);
}

TEST(TraceWriter, StreamsLargeTracesInChunksThatFormOneDocument) {
  Fixture f;
  for (int i = 0; i < 20'000; ++i)
    f.worker0.insert(f.worker0.end() - 1, rec(EventName::read, 61'000 + i * 10, 5, 2, i));
  TraceCounts counts;
  int chunks = 0;
  const json t = write(f.source(), &counts, &chunks);
  EXPECT_GT(chunks, 1);
  EXPECT_EQ(t["traceEvents"].size(), counts.events);
  EXPECT_EQ(select(t, "X", "read").size(), 20'003u);
}

TEST(TraceWriter, SlotsNeverPublishedAreLeftOut) {
  Fixture f;
  f.worker0[1].published = 0;  // a read whose producer died mid-append
  f.worker0[7].published = 0;  // batch 0's record: its arrows must go too
  TraceCounts counts;
  const json t = write(f.source(), &counts);
  EXPECT_EQ(select(t, "X", "read").size(), 2u);
  EXPECT_EQ(counts.recorded, 20u);
  EXPECT_EQ(counts.flows, 0u);
  EXPECT_TRUE(select(t, "f", "batch").empty());
}

TEST(TraceWriter, KeysThatAreNotUtf8StillMakeValidJson) {
  Fixture f;
  TraceSource s = f.source();
  s.sample_key = [](uint32_t) { return std::string("bad\xff\"key\n"); };
  const json t = write(s);
  EXPECT_EQ(select(t, "X", "read")[0]["args"]["key"], "bad\xef\xbf\xbd\"key\n");
}

}  // namespace
}  // namespace mmprof::trace
