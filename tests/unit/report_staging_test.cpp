// When staging pays off (report/staging.hpp), on a fabricated experiment over data.path whose arm
// is a staged copy: exact epoch times, savings and break-even epochs with the effect's CI, and the
// reasons given when a figure cannot be had.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/staging.hpp"
#include "support/test_support.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

json experiment(const std::string& copy, double effect, double lo, double hi) {
  json e;
  e["design"]["metric"]["key"] = "throughput.pipeline.samples_per_s";
  e["design"]["cache"] = "cold";
  e["results"] = json::array({
      {{"role", "base"}, {"arm", "base"}},
      {{"role", "factor"},
       {"factor", "data.path"},
       {"value", copy},
       {"arm", "data.path=" + copy},
       {"base_median", 100.0},
       {"effect_pct", effect},
       {"ci_pct", {lo, hi}}},
      {{"role", "factor"}, {"factor", "loader.num_workers"}, {"value", "4"}},
  });
  return e;
}

TEST(ReportStaging, BreakEvenEpochsWithTheirInterval) {
  test::TempDir copy;
  test::write_text(copy.path() / "stage.json",
                   R"({"schema": "mmprof.stage/1", "wall_s": 10.0, "copied_mb_per_s": 80.0,
                       "source": "/nfs/data"})");
  RunData base;
  base.manifest["data"]["samples"] = 1000;
  Locality& locality = base.summary.locality.emplace();
  locality.fits_in_ram = true;
  locality.dataset_bytes = 1048576 * 200;
  locality.host_memory_mib = 4096.0;
  const json s = staging_break_even(experiment(copy.path().string(), 25, 10, 40), base);
  ASSERT_EQ(s.size(), 1u);  // the data.path arm only
  const json& e = s[0];
  ASSERT_FALSE(e.contains("reason")) << e;
  // 1000 samples at 100/s: 10 s an epoch as is; +25 %: 8 s staged, 2 s saved, 10 s of copy.
  EXPECT_DOUBLE_EQ(e["epoch_s"]["as_is"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(e["epoch_s"]["staged"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(e["saved_s_per_epoch"]["median"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(e["pays_off_after_epochs"]["median"].get<double>(), 5.0);
  // CI +10 % .. +40 %: 10 - 10/1.4 = 2.857 s (3.5 epochs) .. 10 - 10/1.1 = 0.909 s (11 epochs).
  EXPECT_NEAR(e["pays_off_after_epochs"]["ci"][0].get<double>(), 3.5, 1e-12);
  EXPECT_NEAR(e["pays_off_after_epochs"]["ci"][1].get<double>(), 11.0, 1e-12);
  EXPECT_EQ(e["source"], "/nfs/data");
  EXPECT_NE(e["caveat"].get<std::string>().find("fits in this host's memory"), std::string::npos);
  // A CI that allows no saving: the copy may never pay off (null), while the median still does.
  const json wide = staging_break_even(experiment(copy.path().string(), 25, -5, 40), base)[0];
  EXPECT_TRUE(wide["pays_off_after_epochs"]["ci"][1].is_null());
  EXPECT_DOUBLE_EQ(wide["pays_off_after_epochs"]["median"].get<double>(), 5.0);
  // Slower on the copy: never.
  EXPECT_TRUE(staging_break_even(experiment(copy.path().string(), -5, -10, -1),
                                 base)[0]["pays_off_after_epochs"]["median"]
                  .is_null());
}

// Issue 32 case 1: the copy's cost is every session's (a re-run on a finished copy adds its 0.09 s
// verification, it does not replace the 10 s copy), and a stage.json that cannot give the cost
// says why: a copy of another source than the base arm's, an unfinished copy, a copy made by
// something else that mmprof stage only verified.
TEST(ReportStaging, TheCopysCostIsEverySessionsAndOnlyOfTheBasesDataWhole) {
  test::TempDir copy;
  RunData base;
  base.manifest["data"]["samples"] = 1000;
  json e = experiment(copy.path().string(), 25, 10, 40);
  e["design"]["factors"] = {{{"key", "data.path"}, {"base", "/nfs/data"}}};
  const auto write = [&](const json& stage) {
    json st = {{"schema", "mmprof.stage/1"},
               {"source", "/nfs/data"},
               {"complete", true},
               {"files", 10},
               {"bytes", 5e6},
               {"copied_files", 0},
               {"copied_bytes", 0},
               {"already_there_files", 10},
               {"wall_s", 0.09}};
    st.update(stage);
    test::write_text(copy.path() / "stage.json", st.dump());
    return staging_break_even(e, base)[0];
  };
  const json twice = write(
      {{"total", {{"sessions", 2}, {"wall_s", 10.09}, {"copied_bytes", 5e6}, {"costed", true}}}});
  ASSERT_FALSE(twice.contains("reason")) << twice;
  EXPECT_DOUBLE_EQ(twice["stage_s"].get<double>(), 10.09);
  EXPECT_EQ(twice["stage_sessions"], 2);
  EXPECT_NEAR(twice["pays_off_after_epochs"]["median"].get<double>(), 10.09 / 2, 1e-12);

  const json verified = write(
      {{"total", {{"sessions", 1}, {"wall_s", 0.09}, {"copied_bytes", 0}, {"costed", false}}}});
  EXPECT_EQ(verified["reason"],
            copy.path().string() +
                "/stage.json accounts for copying 0.0 of its 5.0 MB: the rest was there before "
                "mmprof stage first ran, so what the copy cost is not known");
  // The same from a stage.json of before sessions were kept (its one session copied nothing).
  EXPECT_EQ(write(json::object())["reason"], verified["reason"]);

  const json other = write({{"source", "/nfs/other"}});
  EXPECT_EQ(other["reason"], copy.path().string() +
                                 "/stage.json is a copy of /nfs/other, not of the base arm's "
                                 "data.path /nfs/data");
  const json cut = write({{"complete", false}, {"already_there_files", 4}});
  EXPECT_EQ(cut["reason"], "the copy in " + copy.path().string() +
                               " is not complete (4 of 10 files in its last session): run mmprof "
                               "stage again to finish it");
}

TEST(ReportStaging, SaysWhyWhenAFigureIsMissing) {
  test::TempDir copy;  // no stage.json
  RunData base;
  base.manifest["data"]["samples"] = 1000;
  const json s = staging_break_even(experiment(copy.path().string(), 25, 10, 40), base);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NE(s[0]["reason"].get<std::string>().find("mmprof stage SRC"), std::string::npos);
  EXPECT_TRUE(staging_break_even(json::object(), base).empty());
}

}  // namespace
}  // namespace mmprof::report
