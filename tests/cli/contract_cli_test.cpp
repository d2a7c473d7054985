// The command-line contract through the built binary (issue 16): the exit-code table in --help,
// --version, one error style for every usage error (no CLI11 exception names, no help dump, a
// did-you-mean for a mistyped command, option or config key, a pointer to --help, compact
// bounds), and --json leaving stdout to the JSON document alone. Each test takes well under a
// second: nothing here measures a pipeline.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::shell_quote;

// A usage error's whole output: one "mmprof: error: " sentence, the expected hint line (if
// any), the pointer to --help, and nothing else (no help text, no CLI11 exception name).
void expect_usage_error(const test::CommandResult& r, const std::string& sentence,
                        const std::string& hint, const std::string& help) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "mmprof: error: " + sentence + "\n" + (hint.empty() ? "" : hint + "\n") +
                          "see '" + help + " --help'\n");
}

class ContractCli : public ::testing::Test {
 protected:
  test::TempDir tmp;
  std::string out(const char* name) const { return shell_quote(tmp.path() / name); }
};

TEST_F(ContractCli, HelpDocumentsEveryExitCode) {
  const auto r = test::run_mmprof("--help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* line :
       {"\n  0    success", "\n  1    the run could not continue", "\n  2    usage",
        "\n  3    an input", "\n  4    unavailable", "\n  5    report --gate: inconclusive",
        "\n  6    an output could not be written", "\n  130  interrupted"}) {
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  }
}

TEST_F(ContractCli, VersionNamesTheProgramItsVersionAndCommit) {
  const auto r = test::run_mmprof("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_match(
      r.output, std::regex(R"(mmprof \d+\.\d+\.\d+ \(([0-9a-f]{12}|unknown)(-dirty)?\)\n)")))
      << r.output;
}

TEST_F(ContractCli, AMissingOrMistypedCommandIsOneSentenceWithTheNearestName) {
  expect_usage_error(
      test::run_mmprof(""),
      "a command is required: gen, shard, stage, baseline, trace, ab, inspect, report", "",
      "mmprof");
  expect_usage_error(test::run_mmprof("baselin"), "unknown command 'baselin'",
                     "did you mean 'baseline'?", "mmprof");
  expect_usage_error(test::run_mmprof("--verison"), "mmprof has no option '--verison'",
                     "did you mean '--version'?", "mmprof");
  // Nothing near: no suggestion.
  expect_usage_error(test::run_mmprof("frobnicate"), "unknown command 'frobnicate'", "", "mmprof");
}

TEST_F(ContractCli, AMistypedOptionIsNamedWithTheNearestOne) {
  expect_usage_error(test::run_mmprof("gen --imags 3 --out " + out("ds")),
                     "mmprof gen has no option '--imags'", "did you mean '--images'?",
                     "mmprof gen");
  expect_usage_error(test::run_mmprof("report --gatee=default"),
                     "mmprof report has no option '--gatee'", "did you mean '--gate'?",
                     "mmprof report");
  expect_usage_error(test::run_mmprof("gen"), "--out is required", "", "mmprof gen");
  EXPECT_FALSE(fs::exists(tmp.path() / "ds"));
}

TEST_F(ContractCli, OptionBoundsArePrintedCompactly) {
  // CLI::NonNegativeNumber printed the largest double in full (385 characters).
  expect_usage_error(test::run_mmprof("gen --out " + out("ds") + " --images -5"),
                     "--images: must be >= 0, got -5", "", "mmprof gen");
  expect_usage_error(test::run_mmprof("gen --out " + out("ds") + " --images 2.5"),
                     "--images must be an integer, got 2.5", "", "mmprof gen");
  expect_usage_error(test::run_mmprof("gen --out " + out("ds") + " --png-fraction 1.5"),
                     "--png-fraction: must be in [0, 1], got 1.5", "", "mmprof gen");
  expect_usage_error(test::run_mmprof("baseline --steps 0"), "--steps: must be > 0, got 0", "",
                     "mmprof baseline");
  expect_usage_error(test::run_mmprof("baseline --steps many"),
                     "--steps: must be a number > 0, got 'many'", "", "mmprof baseline");
  EXPECT_FALSE(fs::exists(tmp.path() / "ds"));
}

TEST_F(ContractCli, AMistypedConfigKeyGetsTheNearestKeyInOneLine) {
  const auto r = test::run_mmprof("baseline --set loader.num_worker=2 --out " + out("run"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("mmprof: error: --set: unknown config key 'loader.num_worker' (known "
                           "here: ",
                           0),
            0u)
      << r.output;
  // mmprof's own usage errors stay one line (their sentence names the key).
  EXPECT_NE(r.output.find("); did you mean 'loader.num_workers'?\n"), std::string::npos)
      << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_FALSE(fs::exists(tmp.path() / "run"));
}

TEST_F(ContractCli, ErrorsThatAreNotUsageCarryNoHelpPointer) {
  const auto r = test::run_mmprof("report " + out("missing") + " --out " + out("report"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(r.output.rfind("mmprof: error: ", 0), 0u) << r.output;
  EXPECT_EQ(r.output.find("--help"), std::string::npos) << r.output;
}

TEST_F(ContractCli, GenJsonPrintsDatasetJsonAloneOnStdout) {
  const fs::path ds = tmp.path() / "ds";
  const auto r = test::run_mmprof_split("gen --json --out " + shell_quote(ds) +
                                        " --images 2 --videos 0 --threads 1 --seed 2");
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  const json doc = json::parse(r.output);  // throws (failing the test) on any text around it
  EXPECT_EQ(doc, test::read_json(ds / "dataset.json"));
  EXPECT_EQ(doc["samples"], 2);
  // Without --json: one human line naming the folder, no JSON.
  const auto human = test::run_mmprof_split("gen --out " + out("ds2") +
                                            " --images 2 --videos 0 --threads 1 --seed 2");
  ASSERT_EQ(human.exit_code, 0) << human.output << human.errors;
  EXPECT_EQ(human.output, "dataset: " + (tmp.path() / "ds2").string() +
                              " (2 samples; described in dataset.json)\n");
}

// Issue 33 item 6: gen writes into a new or empty folder; a dataset of its own is replaced only
// with --force, once the new one is whole, and a folder of anyone else's never.
TEST_F(ContractCli, GenReplacesADatasetOnlyWithForceAndNeverAForeignFolder) {
  const fs::path ds = tmp.path() / "ds";
  const std::string gen = "gen -q --out " + shell_quote(ds) + " --videos 0 --threads 1 ";
  ASSERT_EQ(test::run_mmprof(gen + "--images 2 --seed 1").exit_code, 0);
  const std::string before = test::read_text(ds / "dataset.json");
  const auto refused = [](const test::CommandResult& r, const std::string& words) {
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(words), std::string::npos) << r.output;
  };
  auto r = test::run_mmprof(gen + "--images 3 --seed 2");
  refused(r,
          "mmprof: error: --out " + ds.string() + " holds a dataset already; --force replaces it");
  EXPECT_EQ(test::read_text(ds / "dataset.json"), before);  // nothing written
  r = test::run_mmprof(gen + "--images 3 --seed 2 --force");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(test::read_json(ds / "dataset.json")["samples"], 3);
  size_t files = 0;  // the old dataset's files are gone with it: 3 images, 3 captions
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(ds / "files"))
    ++files;
  EXPECT_EQ(files, 6u);
  EXPECT_FALSE(fs::exists(tmp.path() / ".ds.partial"));
  // A file of the user's beside the dataset: --force would delete it, so it refuses.
  std::ofstream(ds / "notes.txt") << "mine\n";
  refused(test::run_mmprof(gen + "--images 2 --force"),
          "holds notes.txt, which mmprof gen did not write");
  EXPECT_TRUE(fs::exists(ds / "notes.txt"));
  // A folder that is not a dataset of gen's: refused even with --force.
  const fs::path mine = tmp.path() / "mine";
  fs::create_directories(mine);
  std::ofstream(mine / "photo.jpg") << "x";
  refused(test::run_mmprof("gen -q --out " + shell_quote(mine) + " --images 1 --videos 0 --force"),
          "is not empty and holds no dataset of mmprof gen");
  EXPECT_TRUE(fs::exists(mine / "photo.jpg"));
}

// Issue 33 item 8 (and issue 34 item 10's class): a file that cannot be read is exit 3, whatever
// option names it, and one that is not a regular file (a FIFO that would block, /dev/zero that
// never ends) is refused at once; a typo of a keyword is a usage error with its did-you-mean; a
// job's own option before a missing `--` gets the hint.
TEST_F(ContractCli, UnreadableFilesAreExitThreeAndTyposTwo) {
  const auto expect = [](const std::string& args, int code, const std::string& words) {
    const auto r = test::run_mmprof(args);
    EXPECT_EQ(r.exit_code, code) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(words), std::string::npos) << args << "\n" << r.output;
  };
  const std::string missing = (tmp.path() / "missing.yaml").string();
  expect("baseline --config " + missing, 3, "cannot read config file " + missing);
  expect("report " + shell_quote(tmp.path()) + " --gate " + missing, 3,
         "cannot read --gate file " + missing + ": No such file or directory");
  expect("report " + shell_quote(tmp.path()) + " --gate defualt", 2,
         "--gate defualt: no such criteria file: did you mean 'default'?");
  const fs::path fifo = tmp.path() / "fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect("baseline --config " + shell_quote(fifo), 3, "it is not a regular file");
  expect("report " + shell_quote(tmp.path()) + " --gate /dev/zero", 3,
         "cannot read --gate file /dev/zero: it is not a regular file");
  expect("ab --config " + shell_quote(tmp.path()) + " --factor loader.num_workers=1,2", 3,
         "it is a folder");
  // A run whose summary.json is a FIFO: refused, not a report that blocks for ever.
  const fs::path run = tmp.path() / "run";
  fs::create_directories(run);
  std::ofstream(run / "manifest.json") << R"({"schema": "mmprof.manifest/2"})";
  ASSERT_EQ(::mkfifo((run / "summary.json").c_str(), 0600), 0);
  expect("report " + shell_quote(run), 3, "summary.json: it is not a regular file");
  expect("baseline python3 train.py --epochs 3", 2,
         "if --epochs is the job's, the job goes after --: mmprof baseline [OPTIONS] -- python "
         "train.py --epochs ...");
}

// Progress on stderr: in a log (not a terminal), one plain line when the work is done; --quiet
// leaves both streams empty; and every subcommand's --help ends with examples.
TEST_F(ContractCli, ProgressIsOneLineInALogAndNothingWhenQuiet) {
  const std::string gen = " --images 3 --videos 0 --threads 1 --seed 2";
  const auto logged = test::run_mmprof_split("gen --out " + out("ds") + gen);
  ASSERT_EQ(logged.exit_code, 0) << logged.output << logged.errors;
  EXPECT_TRUE(
      std::regex_match(logged.errors, std::regex(R"(mmprof: generate: 3 samples in \d+ s\n)")))
      << logged.errors;
  const auto quiet = test::run_mmprof_split("gen --quiet --out " + out("ds2") + gen);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.errors;
  EXPECT_EQ(quiet.output, "");
  EXPECT_EQ(quiet.errors, "");
  EXPECT_TRUE(fs::exists(tmp.path() / "ds2" / "dataset.json"));
}

TEST_F(ContractCli, EverySubcommandsHelpShowsDefaultsAndExamples) {
  for (const char* sub :
       {"gen", "shard", "stage", "baseline", "trace", "ab", "inspect", "report"}) {
    const auto r = test::run_mmprof(std::string(sub) + " --help");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const size_t examples = r.output.find("\nExamples:\n  mmprof " + std::string(sub) + " ");
    EXPECT_NE(examples, std::string::npos) << r.output;
    EXPECT_GE(
        std::count(r.output.begin() + static_cast<std::ptrdiff_t>(examples), r.output.end(), '\n'),
        3)
        << r.output;
  }
  // Defaults next to the options they apply to (CLI11's "=VALUE"), none for an empty list.
  const auto gen = test::run_mmprof("gen --help");
  for (const char* option : {"--layout TEXT:{files,tar,both}=files\n", "--shard-mb FLOAT:> 0=64 ",
                             "--images INT:>= 0=400 "}) {
    EXPECT_NE(gen.output.find(option), std::string::npos) << option << "\n" << gen.output;
  }
  const auto baseline = test::run_mmprof("baseline --help");
  EXPECT_NE(baseline.output.find("  --set TEXT ..."), std::string::npos) << baseline.output;
  EXPECT_EQ(baseline.output.find("=[]"), std::string::npos) << baseline.output;
}

}  // namespace
}  // namespace mmprof
