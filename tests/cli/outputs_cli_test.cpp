// What mmprof does with its outputs and with inputs it did not write, through the binary: --out
// belongs to one process (a second mmprof into it is refused while the first runs; a run already
// there is replaced only with --force, its stale files removed first, another file kept); a full
// disk stops the run with its own exit code and every row written stays whole; the worker fault
// that stops a run is counted with the others; a report input that is not what mmprof writes (a
// string for a figure, 1e999, a YAML alias bomb) is refused naming the file and key.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test::read_text;
using test::write_text;

size_t lines_in(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Every line of a CSV file ends with a newline and has the header's number of fields (no field
// of these files is quoted).
void expect_whole_rows(const fs::path& csv) {
  const std::string text = read_text(csv);
  ASSERT_FALSE(text.empty()) << csv;
  EXPECT_EQ(text.back(), '\n') << csv << " ends in the middle of a row";
  std::istringstream lines(text);
  std::string header;
  std::getline(lines, header);
  const auto fields = [](const std::string& s) { return std::count(s.begin(), s.end(), ','); };
  int row = 1;
  for (std::string line; std::getline(lines, line); ++row)
    EXPECT_EQ(fields(line), fields(header)) << csv << " row " << row << ": " << line;
}

class OutputsCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    const auto gen = test::run_mmprof("gen --out " + test::shell_quote(dir_->path() / "ds") +
                                      " --images 12 --videos 0 --layout files --seed 5");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static fs::path scratch() { return dir_->path(); }

  // A short baseline's arguments; `out` is a shell word (quoted, or a variable).
  static std::string run_args(const std::string& out, const std::string& extra = "") {
    return " baseline --data " + test::shell_quote(scratch() / "ds/files") +
           " --set loader.batch_size=4 --set phases.warmup_steps=0 --set phases.steps=6 --out " +
           out + " " + extra;
  }
  static test::CommandResult run(const fs::path& out, const std::string& extra = "") {
    return test::run_mmprof(run_args(test::shell_quote(out), extra));
  }

  static std::unique_ptr<test::TempDir> dir_;
};

std::unique_ptr<test::TempDir> OutputsCli::dir_;

TEST_F(OutputsCli, ARunAlreadyInOutIsReplacedOnlyWithForceAndItsStaleFilesGo) {
  const fs::path out = scratch() / "again";
  ASSERT_EQ(run(out).exit_code, 0);
  write_text(out / "trace.json", "stale trace of an earlier mmprof trace\n");
  write_text(out / "report.md", "stale report\n");
  write_text(out / "notes.txt", "the user's own notes\n");

  const auto refused = run(out);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find(out.string() + " already holds an mmprof run"), std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("--force"), std::string::npos) << refused.output;
  EXPECT_EQ(lines_in(refused.output), 1u) << refused.output;
  EXPECT_EQ(read_text(out / "trace.json"), "stale trace of an earlier mmprof trace\n");

  const auto forced = run(out, "--force");
  ASSERT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_FALSE(fs::exists(out / "trace.json"));
  EXPECT_FALSE(fs::exists(out / "report.md"));
  EXPECT_EQ(read_text(out / "notes.txt"), "the user's own notes\n");
  EXPECT_EQ(test::read_json(out / "summary.json")["status"], "complete");
}

// Issue 34 item 7: a folder of the user's that only looks like a run (a manifest.json of its
// own, gpu/ and hook/ folders, a report.html) is not mmprof's: --force deletes none of it.
TEST_F(OutputsCli, ForceNeverDeletesAFolderThatOnlyLooksLikeARun) {
  const fs::path out = scratch() / "lookalike";
  fs::create_directories(out / "gpu");
  fs::create_directories(out / "hook");
  write_text(out / "gpu" / "kernel.cu", "mine\n");
  write_text(out / "hook" / "hook.py", "mine\n");
  write_text(out / "manifest.json", "{\"name\": \"my project\"}\n");
  write_text(out / "report.html", "<p>mine</p>\n");
  const auto r = run(out, "--force");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(out.string() + " exists and is not an mmprof run directory (its "
                                         "manifest.json is not mmprof's)"),
            std::string::npos)
      << r.output;
  fs::remove(out / "manifest.json");  // without the manifest: folders of mmprof's names
  const auto again = run(out, "--force");
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("(no manifest.json of mmprof's)"), std::string::npos) << again.output;
  EXPECT_EQ(read_text(out / "gpu" / "kernel.cu"), "mine\n");
  EXPECT_EQ(read_text(out / "hook" / "hook.py"), "mine\n");
  EXPECT_EQ(read_text(out / "report.html"), "<p>mine</p>\n");
}

TEST_F(OutputsCli, ASecondMmprofIntoTheSameOutIsRefusedWhileTheFirstRuns) {
  const fs::path out = scratch() / "shared";
  const fs::path log = scratch() / "first.log";
  // The first run stops at its first sample (its worker hangs there until SIGINT).
  const std::string first_key = "000000";
  const std::string script = fmt::format(
      "MMPROF_TEST_HANG_AT={} {} {} </dev/null >{} 2>&1 & p=$!; i=0; "
      "until [ -f {} ]; do i=$((i+1)); [ $i -gt 600 ] && break; sleep 0.05; done; "
      "{} {} </dev/null; echo \"second exit $?\"; kill -INT $p; wait $p; echo \"first exit $?\"",
      first_key, test::shell_quote(test::mmprof_bin()),
      run_args(test::shell_quote(out), "--set loader.shuffle=false"), test::shell_quote(log),
      test::shell_quote(out / "manifest.json"), test::shell_quote(test::mmprof_bin()),
      run_args(test::shell_quote(out), "--force"));
  const auto r = test::run_command("(" + script + ")");
  EXPECT_NE(r.output.find("second exit 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(out.string() + " is being written by another mmprof process"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("first exit 130"), std::string::npos) << r.output << read_text(log);
  // The directory is the first run's alone: interrupted, not overwritten by the second.
  EXPECT_EQ(test::read_json(out / "summary.json")["status"], "interrupted");
}

TEST_F(OutputsCli, AFullDiskStopsTheRunWithExitSixKeepingEveryRowWhole) {
  if (test::run_command("unshare -m true").exit_code != 0) {
    MMPROF_SKIP_WITHOUT("mountns", "no private mount namespace here (needs CAP_SYS_ADMIN)");
  }
  // A 384 KiB tmpfs fills within the first steps (the run keeps 256 KiB of it for its last
  // files); what is on it is copied out before the namespace, and the mount with it, goes. The
  // rows of the steps fill it, not the resource samples of a slow start (one a second).
  const fs::path kept = scratch() / "full-disk";
  const fs::path script = scratch() / "full-disk.sh";
  write_text(script, fmt::format("d=$(mktemp -d) && mount -t tmpfs -o size=384k tmpfs \"$d\" || "
                                 "exit 99\n{} {} </dev/null\necho \"exit $?\"\n"
                                 "cp -r \"$d/run\" {}\n",
                                 test::shell_quote(test::mmprof_bin()),
                                 run_args("\"$d/run\"",
                                          "--set phases.steps=400 --set metrics.interval_ms=1000"),
                                 test::shell_quote(kept)));
  const auto r = test::run_command("unshare -m sh " + test::shell_quote(script));
  EXPECT_NE(r.output.find("exit 6"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  for (const char* csv : {"steps.csv", "stages.csv", "digests.csv", "resources.csv", "host.csv"})
    expect_whole_rows(kept / csv);
  EXPECT_GT(lines_in(read_text(kept / "steps.csv")), 1u) << "no step was kept";
  // The room kept for them took the summary and the final manifest: what was measured is there.
  const json summary = test::read_json(kept / "summary.json");
  EXPECT_EQ(summary["status"], "failed");
  EXPECT_NE(summary["message"].get<std::string>().find("No space left on device"),
            std::string::npos);
  EXPECT_TRUE(test::read_json(kept / "manifest.json").contains("config"));
  EXPECT_FALSE(fs::exists(kept / ".mmprof-reserve"));
}

TEST_F(OutputsCli, TheWorkerFaultThatStopsARunIsCountedWithTheOthers) {
  const fs::path out = scratch() / "faults";
  // The worker dies at 000003 every time: the first death is respawned (1 of 1), the second
  // stops the run. stderr told of both; summary.json must list both.
  const auto r = test::run_command(
      "MMPROF_TEST_CRASH_AT=000003 " + test::shell_quote(test::mmprof_bin()) +
      run_args(test::shell_quote(out), "--set loader.max_respawns=1 --set loader.shuffle=false") +
      " </dev/null");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  size_t told = 0;
  for (size_t at = r.output.find("while processing sample 000003"); at != std::string::npos;
       at = r.output.find("while processing sample 000003", at + 1))
    ++told;
  EXPECT_EQ(told, 2u) << r.output;
  const json summary = test::read_json(out / "summary.json");
  EXPECT_EQ(summary["status"], "failed");
  EXPECT_EQ(summary["reliability"]["worker_faults"].size(), told) << summary["reliability"];
  EXPECT_EQ(summary["reliability"]["respawns"], 1);
}

class ReportInputsCli : public OutputsCli {
 protected:
  // A copy of a complete run whose summary.json holds `value` at `pointer`.
  static fs::path run_with(const std::string& pointer, const std::string& value) {
    static int n = 0;
    const fs::path base = scratch() / "base-run";
    if (!fs::exists(base / "summary.json")) {
      EXPECT_EQ(run(base).exit_code, 0);
    }
    const fs::path copy = scratch() / ("edited-" + std::to_string(n++));
    fs::copy(base, copy, fs::copy_options::recursive);
    std::string text = test::read_json(copy / "summary.json").dump(1);
    json edited = json::parse(text);
    edited[json::json_pointer(pointer)] = "@@";
    text = edited.dump(1);
    text.replace(text.find("\"@@\""), 4, value);
    write_text(copy / "summary.json", text);
    return copy;
  }
};

TEST_F(ReportInputsCli, AFigureThatIsNoNumberIsRefusedNamingTheFileAndKey) {
  for (const std::string pointer : {"/throughput/pipeline/samples_per_s",
                                    "/latency_ms/stages/decode/mean", "/cpu/utilization_cores"}) {
    const fs::path run = run_with(pointer, "\"fast\"");
    const auto r = test::run_mmprof("report " + test::shell_quote(run));
    EXPECT_EQ(r.exit_code, 3) << pointer << ": " << r.output;
    EXPECT_NE(r.output.find((run / "summary.json").string()), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(pointer), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
    EXPECT_EQ(lines_in(r.output), 1u) << r.output;
  }
}

TEST_F(ReportInputsCli, ANumberNoDoubleHoldsIsRefusedNamingTheFile) {
  const fs::path run = run_with("/throughput/pipeline/samples_per_s", "1e999");
  const auto r = test::run_mmprof("report " + test::shell_quote(run));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find((run / "summary.json").string() + " is not valid JSON"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

TEST_F(ReportInputsCli, AYamlAliasBombIsRefusedBeforeItExpands) {
  // Nine levels of nine aliases: 9^9 = 387 million leaves from 500 bytes.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string prev = fmt::format("*a{}", i - 1);
    bomb += fmt::format("a{0}: &a{0} [{1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}]\n", i, prev);
  }
  const fs::path gate = scratch() / "bomb.yaml";
  write_text(gate, bomb);
  const fs::path run = run_with("/status", "\"complete\"");
  const auto r =
      test::run_mmprof("report " + test::shell_quote(run) + " --gate " + test::shell_quote(gate));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(gate.string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("expands to more than"), std::string::npos) << r.output;
  // The same bound guards a configuration.
  const auto c = test::run_mmprof("baseline --config " + test::shell_quote(gate));
  EXPECT_EQ(c.exit_code, 2) << c.output;
  EXPECT_NE(c.output.find("config file " + gate.string() + " expands to more than"),
            std::string::npos)
      << c.output;
}

}  // namespace
}  // namespace mmprof
