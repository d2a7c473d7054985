// `mmprof stage SRC DST` through the binary: a copy identical file for file, stage.json's figures
// against the files' sizes, a re-run that copies nothing (size + digest) and one that copies
// exactly the file that changed, the loader reading the copy, a destination without room refused
// before anything is copied, and bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class StageCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    const auto r = test::run_mmprof("gen --quiet --out " + test::shell_quote(dir_->path() / "ds") +
                                    " --images 30 --videos 1 --video-max-s 1 --seed 6");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static fs::path path(const std::string& name) { return dir_->path() / name; }
  static fs::path src() { return path("ds") / "files"; }
  static test::CommandResult stage(const fs::path& dest, const std::string& extra = "") {
    return test::run_mmprof("stage --json " + test::shell_quote(src()) + " " +
                            test::shell_quote(dest) + " " + extra);
  }
  static std::unique_ptr<test::TempDir> dir_;
};

std::unique_ptr<test::TempDir> StageCli::dir_;

TEST_F(StageCli, CopiesEveryFileThenOnlyWhatChanged) {
  auto r = stage(path("copy"), "--threads 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json s = json::parse(r.output);
  EXPECT_EQ(s, test::read_json(path("copy") / "stage.json"));
  uint64_t bytes = 0;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(src())) {
    bytes += fs::file_size(e.path());
    ++files;
    EXPECT_EQ(test::read_bytes(e.path()), test::read_bytes(path("copy") / e.path().filename()))
        << e.path();
  }
  EXPECT_EQ(s["files"], files);
  EXPECT_EQ(s["bytes"], bytes);
  EXPECT_EQ(s["copied_files"], files);
  EXPECT_EQ(s["copied_bytes"], bytes);
  EXPECT_EQ(s["already_there_files"], 0);
  EXPECT_EQ(s["threads"], 3);
  // Free space is the whole file system's (other processes write too): there, not compared.
  EXPECT_GT(s["dest_free_bytes_before"].get<uint64_t>(), 0u);
  EXPECT_GT(s["dest_free_bytes_after"].get<uint64_t>(), 0u);
  // Again: nothing to copy, every file verified by size and digest.
  r = stage(path("copy"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double first_s = s["wall_s"].get<double>();
  s = json::parse(r.output);
  EXPECT_EQ(s["copied_files"], 0);
  EXPECT_EQ(s["already_there_files"], files);
  // What the copy cost is both sessions' (issue 32 case 1: not the verification's alone).
  EXPECT_EQ(s["total"]["sessions"], 2);
  EXPECT_DOUBLE_EQ(s["total"]["wall_s"].get<double>(), first_s + s["wall_s"].get<double>());
  EXPECT_EQ(s["total"]["copied_bytes"], bytes);
  EXPECT_EQ(s["total"]["costed"], true);
  EXPECT_EQ(s["complete"], true);
  // One byte changed in one file (same size), and a cut copy left by an interrupted run: that
  // file alone is copied again, and no .partial stays.
  const fs::path changed = path("copy") / "000004.jpg";
  auto data = test::read_bytes(changed);
  data[data.size() / 2] ^= 0x5a;
  test::write_bytes(changed, data);
  test::write_bytes(path("copy") / "000005.jpg.partial", {1, 2, 3});
  r = stage(path("copy"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  s = json::parse(r.output);
  EXPECT_EQ(s["copied_files"], 1);
  EXPECT_EQ(s["copied_bytes"], data.size());
  EXPECT_EQ(test::read_bytes(changed), test::read_bytes(src() / "000004.jpg"));
  EXPECT_FALSE(fs::exists(path("copy") / "000005.jpg.partial"));
  // The loader reads the copy, stage.json known as mmprof's own (nothing listed as ignored).
  r = test::run_mmprof("baseline --quiet --data " + test::shell_quote(path("copy")) +
                       " --steps 2 --warmup-steps 0 --out " + test::shell_quote(path("run")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(test::read_text(path("run") / "errors.jsonl"), "");
  EXPECT_EQ(test::read_json(path("run") / "manifest.json")["data"]["samples"], 31);
}

// A copy made by something else (cp) and then staged: verified, nothing copied, and stage.json
// says its cost is not known; a stage.json of another source is not added to.
// Issue 34, item 2: a name planted in a shared staging folder (a symlink, or a hard link, at the
// copy's .partial or at the copy itself) cannot make stage write into another file.
TEST_F(StageCli, PlantedLinksInTheDestinationNeverRedirectAWrite) {
  const fs::path dest = path("shared"), victim = path("victim"), linked = path("linked");
  fs::create_directories(dest);
  test::write_text(victim, "victim's own bytes\n");
  test::write_text(linked, "hard-linked bytes\n");
  std::string first;
  for (const auto& e : fs::directory_iterator(src())) {
    if (first.empty() || e.path().filename().string() < first) first = e.path().filename();
  }
  fs::create_symlink(victim, dest / (first + ".partial"));
  fs::create_hard_link(linked, dest / "stage.json.tmp");
  const auto r = stage(dest);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(test::read_text(victim), "victim's own bytes\n");
  EXPECT_EQ(test::read_text(linked), "hard-linked bytes\n");
  EXPECT_EQ(test::read_bytes(dest / first), test::read_bytes(src() / first));
  EXPECT_FALSE(fs::is_symlink(dest / first));
}

// A folder of the destination planted as a link to elsewhere (`shared/sub -> victim-dir`): the
// copy is refused naming it, exit 6, and nothing is written through the link.
TEST_F(StageCli, APlantedFolderLinkIsNeverEntered) {
  const fs::path nested = path("nested"), dest = path("shared-dirs"), victim = path("victim-dir");
  fs::create_directories(nested / "sub");
  fs::create_directories(dest);
  fs::create_directories(victim);
  int copied = 0;
  for (const auto& e : fs::directory_iterator(src())) {
    if (e.path().extension() == ".jpg" && copied++ < 2)
      fs::copy_file(e.path(), nested / "sub" / e.path().filename());
  }
  fs::create_directory_symlink(victim, dest / "sub");
  const auto r =
      test::run_mmprof("stage " + test::shell_quote(nested) + " " + test::shell_quote(dest));
  EXPECT_EQ(r.exit_code, 6) << r.output;
  EXPECT_NE(r.output.find("is a symbolic link or a file"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(victim));
  // Made a folder, the same copy goes through.
  fs::remove(dest / "sub");
  fs::create_directories(dest / "sub");
  const auto again =
      test::run_mmprof("stage " + test::shell_quote(nested) + " " + test::shell_quote(dest));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(std::distance(fs::directory_iterator(dest / "sub"), fs::directory_iterator()), 2);
}

TEST_F(StageCli, ACopyMadeOtherwiseHasNoKnownCost) {
  fs::copy(src(), path("cp-copy"), fs::copy_options::recursive);
  test::write_text(path("cp-copy") / "stage.json",
                   R"({"schema": "mmprof.stage/1", "source": "/elsewhere", "wall_s": 99,
                       "copied_bytes": 1, "sessions": [{"wall_s": 99, "copied_bytes": 1}]})");
  const auto r = stage(path("cp-copy"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json s = json::parse(r.output);
  EXPECT_EQ(s["copied_files"], 0);
  EXPECT_EQ(s["total"]["sessions"], 1);  // /elsewhere's record is not this copy's
  EXPECT_EQ(s["total"]["copied_bytes"], 0);
  EXPECT_EQ(s["total"]["costed"], false);
}

TEST_F(StageCli, NoRoomIsRefusedBeforeAnythingIsCopied) {
  if (test::run_command("unshare -m true").exit_code != 0) {
    MMPROF_SKIP_WITHOUT("mountns", "no private mount namespace here (needs CAP_SYS_ADMIN)");
  }
  const fs::path script = path("no-room.sh");
  test::write_text(script,
                   fmt::format("d=$(mktemp -d) && mount -t tmpfs -o size=256k tmpfs \"$d\" || "
                               "exit 99\n{} stage {} \"$d/copy\" </dev/null\necho \"exit $?\"\n"
                               "ls -A \"$d/copy\" 2>/dev/null | wc -l\n",
                               test::shell_quote(test::mmprof_bin()), test::shell_quote(src())));
  const auto r = test::run_command("unshare -m sh " + test::shell_quote(script));
  EXPECT_NE(r.output.find("exit 6"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MB free and staging"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing was copied"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n0\n"), std::string::npos) << r.output;  // no file in the copy
}

TEST_F(StageCli, AMissingSourceExitsThreeNamingIt) {
  const auto r = test::run_mmprof("stage " + test::shell_quote(path("nothing-here")) + " " +
                                  test::shell_quote(path("dst")));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("nothing-here"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("dst")));
}

}  // namespace
}  // namespace mmprof
