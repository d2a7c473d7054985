// The report's decode placement table (report/placement.hpp) on a fabricated experiment whose
// trials' summaries say where decode ran and what it cost: medians over complete trials, cores
// freed against the base, and nothing for an experiment that places nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "mmprof/run_dir.hpp"
#include "report/placement.hpp"
#include "support/test_support.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

// A trial's summary: `worker` and `main` cores in the pipeline phase and the placement block.
json summary(double worker, double main, const std::string& where, double decode_ms) {
  json s = {{"schema", run_schema::summary}};
  s["cpu"]["phases"]["pipeline"]["per_process"] =
      json::array({{{"role", "main"}, {"cores", main}},
                   {{"role", "worker"}, {"cores", worker / 2}},
                   {{"role", "worker"}, {"cores", worker / 2}},
                   {{"role", "other"}, {"cores", 5.0}}});  // not the loader's: not counted
  s["decode_placement"] = {{"where", where},
                           {"phase", "pipeline"},
                           {"device_decode_ms", {{"p50", decode_ms}}},
                           {"cpu_fallbacks", 3},
                           {"nvml", {{"decoder_util_pct", 41}, {"sm_util_pct", 12}}},
                           {"compute_inflation", {{"pct", 4.5}}}};
  return s;
}

TEST(ReportPlacement, MediansPerArmAndTheCoresFreed) {
  test::TempDir dir;
  json e;
  e["results"] = json::array({{{"role", "base"}, {"arm", "base"}},
                              {{"role", "factor"},
                               {"factor", "decode.device"},
                               {"value", "gpu"},
                               {"arm", "decode.device=gpu"},
                               {"verdict", "ADOPT"},
                               {"effect_pct", 21.0}}});
  e["trials"] = json::array();
  const auto trial = [&](const std::string& arm, int i, const json& s, const char* status) {
    const std::string run = arm + "-" + std::to_string(i);
    std::filesystem::create_directories(dir.path() / run);
    test::write_text(dir.path() / run / run_file::manifest,
                     json{{"schema", run_schema::manifest}}.dump());
    test::write_text(dir.path() / run / run_file::summary, s.dump());
    e["trials"].push_back(
        {{"arm", arm}, {"run_dir", run}, {"status", status}, {"metric", 100.0 + i}});
  };
  trial("base", 0, summary(1.8, 0.1, "cpu workers", 0), "complete");
  trial("base", 1, summary(2.0, 0.1, "cpu workers", 0), "complete");
  trial("base", 2, summary(9.0, 9.0, "cpu workers", 0), "failed");  // not counted
  trial("decode.device=gpu", 0,
        summary(0.2, 0.6, "main process decodes images and video: nvdec", 30), "complete");
  trial("decode.device=gpu", 1,
        summary(0.4, 0.8, "main process decodes images and video: nvdec", 50), "complete");
  const json p = decode_placement(e, dir.path());
  ASSERT_TRUE(p.is_object());
  ASSERT_EQ(p["arms"].size(), 2u);
  const json& base = p["arms"][0];
  const json& gpu = p["arms"][1];
  EXPECT_EQ(base["trials"], 2);
  EXPECT_DOUBLE_EQ(base["loader_cores"].get<double>(), 2.0);  // median of 1.9 and 2.1
  EXPECT_DOUBLE_EQ(gpu["loader_cores"].get<double>(), 1.0);   // median of 0.8 and 1.2
  EXPECT_DOUBLE_EQ(gpu["worker_cores"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(gpu["cores_freed"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(gpu["device_decode_ms_p50"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(gpu["samples_per_s"].get<double>(), 100.5);
  EXPECT_DOUBLE_EQ(gpu["decoder_util_pct"].get<double>(), 41.0);
  EXPECT_DOUBLE_EQ(gpu["compute_inflation_pct"].get<double>(), 4.5);
  EXPECT_EQ(gpu["where"], "main process decodes images and video: nvdec");
  EXPECT_EQ(gpu["verdict"], "ADOPT");
}

TEST(ReportPlacement, AnExperimentThatPlacesNothingHasNoTable) {
  json e;
  e["results"] = json::array({{{"role", "factor"}, {"factor", "loader.num_workers"}}});
  EXPECT_TRUE(decode_placement(e, "/nonexistent").is_null());
  EXPECT_TRUE(is_placement_key("video.decode_device"));
  EXPECT_FALSE(is_placement_key("video.decoder_threads"));
}

}  // namespace
}  // namespace mmprof::report
