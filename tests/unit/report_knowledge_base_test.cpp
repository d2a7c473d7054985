// report/knowledge_base and recommend: the checked-in knowledge base parses, every change has
// dated sources, preconditions are checked against the manifest, and only compatible changes
// that address the run's limit are recommended, each with a ready `mmprof ab` command.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mmprof/error.hpp"
#include "report/analysis.hpp"
#include "report/defaults.hpp"
#include "report/knowledge_base.hpp"
#include "report/report_builder.hpp"
#include "report/writers.hpp"
#include "support/test_support.hpp"

namespace mmprof::report {
namespace {

using test::text_or_empty;

using nlohmann::json;

// The fixture run as the default `mmprof baseline` makes it: no step, so no end-to-end phase.
RunData test_pipeline_only_run() {
  RunData run = load_run(test::source_dir() / "tests/fixtures/report/run-input-bound");
  run.summary.stall_fraction.reset();
  run.summary.throughput.end_to_end = {};
  run.summary.throughput.predicted_end_to_end.reset();
  run.manifest["config"]["step"] = {{"kind", "none"}};
  run.manifest["command"] = {"mmprof", "baseline", "--out", "runs/default"};
  return run;
}

json embedded_kb() {
  return parse_knowledge_base(default_knowledge_base_yaml(), "embedded");
}

TEST(ReportKnowledgeBase, EmbeddedCopyIsTheCheckedInFile) {
  EXPECT_EQ(default_knowledge_base_yaml(),
            text_or_empty(test::source_dir() / "configs/report/knowledge-base.yaml"));
  EXPECT_EQ(default_criteria_yaml(),
            text_or_empty(test::source_dir() / "configs/report/criteria.yaml"));
}

TEST(ReportKnowledgeBase, EveryChangeHasHttpsSourcesDatedByPublicationOrVersion) {
  const json kb = embedded_kb();
  EXPECT_GE(kb["version"].get<int>(), 2);
  ASSERT_GE(kb["changes"].size(), 10u);
  for (const auto& c : kb["changes"]) {
    ASSERT_FALSE(c["sources"].empty()) << c["id"];
    for (const auto& s : c["sources"]) {
      EXPECT_EQ(s["url"].get<std::string>().rfind("https://", 0), 0u) << s.dump();
      if (s.contains("published")) {
        EXPECT_GE(s["published"].get<std::string>().size(), 7u) << s.dump();  // YYYY-MM at least
      } else {
        ASSERT_TRUE(s.contains("version")) << s.dump();
        EXPECT_FALSE(s["version"].get<std::string>().empty()) << s.dump();
      }
    }
  }
}

// A living page read on some day says nothing about when its fact held: such a source, an
// unknown software in version_at_least and a malformed addresses are refused at load.
TEST(ReportKnowledgeBase, SourcesWithOnlyAnAccessDateAreRefused) {
  const std::string head =
      "version: 1\nchanges:\n  - {id: x, title: t, factor: null, values: [], addresses: {},\n"
      "     preconditions: [], sources: [{url: 'https://example.org/page', title: p, ";
  EXPECT_NO_THROW(parse_knowledge_base(head + "version: '2.6'}]}\n", "kb.yaml"));
  EXPECT_NO_THROW(parse_knowledge_base(head + "published: 2021-01-28}]}\n", "kb.yaml"));
  try {
    parse_knowledge_base(head + "accessed: 2026-11-30}]}\n", "kb.yaml");
    FAIL() << "a source dated only by access was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("kb.yaml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("https://example.org/page"), std::string::npos)
        << e.what();
  }
  const std::string dated = "sources: [{url: 'https://e.org', title: p, version: '1'}]}\n";
  EXPECT_THROW(parse_knowledge_base("version: 1\nchanges:\n  - {id: x, title: t, factor: null, "
                                    "values: [], addresses: {}, preconditions: "
                                    "[{version_at_least: {tensorflow: '2.0'}}], " +
                                        dated,
                                    "kb.yaml"),
               UsageError);
  EXPECT_THROW(parse_knowledge_base("version: 1\nchanges:\n  - {id: x, title: t, factor: null, "
                                    "values: [], addresses: {stage: [decode]}, preconditions: "
                                    "[], " +
                                        dated,
                                    "kb.yaml"),
               UsageError);
}

TEST(ReportKnowledgeBase, MalformedFilesAreRefusedByName) {
  EXPECT_THROW(parse_knowledge_base("version: 1\nchanges:\n  - id: x\n", "kb.yaml"), UsageError);
  try {
    parse_knowledge_base(
        "version: 1\nchanges:\n  - {id: x, title: t, factor: null, values: [], addresses: {},\n"
        "     preconditions: [{warp_drive: true}], sources: []}\n",
        "kb.yaml");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("kb.yaml"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("warp_drive"), std::string::npos);
  }
}

TEST(ReportKnowledgeBase, PreconditionsReadTheManifestAndNeverGuess) {
  json m;
  m["hardware"]["gpus"] = json::array();
  m["hardware"]["gpu_unavailable_reason"] = "no driver";
  const json a;
  EXPECT_EQ(check_precondition({{"gpu", true}}, a, m)["ok"], false);
  EXPECT_NE(
      check_precondition({{"gpu", true}}, a, m)["detail"].get<std::string>().find("no driver"),
      std::string::npos);
  m["hardware"]["gpus"] = json::array({{{"name", "H200"}}});
  EXPECT_EQ(check_precondition({{"gpu", true}}, a, m)["ok"], true);
  // NVDEC and FFmpeg's decoder list are not in the manifest: unknown means not compatible.
  EXPECT_EQ(check_precondition({{"nvdec", true}}, a, m)["ok"], false);
  EXPECT_EQ(check_precondition({{"ffmpeg_decoder", "h264_cuvid"}}, a, m)["ok"], false);
  // The inventory's NVML engine counts and FFmpeg's GPU decoders (env/gpu_decode_info.cpp).
  m["hardware"]["gpus"][0]["nvdec_engines"] = 7;
  m["hardware"]["gpus"][0]["nvjpg_engines"] = 0;
  EXPECT_EQ(check_precondition({{"nvdec", true}}, a, m)["ok"], true);
  EXPECT_EQ(check_precondition({{"nvjpg", true}}, a, m)["ok"], false);
  m["software"]["gpu_decode"]["ffmpeg"] = {{"cuvid_decoders", {"h264_cuvid"}},
                                           {"nvdec_hwaccel_codecs", {"h264", "mjpeg"}}};
  EXPECT_EQ(check_precondition({{"ffmpeg_decoder", "h264_cuvid"}}, a, m)["ok"], true);
  EXPECT_EQ(check_precondition({{"ffmpeg_decoder", "mjpeg"}}, a, m)["ok"], true);
  EXPECT_EQ(check_precondition({{"ffmpeg_decoder", "vp9_cuvid"}}, a, m)["ok"], false);
  m["software"]["cuda"]["driver"] = "12.4";
  EXPECT_EQ(check_precondition({{"cuda_min", "11.0"}}, a, m)["ok"], true);
  EXPECT_EQ(check_precondition({{"cuda_min", "12.8"}}, a, m)["ok"], false);
  m["storage"]["fs_type"] = "fuse.gcsfuse";
  EXPECT_EQ(check_precondition({{"network_storage", true}}, a, m)["ok"], true);
  m["config"]["loader"]["worker_mode"] = "thread";
  EXPECT_EQ(check_precondition({{"config_in", {{"loader.worker_mode", {"process"}}}}}, a, m)["ok"],
            false);
}

// Issue 15: oversized sources are measured from the data mix's probed resolutions against
// image.size; the change that addresses them names the offline step to take.
TEST(ReportKnowledgeBase, OversizedSourcesAreMeasuredFromTheDataMix) {
  json m;
  m["config"]["image"]["size"] = 224;  // 50176 pixels: more than 4x is above 200704
  m["data_mix"]["images"]["resolutions"] = {{"4000x3000", 3}, {"640x480", 5}, {"256x256", 2}};
  const json a;
  const json p = {{"oversized_sources", {{"pixels_over_output", 4}, {"min_share", 0.25}}}};
  json r = check_precondition(p, a, m);
  EXPECT_EQ(r["ok"], true);
  EXPECT_EQ(r["detail"],
            "80 % of the 10 probed images have more than 4 x the pixels of the 224x224 output "
            "(need 25 %)");
  m["config"]["image"]["size"] = 512;  // only the 12 MP sources are above 4x
  r = check_precondition(p, a, m);
  EXPECT_EQ(r["detail"],
            "30 % of the 10 probed images have more than 4 x the pixels of the 512x512 output "
            "(need 25 %)");
  EXPECT_EQ(
      check_precondition({{"oversized_sources", {{"pixels_over_output", 4}, {"min_share", 0.5}}}},
                         a, m)["ok"],
      false);
  // A job has no image.size: its output is the sample tensor its batches hold (channels first
  // or last), 128x96 here, 12288 pixels: every source is above 4x (the 256x256 ones too).
  json job = m;
  job["source"] = "external";
  job["baseline_spec"]["sample_tensor"] = {{"dtype", "float32"}, {"shape", {3, 96, 128}}};
  r = check_precondition(p, a, job);
  EXPECT_EQ(r["detail"],
            "100 % of the 10 probed images have more than 4 x the pixels of the 128x96 output of "
            "the job's batches (need 25 %)");
  job["baseline_spec"]["sample_tensor"]["shape"] = {96, 128, 3};
  EXPECT_EQ(check_precondition(p, a, job)["detail"], r["detail"]);
  job["baseline_spec"]["sample_tensor"]["shape"] = {77};  // not an image: unknown
  EXPECT_EQ(check_precondition(p, a, job)["detail"].get<std::string>().rfind("cannot verify", 0),
            0u);
  m.erase("data_mix");
  r = check_precondition(p, a, m);
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["detail"].get<std::string>().rfind("cannot verify", 0), 0u);

  // A decode-limited input-bound run over that mix gets the change, with the offline step as the
  // way to test it (it has no config key).
  m["data_mix"]["images"]["resolutions"] = {{"4000x3000", 3}, {"640x480", 1}};
  const json analysis = {{"classification", {{"primary", "input-bound"}}},
                         {"stages", {{"limit", "decode"}}}};
  const json kb = evaluate_knowledge_base(embedded_kb(), analysis, m);
  const auto rec = std::find_if(kb["recommended"].begin(), kb["recommended"].end(),
                                [](const json& c) { return c["id"] == "pre-resize-offline"; });
  ASSERT_NE(rec, kb["recommended"].end()) << kb["excluded"].dump(2);
  EXPECT_TRUE((*rec)["experiment"].is_null());
  for (const auto& h : kb["hypotheses"]) {
    if (h["id"] != "pre-resize-offline") continue;
    EXPECT_TRUE(h["confirm_or_refute"].is_null());
    EXPECT_NE(h["note"].get<std::string>().find("mmprof baseline --data RESIZED"),
              std::string::npos);
  }
}

// A DataLoader argument is recommended to a user's job only when its recorded torch has it.
TEST(ReportKnowledgeBase, VersionPreconditionsReadTheJobsTorch) {
  const json need = {{"version_at_least", {{"torch", "1.7"}}}};
  const json a;
  json m;  // mmprof's own loader: it has every option it tests
  EXPECT_EQ(check_precondition(need, a, m)["ok"], true);
  EXPECT_NE(check_precondition(need, a, m)["detail"].get<std::string>().find("torch >= 1.7"),
            std::string::npos);
  m["source"] = "external";  // a job whose hook reported no versions: unknown is not compatible
  EXPECT_EQ(check_precondition(need, a, m)["ok"], false);
  EXPECT_NE(check_precondition(need, a, m)["detail"].get<std::string>().find("cannot verify"),
            std::string::npos);
  json& torch = m["job"]["dataloader"]["versions"]["torch"];
  torch = "1.6.0";
  EXPECT_EQ(check_precondition(need, a, m)["ok"], false);
  EXPECT_NE(check_precondition(need, a, m)["detail"].get<std::string>().find("older than 1.7"),
            std::string::npos);
  for (const char* have : {"1.7.0", "1.13.0a0", "2.6.0+cu124"}) {
    torch = have;
    EXPECT_EQ(check_precondition(need, a, m)["ok"], true) << have;
  }
  torch = "2.5.1";
  EXPECT_EQ(check_precondition({{"version_at_least", {{"torch", "2.6"}}}}, a, m)["ok"], false);
  torch = "2.6.0";
  EXPECT_EQ(check_precondition({{"version_at_least", {{"torch", "2.6"}}}}, a, m)["ok"], true);
}

// A job's map of a user's DataLoader: `torch`, `workers` workers, no persistent workers.
json job_manifest(int workers, const std::string& torch = "2.6.0") {
  json m;
  m["source"] = "external";
  m["job"]["command"] = {"python", "train.py"};
  m["job"]["dataloader"]["versions"]["torch"] = torch;
  m["job"]["dataloader"]["loaders"] = {{{"followed", true},
                                        {"config",
                                         {{"num_workers", workers},
                                          {"prefetch_factor", workers > 0 ? json(2) : json()},
                                          {"persistent_workers", false},
                                          {"in_order", true},
                                          {"pin_memory", false}}}}};
  m["hardware"]["memory"]["total_mib"] = 16000;
  return m;
}

// The knowledge base's own facts: prefetch_factor and persistent_workers came with torch 1.7,
// in_order with 2.6. A torch 1.6 job is offered none of them; the reason names its version.
TEST(ReportKnowledgeBase, AJobsTorchExcludesArgumentsItLacks) {
  const json m = job_manifest(2, "1.6.0");
  json a;
  a["classification"]["primary"] = "input-bound";
  a["stages"]["limit"] = "getitem";
  a["resources"] = {{"limit", "none saturated"},
                    {"cpu", {{"idle_cores", 0.2}}},
                    {"memory", {{"host_peak_mib", 4000}, {"host_total_mib", 16000}}}};
  const json r = evaluate_knowledge_base(embedded_kb(), a, m);
  for (const auto& c : r["recommended"])
    ADD_FAILURE() << "recommended to a torch 1.6 job: " << c["id"];
  std::map<std::string, std::string> why;
  for (const auto& c : r["excluded"])
    why[c["id"]] = c["reason"];
  for (const char* id : {"deeper-prefetch", "persistent-workers", "out-of-order-delivery"})
    EXPECT_NE(why[id].find("torch 1.6.0 is older than"), std::string::npos)
        << id << ": " << why[id];
}

// Debian's torch 1.13 records in_order as null (no such argument): the reason is the version
// that introduced it, not "in_order is null already"; the argument's own check says it is absent.
TEST(ReportKnowledgeBase, ATorchWithoutInOrderIsToldTheVersionThatIntroducedIt) {
  json m;
  m["source"] = "external";
  m["job"]["command"] = {"python", "train.py"};
  m["job"]["dataloader"]["versions"]["torch"] = "1.13.1";
  m["job"]["dataloader"]["loaders"] = {
      {{"followed", true}, {"config", {{"num_workers", 2}, {"in_order", nullptr}}}}};
  json a;
  a["classification"]["primary"] = "input-bound";
  a["stages"]["limit"] = "decode";
  const json r = evaluate_knowledge_base(embedded_kb(), a, m);
  json excluded;
  for (const auto& c : r["excluded"])
    if (c["id"] == "out-of-order-delivery") excluded = c;
  ASSERT_TRUE(excluded.is_object()) << r.dump(1);
  EXPECT_EQ(excluded["reason"], "the job's torch 1.13.1 is older than 2.6, which introduced it");
  EXPECT_EQ(excluded["preconditions"][0]["detail"],
            "loader.in_order: the job's DataLoader (torch 1.13.1) has no such argument");
}

// Issue 32 case 9: a job's __getitem__ does its own decoding, so a setting of mmprof's own loader
// (DCT-scaled decode, thread workers) is no lever of the job's: that is the reason, not "0 jpeg
// images in the data mix" (a job records no data mix) or "worker_mode is null already".
TEST(ReportKnowledgeBase, AJobIsNotOfferedTheStandInsOwnSettings) {
  const json m = job_manifest(2);
  json a;
  a["classification"]["primary"] = "input-bound";
  a["stages"]["limit"] = "getitem";
  const json r = evaluate_knowledge_base(embedded_kb(), a, m);
  for (const auto& c : r["recommended"]) {
    EXPECT_NE(c["id"], "dct-scaled-decode");
    EXPECT_NE(c["id"], "thread-workers");
  }
  std::map<std::string, std::string> why;
  for (const auto& c : r["excluded"])
    why[c["id"]] = c["reason"];
  EXPECT_EQ(why["dct-scaled-decode"],
            "image.dct_scaling is a setting of mmprof's own loader, not an argument of the job's "
            "DataLoader (the job's __getitem__ does its own decoding): try it on the stand-in, "
            "mmprof baseline --like RUN");
  EXPECT_EQ(
      why["thread-workers"].rfind("loader.worker_mode is a setting of mmprof's own loader", 0), 0u)
      << why["thread-workers"];
  // Without a probed data mix the format is unknown, not absent; with one, the count is stated.
  const json jpeg = {{"image_format", "jpeg"}};
  EXPECT_EQ(check_precondition(jpeg, a, m)["detail"],
            "cannot verify: the manifest has no data mix (no image formats probed)");
  json mix;
  mix["data_mix"]["images"]["formats"] = {{"png", 3}};
  EXPECT_EQ(check_precondition(jpeg, a, mix)["detail"], "0 jpeg images in the data mix");
  mix["data_mix"]["images"]["formats"]["jpeg"] = 368;
  EXPECT_EQ(check_precondition(jpeg, a, mix)["ok"], true);
}

// Issue 32 case 10: one worker whose __getitem__ sleeps 30 ms, on a host others keep busy. The
// worker used 0.02 cores: it waits, so the host's busy CPUs are not its limit, and a second
// worker is the lever. A worker that computes on the same host is refused for want of a core.
TEST(ReportKnowledgeBase, AWorkerThatWaitsGetsMoreWorkersWhateverTheHostsLoad) {
  json s;
  s["cpu"] = {{"utilization_cores", 0.05},
              {"effective_cores", 2.0},
              {"host", {{"cpus", 2}, {"busy_fraction", 1.0}, {"others_busy_cores", 1.95}}},
              {"run_queue_delay", {{"workers_mean_fraction", 0.001}}},
              {"per_process",
               {{{"role", "main"}, {"cores", 0.03}, {"run_queue_delay_fraction", 0.002}},
                {{"role", "worker"}, {"cores", 0.02}, {"run_queue_delay_fraction", 0.001}}}}};
  const json m = job_manifest(1);
  json a;
  a["classification"]["primary"] = "input-bound";
  a["stages"]["limit"] = "getitem";
  a["resources"] = attribute_resources(test::typed(s), m);
  EXPECT_EQ(a["resources"]["cpu"]["saturated"], true);  // the host is busy ...
  EXPECT_EQ(a["resources"]["cpu"]["loading"]["kind"], "off-cpu");
  EXPECT_NEAR(a["resources"]["cpu"]["loading"]["off_cpu_fraction"].get<double>(), 0.979, 1e-9);
  EXPECT_EQ(a["resources"]["limit"], "off-cpu wait");  // ... but the worker sleeps
  EXPECT_NE(cpu_text(a["resources"]["cpu"])
                .find("each of 1 worker slot was on a CPU 2 % of the time, waited for one 0 %, "
                      "off CPU (I/O, a sleep, a lock) 98 %"),
            std::string::npos)
      << cpu_text(a["resources"]["cpu"]);
  json r = evaluate_knowledge_base(embedded_kb(), a, m);
  std::map<std::string, json> recommended;
  for (const auto& c : r["recommended"])
    recommended[c["id"]] = c;
  ASSERT_TRUE(recommended.count("more-workers")) << r["excluded"].dump(1);
  EXPECT_EQ(recommended["more-workers"]["experiment"],
            "mmprof ab --factor loader.num_workers=1,2 -- python train.py");

  // The same host and a worker that computes (0.95 cores): no core for another one.
  s["cpu"]["per_process"][1]["cores"] = 0.95;
  s["cpu"]["utilization_cores"] = 0.98;
  a["resources"] = attribute_resources(test::typed(s), m);
  EXPECT_EQ(a["resources"]["cpu"]["loading"]["kind"], "cpu-bound");
  EXPECT_EQ(a["resources"]["limit"], "cpu");
  r = evaluate_knowledge_base(embedded_kb(), a, m);
  for (const auto& c : r["recommended"])
    EXPECT_NE(c["id"], "more-workers");
  for (const auto& c : r["excluded"]) {
    if (c["id"] != "more-workers") continue;
    EXPECT_NE(c["reason"].get<std::string>().find("a worker more needs about 0.95 cores"),
              std::string::npos)
        << c["reason"];
  }

  // A worker that ended as the measured window began (its epoch's batches all fetched: samples
  // saw it over 10 % of the window) used no CPU in it because it was gone: not "it waits", and
  // another one is costed at a whole core.
  s["cpu"]["per_process"][1]["cores"] = 0.0;
  s["cpu"]["per_process"][1]["observed_fraction"] = 0.1;
  a["resources"] = attribute_resources(test::typed(s), m);
  EXPECT_EQ(a["resources"]["cpu"]["loading"]["kind"], "not-established");
  EXPECT_EQ(a["resources"]["cpu"]["loading"]["text"],
            "what each of 1 worker slot did is not established: samples saw them 10 % of the "
            "measured window (need 50 %): they ended inside it");
  // Nor is the host others keep busy its limit: what limits it is not established.
  EXPECT_EQ(a["resources"]["limit"], "not established");
  EXPECT_EQ(a["resources"]["limit_why"],
            "other processes kept the host's CPUs busy, and what each of 1 worker slot did is not "
            "established: samples saw them 10 % of the measured window (need 50 %): they ended "
            "inside it");
  r = evaluate_knowledge_base(embedded_kb(), a, m);
  for (const auto& c : r["recommended"])
    EXPECT_NE(c["id"], "more-workers");
  for (const auto& c : r["excluded"]) {
    if (c["id"] != "more-workers") continue;
    EXPECT_NE(c["reason"].get<std::string>().find("a worker more needs a core (what each of 1 "
                                                  "worker slot did is not established"),
              std::string::npos)
        << c["reason"];
  }
}

// Issue 32 case 11: with num_workers=0 torch refuses prefetch_factor and persistent_workers, so
// neither is suggested, and the reason says why.
TEST(ReportKnowledgeBase, NoWorkersNoPrefetchOrPersistentWorkers) {
  const json m = job_manifest(0);
  json a;
  a["classification"]["primary"] = "input-bound";
  a["stages"]["limit"] = "ipc";
  a["resources"] = {{"limit", "none saturated"},
                    {"cpu", {{"idle_cores", 1.5}}},
                    {"memory", {{"host_peak_mib", 4000}, {"host_total_mib", 16000}}}};
  const json r = evaluate_knowledge_base(embedded_kb(), a, m);
  for (const auto& c : r["recommended"])
    EXPECT_TRUE(c["id"] != "deeper-prefetch" && c["id"] != "persistent-workers") << c["id"];
  std::map<std::string, std::string> why;
  for (const auto& c : r["excluded"])
    why[c["id"]] = c["reason"];
  for (const char* id : {"deeper-prefetch", "persistent-workers"}) {
    EXPECT_EQ(why[id], "loader.num_workers is 0: the loader refuses this change below 1") << id;
  }
}

// Issue 32 case 14: persistent workers change what happens at an epoch boundary; a run whose
// measured steps crossed none (trials shorter than an epoch) cannot show it, and one whose
// boundaries did not stall has nothing for it to remove.
TEST(ReportKnowledgeBase, PersistentWorkersNeedAMeasuredBoundaryThatStalled) {
  const json m = job_manifest(2);
  json a;
  a["classification"]["primary"] = "input-bound";
  a["stages"]["limit"] = "getitem";
  a["resources"] = {{"limit", "none saturated"}, {"cpu", {{"idle_cores", 0.0}}}};
  const auto verdict = [&](const json& eb) {
    a["epoch_boundary"] = eb;
    const json r = evaluate_knowledge_base(embedded_kb(), a, m);
    for (const auto& c : r["recommended"])
      if (c["id"] == "persistent-workers") return std::string("recommended");
    for (const auto& c : r["excluded"])
      if (c["id"] == "persistent-workers") return c["reason"].get<std::string>();
    return std::string("missing");
  };
  EXPECT_EQ(verdict({{"boundaries", 0}, {"batches_per_epoch", 50}, {"stall", false}}),
            "no epoch boundary in the measured steps: the trials cannot show a change at the "
            "boundary (measure more than an epoch: over 50 batches)");
  EXPECT_EQ(verdict({{"boundaries", 2}, {"stall", false}, {"verdict", "no boundary stall"}}),
            "2 epoch boundaries measured: no boundary stall");
  EXPECT_EQ(verdict({{"boundaries", 2}, {"stall", true}, {"verdict", "boundary stall: 80 ms"}}),
            "recommended");
  EXPECT_EQ(verdict(nullptr), "cannot verify: the run has no epoch boundary figures");
}

// The default run (step.kind none) measured the pipeline alone: its advice raises the pipeline's
// own rate, says so, and never adds more workers than the host has idle cores.
TEST(ReportKnowledgeBase, PipelineOnlyRunsGetHypothesesAimedAtThePipelinesRate) {
  const RunData run = test_pipeline_only_run();
  json a = analyze_run(run);
  ASSERT_EQ(a["classification"]["primary"], "pipeline-only");
  ASSERT_EQ(a["stages"]["limit"], "decode");
  a["resources"]["cpu"]["idle_cores"] = 1.4;  // one idle core: one more worker at most
  json r = evaluate_knowledge_base(embedded_kb(), a, run.manifest);
  ASSERT_TRUE(r["hypotheses_scope"].is_string());
  EXPECT_NE(r["hypotheses_scope"].get<std::string>().find("pipeline's own rate"),
            std::string::npos);
  std::map<std::string, json> hypotheses;
  for (const auto& h : r["hypotheses"]) {
    hypotheses[h["id"]] = h;
    EXPECT_EQ(h["aimed_at"], "pipeline rate");
    EXPECT_NE(h["text"].get<std::string>().find("pipeline's own rate"), std::string::npos);
  }
  ASSERT_TRUE(hypotheses.count("more-workers"));
  EXPECT_EQ(hypotheses["more-workers"]["confirm_or_refute"],
            "mmprof ab --factor loader.num_workers=2,3");
  ASSERT_TRUE(hypotheses.count("dct-scaled-decode"));
  EXPECT_EQ(hypotheses["dct-scaled-decode"]["confirm_or_refute"],
            "mmprof ab --factor image.dct_scaling=false,true");
  // Decode limits: the workers are busy, so deeper prefetch and out-of-order delivery wait.
  EXPECT_FALSE(hypotheses.count("deeper-prefetch"));
  EXPECT_FALSE(hypotheses.count("out-of-order-delivery"));
  // The handoff limits (the workers idle): now they are the levers; no core idle, no worker.
  a["stages"]["limit"] = "ipc";
  a["resources"]["cpu"]["idle_cores"] = 0.6;
  r = evaluate_knowledge_base(embedded_kb(), a, run.manifest);
  hypotheses.clear();
  for (const auto& h : r["hypotheses"])
    hypotheses[h["id"]] = h;
  EXPECT_EQ(hypotheses["deeper-prefetch"]["confirm_or_refute"],
            "mmprof ab --factor loader.prefetch_factor=2,4");
  EXPECT_EQ(hypotheses["out-of-order-delivery"]["confirm_or_refute"],
            "mmprof ab --factor loader.in_order=true,false");
  EXPECT_FALSE(hypotheses.count("more-workers"));
}

// report.md says what the pipeline-only hypotheses are aimed at, above them.
TEST(ReportKnowledgeBase, PipelineOnlyReportLabelsItsHypotheses) {
  ReportInputs in;
  in.knowledge_base = embedded_kb();
  in.criteria = parse_criteria(default_criteria_yaml(), "embedded");
  in.runs.push_back(test_pipeline_only_run());
  const std::string md = render_markdown(build_report(in));
  const auto section = md.find("Hypotheses (to confirm or refute with mmprof ab)");
  ASSERT_NE(section, std::string::npos) << md;
  const auto scope = md.find("No step was measured", section);
  const auto command = md.find("mmprof ab --factor image.dct_scaling=false,true", section);
  ASSERT_NE(scope, std::string::npos) << md;
  ASSERT_NE(command, std::string::npos) << md;
  EXPECT_LT(scope, command);
  EXPECT_EQ(md.find("None: no compatible change"), std::string::npos);
}

TEST(ReportKnowledgeBase, FixtureRunGetsOnlyCompatibleRelevantChanges) {
  const RunData run = load_run(test::source_dir() / "tests/fixtures/report/run-input-bound");
  const json a = analyze_run(run);
  const json r = evaluate_knowledge_base(embedded_kb(), a, run.manifest);
  std::set<std::string> recommended, excluded;
  for (const auto& c : r["recommended"])
    recommended.insert(c["id"]);
  for (const auto& c : r["excluded"])
    excluded.insert(c["id"]);
  // Decode-limited, storage-saturated, on NFS, JPEG with DCT scaling off, 5 idle cores, no GPU.
  for (const char* id : {"more-workers", "dct-scaled-decode", "tar-shards", "local-nvme-staging"})
    EXPECT_TRUE(recommended.count(id)) << id;
  for (const char* id : {"pinned-memory", "gpu-video-decode", "gpu-jpeg-decode",
                         "persistent-workers", "video-decoder-threads"})
    EXPECT_TRUE(excluded.count(id)) << id;
  EXPECT_EQ(r["hypotheses"].size(), r["recommended"].size());
  for (const auto& h : r["hypotheses"]) {
    if (h["id"] == "more-workers") {
      EXPECT_EQ(h["confirm_or_refute"],
                "mmprof ab --config /work/main/configs/emulated-accelerator.yaml --set "
                "loader.batch_size=4 --factor loader.num_workers=2,4");
    }
  }
  // Staging and shards are runnable commands: mmprof stage fills $LOCAL_COPY, mmprof shard
  // $SHARDS (the same samples, so ab checks them by digest), which the experiment then reads.
  const std::map<std::string, std::pair<std::string, std::string>> copies = {
      {"local-nvme-staging",
       {"set LOCAL_COPY to a folder on local storage and stage the data there first: mmprof "
        "stage /data/set \"$LOCAL_COPY\"",
        "data.path=/data/set,$LOCAL_COPY"}},
      {"tar-shards",
       {"set SHARDS to a new folder and write the data there as tar shards first: mmprof shard "
        "/data/set --out \"$SHARDS\"",
        "data.path=/data/set,$SHARDS"}}};
  for (const auto& h : r["hypotheses"]) {
    const auto copy = copies.find(h["id"].get<std::string>());
    if (copy == copies.end()) continue;
    EXPECT_EQ(h["note"], copy->second.first);
    EXPECT_NE(h["confirm_or_refute"].get<std::string>().find(copy->second.second),
              std::string::npos)
        << h;
  }
  // With the dataset's size in the manifest, the room the copy needs.
  json m = run.manifest;
  m["data"]["total_bytes"] = 2.5e9;
  const json sized = evaluate_knowledge_base(embedded_kb(), a, m);
  for (const auto& h : sized["hypotheses"]) {
    if (h["id"] == "local-nvme-staging") {
      EXPECT_NE(h["note"].get<std::string>().find("with 2500 MB free"), std::string::npos)
          << h["note"];
    }
  }
}

// more-workers suggests twice the workers only while the host has that many idle cores: with 4
// workers and 2.7 idle host cores it suggests 6, and with under one idle core none at all.
TEST(ReportKnowledgeBase, MoreWorkersNeverAddsMoreWorkersThanIdleHostCores) {
  json m;
  m["config"]["loader"] = {{"num_workers", 4}};
  json a;
  a["classification"]["primary"] = "input-bound";
  a["stages"]["limit"] = "decode";
  a["resources"]["limit"] = "cpu";
  a["resources"]["cpu"]["host_busy_cores"] = 1.0;
  const auto more_workers = [&](double idle) {
    a["resources"]["cpu"]["idle_cores"] = idle;
    const json r = evaluate_knowledge_base(embedded_kb(), a, m);
    for (const char* list : {"recommended", "excluded"}) {
      for (const auto& c : r[list])
        if (c["id"] == "more-workers") return json{{"list", list}, {"change", c}};
    }
    return json();
  };
  const json capped = more_workers(2.7);
  ASSERT_EQ(capped["list"], "recommended") << capped.dump();
  EXPECT_EQ(capped["change"]["experiment"], "mmprof ab --factor loader.num_workers=4,6");
  const json doubled = more_workers(9.0);
  EXPECT_EQ(doubled["change"]["experiment"], "mmprof ab --factor loader.num_workers=4,8");
  const json none = more_workers(0.4);
  ASSERT_EQ(none["list"], "excluded") << none.dump();
  EXPECT_NE(none["change"]["reason"].get<std::string>().find("0.40 cores idle on the host"),
            std::string::npos)
      << none.dump();
}

TEST(ReportKnowledgeBase, AbCommandQuotesForTheShell) {
  json m;
  m["command"] = {"mmprof", "baseline", "--data", "/data/my set", "--out", "x"};
  EXPECT_EQ(ab_command(m, "data.layout", {"files", "tar"}),
            "mmprof ab --data '/data/my set' --factor data.layout=files,tar");
}

}  // namespace
}  // namespace mmprof::report
