// Output files (atomic JSON, flushed append files, CSV quoting) and RunWriter's --out checks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mmprof/error.hpp"
#include "rundir/run_writer.hpp"
#include "support/test_support.hpp"
#include "util/files.hpp"

namespace mmprof {
namespace {

using test::read_text;

namespace fs = std::filesystem;

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(RunFilesTest, AtomicWriteCreatesTheFileAndLeavesNoTemp) {
  test::TempDir dir;
  const fs::path file = dir.path() / "summary.json";
  write_file_atomic(file, "first\n");
  EXPECT_EQ(read_text(file), "first\n");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"summary.json"});
}

TEST(RunFilesTest, AtomicWriteReplacesTheWholeContent) {
  test::TempDir dir;
  const fs::path file = dir.path() / "summary.json";
  write_file_atomic(file, "a much longer first version\n");
  write_file_atomic(file, "short\n");  // no stale tail from the longer one
  EXPECT_EQ(read_text(file), "short\n");
  write_file_atomic(file, "");
  EXPECT_EQ(read_text(file), "");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"summary.json"});
}

// rename() swaps the directory entry: a reader holding the old file keeps a complete old version.
TEST(RunFilesTest, AtomicWriteNeverExposesAPartialFileToAnOpenReader) {
  test::TempDir dir;
  const fs::path file = dir.path() / "manifest.json";
  write_file_atomic(file, "old content\n");
  std::ifstream reader(file);
  write_file_atomic(file, "new content that is longer than the old one\n");
  std::string line;
  std::getline(reader, line);
  EXPECT_EQ(line, "old content");
  EXPECT_EQ(read_text(file), "new content that is longer than the old one\n");
}

TEST(RunFilesTest, AtomicWriteIntoAMissingFolderIsAnOutputErrorNamingThePath) {
  test::TempDir dir;
  const fs::path file = dir.path() / "no-such-dir" / "summary.json";
  try {
    write_file_atomic(file, "x");
    FAIL() << "did not throw";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find((dir.path() / "no-such-dir").string()), std::string::npos)
        << e.what();
  }
}

TEST(RunFilesTest, JsonIsWrittenAtomicallyAndParsesBack) {
  test::TempDir dir;
  const fs::path file = dir.path() / "summary.json";
  const nlohmann::json value = {{"schema", "mmprof.summary/2"}, {"n", 3}, {"x", nullptr}};
  write_json_atomic(file, value);
  EXPECT_EQ(nlohmann::json::parse(read_text(file)), value);
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"summary.json"});
}

// Binary arithmetic's noise is not written as a figure (issue 33, item 7); a figure's own digits
// are, up to 13 significant ones; integers (pids, nanoseconds) stay exact.
TEST(RunFilesTest, JsonFiguresAreWrittenWithoutTheNoiseOfBinaryArithmetic) {
  const nlohmann::json value = {{"a", 0.1 + 0.2},
                                {"b", 4.77 + 1e-15},
                                {"c", 0.0626377 + 1e-17},
                                {"d", 1796000000.123456},
                                {"e", 2.0 / 3.0},
                                {"f", 1e-300 * 3.14},
                                {"g", 1733500000123456789LL},
                                {"h", {-0.38000000000000006, 0.0}}};
  const auto j = nlohmann::json::parse(json_text(value));
  EXPECT_EQ(j["a"].dump(), "0.3");
  EXPECT_EQ(j["b"].dump(), "4.77");
  EXPECT_EQ(j["c"].dump(), "0.0626377");
  EXPECT_EQ(j["d"].dump(), "1796000000.1235");
  EXPECT_EQ(j["e"].dump(), "0.6666666666667");
  EXPECT_EQ(j["f"].dump(), "3.14e-300");
  EXPECT_EQ(j["g"].get<int64_t>(), 1733500000123456789LL);
  EXPECT_EQ(j["h"].dump(), "[-0.38,0.0]");
  test::TempDir dir;
  write_json_atomic(dir.path() / "x.json", value);
  EXPECT_EQ(read_text(dir.path() / "x.json"), json_text(value) + "\n");
  // A figure read back from a file and written again (a trial's rate into experiment.json) is
  // the same figure: writing is idempotent, over a spread of magnitudes and digits.
  uint64_t state = 42;
  for (int i = 0; i < 100000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double v = static_cast<double>(state >> 11) / 9007199254740992.0 *
                     std::pow(10.0, static_cast<double>(static_cast<int>(state % 17) - 6));
    const std::string once = json_text(v);
    ASSERT_EQ(json_text(nlohmann::json::parse(once)), once) << v;
  }
}

// Issue 34, item 2: a symlink or a hard link planted at an output's name (or its .tmp) is replaced,
// its target left as it was; a directory at the name is refused.
TEST(RunFilesTest, OutputsNeverWriteThroughAPlantedLink) {
  test::TempDir dir;
  const fs::path victim = dir.path() / "victim", out = dir.path() / "out";
  fs::create_directories(out);
  test::write_text(victim, "keep\n");
  fs::create_symlink(victim, out / "report.md.tmp");
  write_file_atomic(out / "report.md", "report\n");
  fs::create_hard_link(victim, out / "steps.csv");
  { AppendFile csv(out / "steps.csv", "a,b\n"); }
  fs::create_symlink(victim, out / "log");
  const int fd = open_new_output(out / "log");
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ::close(fd);
  EXPECT_EQ(read_text(victim), "keep\n");
  EXPECT_EQ(read_text(out / "report.md"), "report\n");
  EXPECT_EQ(read_text(out / "steps.csv"), "a,b\n");
  EXPECT_FALSE(fs::is_symlink(out / "log"));
  fs::create_directories(out / "dir");
  EXPECT_EQ(open_new_output(out / "dir"), -1);
  EXPECT_EQ(errno, EISDIR);
}

TEST(RunFilesTest, JsonWithInvalidUtf8IsStillWritten) {
  test::TempDir dir;
  const fs::path file = dir.path() / "manifest.json";
  const nlohmann::json value = {{"path", std::string("bad\xFF\xFEname")}};
  ASSERT_NO_THROW(write_json_atomic(file, value));
  const auto parsed = nlohmann::json::parse(read_text(file));
  EXPECT_TRUE(parsed["path"].is_string());
}

TEST(RunFilesTest, AppendFileWritesHeaderAndFlushesEveryWrite) {
  test::TempDir dir;
  const fs::path path = dir.path() / "steps.csv";
  AppendFile file(path, "a,b\n");
  EXPECT_EQ(file.path(), path);
  // Read back while the file is still open: what was written is on disk already.
  EXPECT_EQ(read_text(path), "a,b\n");
  file.write("1,2\n");
  EXPECT_EQ(read_text(path), "a,b\n1,2\n");
  file.write("3,4\n");
  EXPECT_EQ(read_text(path), "a,b\n1,2\n3,4\n");
}

TEST(RunFilesTest, AppendFileWithoutHeaderStartsEmpty) {
  test::TempDir dir;
  const fs::path path = dir.path() / "errors.jsonl";
  {
    AppendFile file(path, "");
    EXPECT_TRUE(fs::exists(path));
    EXPECT_EQ(fs::file_size(path), 0u);
    file.write("{}\n");
  }
  EXPECT_EQ(read_text(path), "{}\n");
}

TEST(RunFilesTest, AppendFileInAMissingFolderIsAnOutputError) {
  test::TempDir dir;
  EXPECT_THROW(AppendFile(dir.path() / "missing" / "steps.csv", "h\n"), OutputError);
}

TEST(RunFilesTest, CsvFieldLeavesPlainTextAlone) {
  EXPECT_EQ(csv_field("000123"), "000123");
  EXPECT_EQ(csv_field("dir/key with spaces"), "dir/key with spaces");
  EXPECT_EQ(csv_field(""), "");
}

TEST(RunFilesTest, CsvFieldQuotesPerRfc4180) {
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("\""), "\"\"\"\"");
  EXPECT_EQ(csv_field("line\nbreak"), "\"line\nbreak\"");
  EXPECT_EQ(csv_field("cr\rhere"), "\"cr\rhere\"");
}

TEST(RunFilesTest, RunWriterCreatesMissingParents) {
  test::TempDir dir;
  const fs::path run = dir.path() / "runs" / "a" / "b";
  const rundir::RunWriter writer{run};
  EXPECT_TRUE(fs::is_directory(run));
}

TEST(RunFilesTest, RunWriterAcceptsAnEmptyFolder) {
  test::TempDir dir;
  EXPECT_NO_THROW(rundir::RunWriter{dir.path()});
}

TEST(RunFilesTest, RunWriterRefusesAnExistingRunUnlessForcedThenRemovesOnlyMmprofsFiles) {
  test::TempDir dir;
  for (const char* name :
       {"summary.json", "trace.json", "report.html", "steps.csv.tmp", "notes.txt"})
    write_file_atomic(dir.path() / name, "old\n");
  // An earlier run: mmprof's by its manifest's schema (a manifest.json of another kind is not).
  write_file_atomic(dir.path() / "manifest.json", R"({"schema": "mmprof.manifest/2"})");
  fs::create_directories(dir.path() / "hook");
  try {
    const rundir::RunWriter writer{dir.path()};
    FAIL() << "did not throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_text(dir.path() / "trace.json"), "old\n");  // refused: nothing touched
  const rundir::RunWriter writer{dir.path(), {.force = true}};
  EXPECT_EQ(names_in(dir.path()),
            (std::vector<std::string>{".mmprof-reserve", "digests.csv", "errors.jsonl", "host.csv",
                                      "notes.txt", "resources.csv", "stages.csv", "steps.csv"}));
  EXPECT_EQ(read_text(dir.path() / "notes.txt"), "old\n");
}

TEST(RunFilesTest, RunWriterRefusesAFolderAnotherWriterHolds) {
  test::TempDir dir;
  const rundir::RunWriter first{dir.path() / "run"};
  try {
    const rundir::RunWriter second{dir.path() / "run", {.force = true}};
    FAIL() << "did not throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("being written by another mmprof process"),
              std::string::npos)
        << e.what();
  }
  // The lock is the directory's: any process (here, flock on a descriptor of our own) sees it.
  const int fd = ::open((dir.path() / "run").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_NE(::flock(fd, LOCK_EX | LOCK_NB), 0);
  ::close(fd);
}

// A write the kernel takes only in part (a full disk; here the file size limit, which fails the
// same way and needs no mount) leaves the file as it was before that write, and names it.
TEST(RunFilesTest, AnAppendFileKeepsOnlyWholeWritesWhenTheDiskFills) {
  test::TempDir dir;
  const fs::path file = dir.path() / "steps.csv";
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  rlimit small = old;
  small.rlim_cur = 100;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  {
    const std::string row = std::string(29, 'x') + "\n";  // 30 bytes
    AppendFile f(file, row);
    try {
      for (int i = 0; i < 10; ++i)
        f.write(row);
    } catch (const OutputError& e) {
      error = e.what();
    }
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(error.find(file.string()), std::string::npos) << error;
  EXPECT_NE(error.find("File too large"), std::string::npos) << error;
  // The header and 2 rows fit under 100 bytes; the third row's first 10 bytes were cut off again.
  EXPECT_EQ(fs::file_size(file), 90u);
  EXPECT_EQ(read_text(file).back(), '\n');
}

TEST(RunFilesTest, RunWriterRefusesANonEmptyFolderThatIsNoRun) {
  test::TempDir dir;
  write_file_atomic(dir.path() / "thesis.tex", "precious\n");
  try {
    const rundir::RunWriter writer{dir.path()};
    FAIL() << "did not throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
  }
  // Nothing was touched.
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"thesis.tex"});
  EXPECT_EQ(read_text(dir.path() / "thesis.tex"), "precious\n");
}

TEST(RunFilesTest, RunWriterRefusesARegularFile) {
  test::TempDir dir;
  const fs::path file = dir.path() / "not-a-dir";
  write_file_atomic(file, "x");
  EXPECT_THROW(rundir::RunWriter{file}, Error);
  EXPECT_EQ(read_text(file), "x");
}

}  // namespace
}  // namespace mmprof
