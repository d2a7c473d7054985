// `mmprof report` end to end through the built binary: the gate's exit codes and one-line
// reasons, bad input named in one sentence, the embedded default, a real baseline run, and the
// HTML report opened in headless Chromium (no console errors, charts present, file names
// escaped, a screenshot taken).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

using test::text_or_empty;

namespace fs = std::filesystem;
using nlohmann::json;
using test::shell_quote;

const fs::path kFixtures = test::source_dir() / "tests/fixtures/report";

std::string fixture(const char* name) {
  return shell_quote(kFixtures / name);
}

// The gate's reason is the output's last line.
std::string last_line(const std::string& out) {
  std::string s = out;
  while (!s.empty() && s.back() == '\n')
    s.pop_back();
  return s.substr(s.rfind('\n') + 1);
}

class ReportCli : public ::testing::Test {
 protected:
  test::TempDir tmp;
  std::string out() const { return "--out " + shell_quote(tmp.path() / "out"); }
  std::string criteria(const std::string& yaml) const {
    const fs::path p = tmp.path() / "criteria.yaml";
    std::ofstream(p) << yaml;
    return shell_quote(p);
  }
};

TEST_F(ReportCli, GateOnExperimentExitsOneFiveOrZero) {
  auto r = test::run_mmprof("report " + fixture("experiment") + " --gate default " + out());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(last_line(r.output),
            "regression: loader.in_order=false: step p99 grew 31.8 % (max 10 %)");
  // Tolerating the p99 growth leaves the undecided prefetch arm: inconclusive.
  r = test::run_mmprof("report " + fixture("experiment") + " --gate " +
                       criteria("adopt: {max_p99_regression_pct: 50}\n") + " " + out());
  EXPECT_EQ(r.exit_code, 5) << r.output;  // its own code: 2 is a usage error
  EXPECT_EQ(last_line(r.output).rfind("inconclusive: loader.prefetch_factor=4", 0), 0u) << r.output;
  // The criteria may make it pass or fail, but not look like a usage error.
  r = test::run_mmprof(
      "report " + fixture("experiment") + " --gate " +
      criteria("adopt: {max_p99_regression_pct: 50}\ngate: {inconclusive_exit: 2}\n") + " " +
      out());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("gate.inconclusive_exit is 2; it must be 0 (pass), 1 (fail) or 5"),
            std::string::npos)
      << r.output;
  r = test::run_mmprof(
      "report " + fixture("experiment") + " --gate " +
      criteria("adopt: {max_p99_regression_pct: 50}\ngate: {inconclusive_exit: 0}\n") + " " +
      out());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Without --gate the report is written and the exit is 0 whatever it found.
  r = test::run_mmprof("report " + fixture("experiment") + " " + out());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const json report = json::parse(text_or_empty(tmp.path() / "out/report.json"));
  EXPECT_EQ(report["schema"], "mmprof.report/2");
  EXPECT_EQ(report["gate"]["exit_code"], 1);
}

TEST_F(ReportCli, JsonPrintsReportJsonAloneAndKeepsTheGateExit) {
  const auto r =
      test::run_mmprof_split("report " + fixture("experiment") + " --gate default --json " + out());
  EXPECT_EQ(r.exit_code, 1) << r.output << r.errors;
  const json printed = json::parse(r.output);  // throws (failing the test) on any text around it
  EXPECT_EQ(printed, json::parse(text_or_empty(tmp.path() / "out/report.json")));
  EXPECT_EQ(printed["gate"]["exit_code"], 1);
  // report.json holds a directory's absolute, normal path in `dir`, and the path as given in
  // `name` (what report.md shows).
  const fs::path given = kFixtures / ".." / "report" / "experiment";
  const auto again = test::run_mmprof_split("report " + shell_quote(given) + " --json " + out());
  const json doc = json::parse(again.output);
  const json& x = doc["experiments"][0];
  EXPECT_EQ(x["dir"], (kFixtures / "experiment").string()) << x;
  EXPECT_EQ(x["name"], given.string()) << x;
}

// Several inputs: a line per input read in a log (stderr is not a terminal here), the gate on
// stdout; --quiet leaves only the files and the exit code.
TEST_F(ReportCli, ManyInputsShowProgressInALogAndQuietPrintsNothing) {
  const std::string inputs = fixture("run-input-bound") + " " + fixture("run-slower") + " " +
                             fixture("experiment") + " --gate default " + out();
  auto r = test::run_mmprof_split("report " + inputs);
  EXPECT_EQ(r.exit_code, 1) << r.output << r.errors;
  for (const std::string& line :
       {"mmprof: read input 1/3: " + (kFixtures / "run-input-bound").string() + "; ETA",
        "mmprof: read input 3/3: " + (kFixtures / "experiment").string() + "; ETA"})
    EXPECT_NE(r.errors.find(line), std::string::npos) << r.errors;
  EXPECT_NE(r.output.find("report: "), std::string::npos) << r.output;
  r = test::run_mmprof_split("report " + inputs + " --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.output << r.errors;
  EXPECT_EQ(r.output, "");
  EXPECT_EQ(r.errors, "");
  EXPECT_TRUE(fs::exists(tmp.path() / "out/report.html"));
  // One input: nothing to count.
  r = test::run_mmprof_split("report " + fixture("experiment") + " " + out());
  EXPECT_EQ(r.errors.find("read input"), std::string::npos) << r.errors;
}

TEST_F(ReportCli, CompareAndRunGates) {
  auto r = test::run_mmprof("report --compare " + fixture("run-input-bound") + " " +
                            fixture("run-slower") + " --gate default " + out());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(last_line(r.output).rfind("regression: compare: time per sample changed", 0), 0u)
      << r.output;
  r = test::run_mmprof("report --compare " + fixture("run-slower") + " " +
                       fixture("run-input-bound") + " --gate default " + out());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = test::run_mmprof("report " + fixture("run-input-bound") + " --gate default " + out());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // Nothing compared: the run fails the stall criterion, it is no "regression".
  EXPECT_EQ(last_line(r.output).rfind("fail: run ", 0), 0u) << r.output;
  EXPECT_NE(last_line(r.output).find(
                "waits for data 58.5 % > 20 %: fails the stall criterion (run.max_stall_fraction)"),
            std::string::npos)
      << r.output;
}

TEST_F(ReportCli, BadInputIsNamedInOneSentence) {
  auto r = test::run_mmprof("report " + shell_quote(tmp.path() / "missing") + " " + out());
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("missing is not a directory"), std::string::npos) << r.output;
  const fs::path broken = tmp.path() / "broken";
  fs::copy(kFixtures / "run-input-bound", broken);
  std::ofstream(broken / "summary.json") << "{\"schema\": \"mmprof.summary/2\",";
  r = test::run_mmprof("report " + shell_quote(broken) + " " + out());
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find((broken / "summary.json").string() + " is not valid JSON"),
            std::string::npos)
      << r.output;
  r = test::run_mmprof("report " + fixture("run-input-bound") + " --gate " +
                       criteria("adopt: {min_gain: 1}\n") + " " + out());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown key 'adopt.min_gain'"), std::string::npos) << r.output;
  r = test::run_mmprof("report --compare " + fixture("experiment") + " " + fixture("run-slower") +
                       " " + out());
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST_F(ReportCli, EmbeddedDefaultTakesTheLatestRunOrSaysWhatToPass) {
  auto r = test::run_command("cd " + shell_quote(tmp.path()) + " && " +
                             shell_quote(test::mmprof_bin()) + " report </dev/null");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no run or experiment directory under runs/"), std::string::npos)
      << r.output;
  fs::create_directories(tmp.path() / "runs");
  fs::copy(kFixtures / "run-input-bound", tmp.path() / "runs/baseline-1");
  r = test::run_command("cd " + shell_quote(tmp.path()) + " && " + shell_quote(test::mmprof_bin()) +
                        " report </dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(tmp.path() / "runs/baseline-1/report.html"));
}

// A real baseline (short phases on the embedded default dataset), then its report: the summary
// figures must agree with the run's own CSV files.
TEST_F(ReportCli, RealBaselineRun) {
  const fs::path run = tmp.path() / "run";
  auto r = test::run_mmprof(
      "baseline --set phases.steps=6 --set phases.warmup_steps=2 "
      "--set step.kind=sleep --set step.ms=5 --set loader.batch_size=8 --out " +
      shell_quote(run));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = test::run_mmprof("report " + shell_quote(run));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = json::parse(text_or_empty(run / "report.json"));
  const json& a = report["runs"][0];
  EXPECT_TRUE(a["classification"]["primary"].is_string());
  // stall and the three stage means; per format its count and mean decode, per worker (2) its
  // samples, bytes and stage time.
  int formats = 0, workers = 0;
  for (const auto& c : a["cross_checks"]) {
    EXPECT_EQ(c["ok"], true) << c.dump();
    formats += c["what"].get<std::string>().rfind("stage_breakdown.by_format[", 0) == 0;
    workers += c["what"].get<std::string>().rfind("workers_balance.workers[", 0) == 0;
  }
  EXPECT_GE(formats, 2);
  EXPECT_EQ(workers, 6);
  EXPECT_EQ(a["cross_checks"].size(), 4u + static_cast<size_t>(formats + workers));
  EXPECT_FALSE(a["charts"]["memory"].empty());
  EXPECT_GT(fs::file_size(run / "report.md"), 0u);
}

TEST_F(ReportCli, HtmlOpensInHeadlessChromium) {
  auto r = test::run_mmprof("report " + fixture("run-input-bound") + " " + fixture("experiment") +
                            " " + out());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path html = tmp.path() / "out/report.html";
  ASSERT_EQ(test::run_command("command -v chromium").exit_code, 0)
      << "chromium is missing: scripts/install-deps installs it";
  const std::string chromium =
      "chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 ";
  const std::string url = shell_quote("file://" + html.string());
  r = test::run_command("HOME=" + shell_quote(tmp.path()) + " timeout 120 " + chromium +
                        "--dump-dom " + url);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Console messages (errors, CSP violations) are logged as INFO:CONSOLE lines.
  EXPECT_EQ(r.output.find(":CONSOLE"), std::string::npos) << r.output;
  size_t svgs = 0;
  for (size_t at = 0; (at = r.output.find("<svg", at)) != std::string::npos; ++at)
    ++svgs;
  EXPECT_EQ(svgs, 5u);  // stages, percentiles, time per step, memory, arms
  // Charts 960 px wide: more than half of a 1400 px page (they were 640, under half).
  size_t wide = 0;
  for (size_t at = 0; (at = r.output.find(" width=\"960\" height=", at)) != std::string::npos; ++at)
    ++wide;
  EXPECT_EQ(wide, svgs) << r.output.substr(r.output.find("<svg"), 300);
  EXPECT_NE(r.output.find("&lt;script&gt;alert(1)&lt;/script&gt;.jpg"), std::string::npos);
  EXPECT_EQ(r.output.find("<script"), std::string::npos);
  const fs::path shot = tmp.path() / "report.png";
  r = test::run_command("HOME=" + shell_quote(tmp.path()) + " timeout 120 " + chromium +
                        "--window-size=1400,2600 --screenshot=" + shell_quote(shot) + " " + url);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find(":CONSOLE"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(shot));
  EXPECT_GT(fs::file_size(shot), 10'000u);
}

}  // namespace
}  // namespace mmprof
