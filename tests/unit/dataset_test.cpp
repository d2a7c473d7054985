// The dataset index on folders a user really has: a stray or bad tar shard, symbolic links in and
// out of the folder (loops included), an unreadable subdirectory. Every case keeps the good
// samples and lists the rest with its reason; none throws. The index reads names and tar headers
// only, so the media files here are a few bytes.
#include "mmprof/dataset.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mmprof/error.hpp"
#include "support/bad_corpus.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& path, const std::string& content = "x") {
  fs::create_directories(path.parent_path());
  test::write_bytes(path, {content.begin(), content.end()});
}

std::vector<std::string> keys(const Dataset& ds) {
  std::vector<std::string> out;
  for (const auto& s : ds.samples())
    out.push_back(s.key);
  return out;
}

std::map<std::string, std::string> ignored(const Dataset& ds) {
  std::map<std::string, std::string> out;
  for (const auto& f : ds.ignored())
    out[f.file] = f.reason;
  return out;
}

// One empty .tar among images: layout auto reads the images (before: the .tar made the whole
// folder a tar dataset, and the run failed with exit 3), and lists the .tar with the reason.
TEST(DatasetTest, AStrayTarInAnImageFolderDoesNotMakeItATarDataset) {
  test::TempDir dir;
  for (const char* name : {"a.jpg", "b.jpg", "sub/c.png"})
    touch(dir.path() / name);
  touch(dir.path() / "stray.tar", "");
  const Dataset ds = Dataset::open(dir.path(), Layout::auto_detect);
  EXPECT_EQ(ds.layout(), Layout::files);
  EXPECT_EQ(keys(ds), (std::vector<std::string>{"a", "b", "sub/c"}));
  const auto listed = ignored(ds);
  ASSERT_EQ(listed.count("stray.tar"), 1u);
  EXPECT_EQ(listed.at("stray.tar"),
            "a tar shard in a dataset read as files (data.layout=auto chose files: 3 media files "
            "against 1 .tar files); set data.layout=tar to read shards");
}

// The layout table is what the code asks: a files dataset and a tar dataset of the same samples
// differ only in their rows (container or not, the key rule, how a member is named), and
// data.layout's names map to the rows. Exact values, derived from the WebDataset rule by hand.
TEST(DatasetTest, EachLayoutIsARowThatTheDatasetAnswersFrom) {
  ASSERT_EQ(dataset_layouts().size(), 2u);
  EXPECT_EQ(layout_named("files"), Layout::files);
  EXPECT_EQ(layout_named("tar"), Layout::tar);
  EXPECT_EQ(layout_named("auto"), Layout::auto_detect);
  EXPECT_EQ(layout_named("mds"), std::nullopt);
  EXPECT_STREQ(dataset_layout(Layout::auto_detect).name, "files");
  const DatasetLayout& tar = dataset_layout(Layout::tar);
  EXPECT_TRUE(is_container(tar, "shard-000001.TAR"));
  EXPECT_FALSE(is_container(tar, "sub/shard-000001.tar"));  // only top-level files
  EXPECT_FALSE(is_container(tar, ".tar"));
  EXPECT_FALSE(is_container(dataset_layout(Layout::files), "a.tar"));
  EXPECT_EQ(member_location(tar, "s.tar", "a.seg", "jpg"), "s.tar:a.seg.jpg");
  EXPECT_EQ(member_location(dataset_layout(Layout::files), "d/a.seg.jpg", "d/a.seg", "jpg"),
            "d/a.seg.jpg");

  test::TempDir dir;
  touch(dir.path() / "files" / "my.photo.jpg");
  std::vector<uint8_t> shard;
  test::append_tar_member(shard, "a.jpg", {1, 2, 3});
  test::append_tar_member(shard, "my.photo.jpg", {1, 2, 3});
  test::end_tar(shard);
  fs::create_directories(dir.path() / "shards");
  test::write_bytes(dir.path() / "shards" / "s.tar", shard);
  const Dataset files = Dataset::open(dir.path() / "files", Layout::auto_detect);
  const Dataset shards = Dataset::open(dir.path() / "shards", Layout::auto_detect);
  EXPECT_STREQ(files.layout_info().name, "files");
  EXPECT_STREQ(shards.layout_info().name, "tar");
  // In a folder the extension starts at the last dot; in a shard at the first (WebDataset's
  // rule: "my.photo.jpg" is part "photo.jpg" of sample "my", a part mmprof does not read).
  ASSERT_EQ(keys(files), std::vector<std::string>{"my.photo"});
  ASSERT_EQ(keys(shards), std::vector<std::string>{"a"});
  EXPECT_EQ(ignored(shards).count("s.tar:my.photo.jpg"), 1u);
  EXPECT_EQ(files.media_location(files.samples()[0]), "my.photo.jpg");
  EXPECT_EQ(shards.media_location(shards.samples()[0]), "s.tar:a.jpg");
  EXPECT_EQ(shards.summary()["layout"], "tar");
}

// Bad shards beside a good one: each is a rejection naming its shard (key "" for damage not tied
// to a member), the good shard's samples are indexed, and a folder of shards stays tar with auto.
TEST(DatasetTest, BadShardsAreRejectionsOfTheirShardAndTheRestIsRead) {
  test::TempDir dir;
  std::vector<uint8_t> good;
  test::append_tar_member(good, "k1.jpg", {1, 2, 3});
  test::append_tar_member(good, "k2.jpg", {4, 5, 6});
  test::end_tar(good);
  test::write_bytes(dir.path() / "0-good.tar", good);
  test::write_bytes(dir.path() / "1-empty.tar", {});
  std::vector<uint8_t> gz = {0x1F, 0x8B, 0x08, 0x00, 0x00};
  test::write_bytes(dir.path() / "2-gzip.tar", gz);
  std::vector<uint8_t> headless(512, 0x5A);
  test::write_bytes(dir.path() / "3-garbage.tar", headless);
  const Dataset ds = Dataset::open(dir.path(), Layout::auto_detect);
  EXPECT_EQ(ds.layout(), Layout::tar);
  EXPECT_EQ(keys(ds), (std::vector<std::string>{"k1", "k2"}));
  std::map<std::string, std::string> rejected;
  for (const auto& r : ds.rejected()) {
    EXPECT_EQ(r.key, "") << r.file;
    rejected[r.file] = r.reason;
  }
  ASSERT_EQ(rejected.size(), 3u);
  EXPECT_EQ(rejected["1-empty.tar"], "empty shard (0 bytes), not a tar archive");
  EXPECT_NE(rejected["2-gzip.tar"].find("gzip-compressed"), std::string::npos);
  EXPECT_NE(rejected["3-garbage.tar"].find("not a tar archive"), std::string::npos);
}

TEST(DatasetTest, AllShardsBadIsAnInputErrorNamingTheFirstRefusal) {
  test::TempDir dir;
  test::write_bytes(dir.path() / "only.tar", {});
  try {
    Dataset::open(dir.path(), Layout::tar);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("1 refused, the first: only.tar: empty shard"),
              std::string::npos)
        << e.what();
  }
}

// A WebDataset job's shard list, a part of its folder: only the listed shards are the dataset,
// the folder's other shards and files are neither indexed nor listed as ignored, and a listed
// shard that is not there is no sample.
TEST(DatasetTest, OpenShardsIndexesOnlyTheListedShards) {
  test::TempDir dir;
  for (const char* shard : {"a.tar", "b.tar", "c.tar"}) {
    std::vector<uint8_t> tar;
    test::append_tar_member(tar, std::string(1, shard[0]) + "1.jpg", {1, 2, 3});
    test::append_tar_member(tar, std::string(1, shard[0]) + "1.cls", {7});
    test::end_tar(tar);
    test::write_bytes(dir.path() / shard, tar);
  }
  touch(dir.path() / "notes.md");
  const Dataset ds = Dataset::open_shards(dir.path(), {"a.tar", "c.tar", "missing.tar"});
  EXPECT_EQ(ds.layout(), Layout::tar);
  EXPECT_EQ(keys(ds), (std::vector<std::string>{"a1", "c1"}));
  EXPECT_EQ(ds.files(), (std::vector<std::string>{"a.tar", "c.tar"}));
  EXPECT_EQ(ds.total_bytes(), 6u);
  const auto listed = ignored(ds);
  EXPECT_EQ(listed.size(), 2u);  // the listed shards' .cls members only
  EXPECT_EQ(listed.count("a.tar:a1.cls") + listed.count("c.tar:c1.cls"), 2u);
  EXPECT_THROW(Dataset::open_shards(dir.path(), {"missing.tar"}), InputError);
}

// Links inside the root are followed and keyed by their own path; links out of the root, broken
// links and loops (a link to itself, a directory link to an ancestor) are listed, never followed,
// and never crash the index (before: the self-loop threw std::filesystem_error, an internal
// error, and a link out of the root was keyed by its resolved path, "../outside/x").
TEST(DatasetTest, FileLinksAndDirectoryLinksInsideTheRootAreFollowedTheRestListed) {
  test::TempDir dir, outside;
  const fs::path root = dir.path() / "data";
  touch(root / "a.jpg");
  touch(root / "sub/deep.jpg");
  touch(outside.path() / "x.jpg");
  fs::create_symlink("a.jpg", root / "link.jpg");
  fs::create_symlink("sub", root / "dirlink");
  fs::create_symlink(".", root / "sub/up");
  fs::create_symlink("self.jpg", root / "self.jpg");
  fs::create_symlink(outside.path() / "x.jpg", root / "out.jpg");
  fs::create_symlink(outside.path(), root / "outdir");
  fs::create_symlink("missing.jpg", root / "broken.jpg");
  const Dataset ds = Dataset::open(root, Layout::auto_detect);
  // out.jpg links to a file outside: read through the link, keyed by the link (an ImageFolder of
  // links into a shared store); outdir links to a directory outside: not walked.
  EXPECT_EQ(keys(ds), (std::vector<std::string>{"a", "dirlink/deep", "link", "out", "sub/deep"}));
  for (const auto& s : ds.samples()) {
    EXPECT_TRUE(fs::exists(root / ds.files()[s.media.file])) << ds.files()[s.media.file];
  }
  const auto listed = ignored(ds);
  ASSERT_EQ(listed.size(), 5u);
  EXPECT_NE(listed.at("self.jpg").find("symbolic link loop ('self.jpg'"), std::string::npos)
      << listed.at("self.jpg");
  EXPECT_NE(listed.at("sub/up").find("directory loop"), std::string::npos);
  EXPECT_NE(listed.at("dirlink/up").find("directory loop"), std::string::npos);
  EXPECT_NE(listed.at("outdir").find("is a directory outside the dataset"), std::string::npos);
  EXPECT_NE(listed.at("broken.jpg").find("broken symbolic link to 'missing.jpg'"),
            std::string::npos);
}

// A subdirectory the process cannot list is named and listed, and the rest is read (before: the
// whole dataset was refused with a message naming the root). Root ignores permission bits, so
// the check runs in a child that drops to nobody (uid 65534) when the test runs as root.
TEST(DatasetTest, AnUnreadableSubdirectoryIsListedAndTheRestRead) {
  test::TempDir dir;
  touch(dir.path() / "a.jpg");
  touch(dir.path() / "locked/b.jpg");
  touch(dir.path() / "open/c.jpg");
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir.path() / "locked", fs::perms::none);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (geteuid() == 0 && setuid(65534) != 0) _exit(90);
    int code = 0;
    try {
      const Dataset ds = Dataset::open(dir.path(), Layout::auto_detect);
      const auto listed = ignored(ds);
      if (keys(ds) != std::vector<std::string>{"a", "open/c"}) code = 91;
      if (listed.size() != 1 || !listed.contains("locked/") ||
          listed.at("locked/").find("directory cannot be read (Permission denied)") ==
              std::string::npos) {
        code = 92;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      code = 93;
    }
    _exit(code);
  }
  int status = 0;
  waitpid(child, &status, 0);
  fs::permissions(dir.path() / "locked", fs::perms::owner_all);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "90: setuid failed, 91: samples, 92: the listing, "
                                       "93: Dataset::open threw";
}

}  // namespace
}  // namespace mmprof
