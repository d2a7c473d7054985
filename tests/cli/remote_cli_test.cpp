// mmprof over HTTP, against Debian's nginx serving a generated dataset inside a private network
// namespace (tests/support/serve-http.sh: loopback only, the server stopped by the script), the
// loopback shaped by tc's token bucket where a test plants a bandwidth: the loader and the stage
// read the same bytes as from the folder (batch digests, file contents, nginx's own log of bytes
// sent), the measured network rate stays under the planted one, faults are named and retried as
// configured, a server gone mid-run stops the run with what it measured kept, and an ab of the
// remote dataset against its staged copy gets the report's break-even.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iomanip>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kUrl = "http://127.0.0.1:8080/";

class RemoteCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    auto r = test::run_mmprof("gen --quiet --out " + test::shell_quote(path("ds")) +
                              " --images 40 --videos 0 --seed 6");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = test::run_mmprof("shard --quiet " + test::shell_quote(path("ds") / "files") + " --out " +
                         test::shell_quote(path("ds") / "sh") + " --shard-mb 1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // Shards without mmprof's index: nothing locates their members without downloading them.
    fs::create_directories(path("ds") / "plain");
    for (const auto& e : fs::directory_iterator(path("ds") / "sh")) {
      if (e.path().extension() == ".tar") {
        fs::copy_file(e.path(), path("ds") / "plain" / e.path().filename());
      }
    }
  }
  static void TearDownTestSuite() { dir_.reset(); }

  void SetUp() override {
    const auto r = serve("probe", "none", "", "true");
    if (r.exit_code == 77)
      MMPROF_SKIP_WITHOUT("netns", "no network namespace or nginx here: " << r.output);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  static fs::path path(const std::string& name) { return dir_->path() / name; }

  // Runs `script` (bash) where ds/ is served at kUrl, the loopback shaped to `rate` ("none": not
  // shaped); `extra` goes into nginx's server block. `name` names the server's scratch folder.
  static test::CommandResult serve(const std::string& name, const std::string& rate,
                                   const std::string& extra, const std::string& script) {
    const fs::path scratch = path("srv-" + name);
    fs::create_directories(scratch);
    test::write_text(scratch / "extra.conf", extra);
    test::write_text(scratch / "run.sh", "M=" + test::shell_quote(test::mmprof_bin()) + "\n" +
                                             "cd " + test::shell_quote(dir_->path()) + "\n" +
                                             script + "\n");
    return test::run_command(test::shell_quote(test::source_dir() / "tests/support/serve-http.sh") +
                             " " + test::shell_quote(scratch) + " " +
                             test::shell_quote(path("ds")) + " " + rate + " -- bash " +
                             test::shell_quote(scratch / "run.sh") + " 2>&1");
  }

  // nginx's access log of server `name`: status, body bytes sent, Range, URI per request.
  struct Logged {
    int status = 0;
    uint64_t bytes = 0;
    std::string range, uri;
  };
  static std::vector<Logged> access_log(const std::string& name) {
    std::vector<Logged> out;
    std::ifstream in(path("srv-" + name) / "access.log");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream s(line);
      Logged l;
      s >> l.status >> l.bytes >> std::quoted(l.range) >> l.uri;
      out.push_back(l);
    }
    return out;
  }

  // A baseline of 5 steps (or `steps`) of 8 samples: 40 steps read the dataset once.
  static std::string baseline(const std::string& data, const std::string& out,
                              const std::string& extra = "", int steps = 5) {
    return fmt::format(
        "$M baseline --quiet --data {} --steps {} --warmup-steps 0 --set loader.batch_size=8 "
        "--out {} {}",
        data, steps, out, extra);
  }

  static std::unique_ptr<test::TempDir> dir_;
};

std::unique_ptr<test::TempDir> RemoteCli::dir_;

TEST_F(RemoteCli, FilesAndShardsOverHttpAreReadAsFromTheFolder) {
  auto r = test::run_mmprof(
      fmt::format("baseline --quiet --data {} --steps 5 --warmup-steps 0 --set "
                  "loader.batch_size=8 --out {}",
                  test::shell_quote(path("ds") / "files"), test::shell_quote(path("local"))));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The shards' folder lists nothing: shards.json and index.csv are all the reader needs.
  r = serve("read", "none", "location /sh/ { autoindex off; }",
            baseline(std::string(kUrl) + "files/", "files-run") + " && " +
                baseline(std::string(kUrl) + "sh/", "sh-run"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string local = test::read_text(path("local") / "digests.csv");
  // The data mix probed over HTTP (its requests announced ahead) is the folder's.
  json local_mix = test::read_json(path("local") / "manifest.json")["data_mix"];
  local_mix.erase("path");
  local_mix.erase("layout");
  for (const char* run : {"files-run", "sh-run"}) {
    json mix = test::read_json(path(run) / "manifest.json")["data_mix"];
    mix.erase("path");
    mix.erase("layout");
    EXPECT_EQ(mix, local_mix) << run;
  }
  EXPECT_EQ(test::read_text(path("files-run") / "digests.csv"), local);
  EXPECT_EQ(test::read_text(path("sh-run") / "digests.csv"), local);
  for (const char* run : {"files-run", "sh-run"}) {
    EXPECT_EQ(test::read_text(path(run) / "errors.jsonl"), "") << run;
    const json s = test::read_json(path(run) / "summary.json");
    const json& l = s["locality"];
    EXPECT_EQ(l["source"], "network") << l;
    EXPECT_EQ(l["phases"]["pipeline"]["prepared"], "remote") << l;
    EXPECT_GT(l["phases"]["pipeline"]["network_bytes"].get<uint64_t>(), 0u) << l;
    EXPECT_EQ(l["phases"]["pipeline"]["network_bytes"], s["phases"]["pipeline"]["bytes"]) << l;
    EXPECT_EQ(l["phases"]["pipeline"]["read_retries"], 0) << l;
    EXPECT_TRUE(l["phases"]["pipeline"]["page_cache_fraction"].is_null()) << l;
    const json m = test::read_json(path(run) / "manifest.json");
    EXPECT_EQ(m["storage"]["of"], "remote data path") << m["storage"];
  }
  for (const auto& l : access_log("read"))
    EXPECT_FALSE(l.uri == "/sh/" && l.status == 200) << "the shards were listed";
  // The report says where the bytes came from, and its commands keep the URL as it was given.
  r = test::run_mmprof("report --quiet " + test::shell_quote(path("files-run")) + " --out " +
                       test::shell_quote(path("files-report")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string md = test::read_text(path("files-report") / "report.md");
  EXPECT_NE(md.find(std::string("the dataset came over HTTP from ") + kUrl + "files/"),
            std::string::npos);
  if (md.find("mmprof ab --data ") != std::string::npos) {
    EXPECT_NE(md.find(std::string("mmprof ab --data ") + kUrl + "files/"), std::string::npos);
  }
  EXPECT_EQ(md.find("/" + std::string(kUrl)), std::string::npos) << "a URL made a path";
}

TEST_F(RemoteCli, StageCopiesWhatTheServerSentByteForByte) {
  const auto r = serve("stage", "none", "",
                       fmt::format("$M stage --json {}files/ copy --threads 3 > stage.out", kUrl));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json s = test::read_json(path("stage.out"));
  uint64_t bytes = 0;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(path("ds") / "files")) {
    if (e.path().filename() == "dataset.json") continue;  // gen's description, not a sample
    bytes += fs::file_size(e.path());
    ++files;
    EXPECT_EQ(test::read_bytes(e.path()), test::read_bytes(path("copy") / e.path().filename()))
        << e.path();
  }
  EXPECT_EQ(s["bytes"], bytes);
  EXPECT_EQ(s["files"], files);
  EXPECT_EQ(s["verified_by"], "size");
  // nginx's count of the body bytes it sent for the files (not the listing nor the sidecars it
  // did not have) is stage.json's.
  uint64_t sent = 0;
  for (const auto& l : access_log("stage"))
    if (l.status == 206 || (l.status == 200 && l.uri != "/files/")) sent += l.bytes;
  EXPECT_EQ(sent, bytes);
  // Again: every file is there with its size, nothing is fetched.
  const auto again = serve("stage-again", "none", "",
                           fmt::format("$M stage --json {}files/ copy > again.out", kUrl));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(test::read_json(path("again.out"))["copied_files"], 0);
  for (const auto& l : access_log("stage-again"))
    EXPECT_NE(l.status, 206) << l.uri;
}

// Ctrl-C while staging over a 1 MB/s link: exit 130 with what is there, no cut file under any
// name, and the same command then copies only the rest.
TEST_F(RemoteCli, AnInterruptedStageContinuesWhereItStopped) {
  const auto r =
      serve("sigint", "8mbit", "",
            fmt::format("$M stage --quiet --threads 2 {0}files/ icopy &\npid=$!\n"
                        "for i in $(seq 400); do [ \"$(ls icopy 2>/dev/null | wc -l)\" -ge 8 ] && "
                        "break; sleep 0.05; done\n"
                        "kill -INT $pid\nwait $pid\necho \"exit $?\"\n"
                        "echo \"partial $(ls icopy | grep -c partial)\"\n"
                        "$M stage --json {0}files/ icopy > resumed.out",
                        kUrl));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("exit 130"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("run the same command again"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("partial 0"), std::string::npos) << r.output;
  const json s = test::read_json(path("resumed.out"));
  EXPECT_GE(s["already_there_files"].get<int>(), 4) << s;
  EXPECT_GE(s["copied_files"].get<int>(), 1) << s;
  EXPECT_EQ(s["already_there_files"].get<int>() + s["copied_files"].get<int>(), s["files"]) << s;
  for (const auto& e : fs::directory_iterator(path("ds") / "files")) {
    if (e.path().filename() == "dataset.json") continue;
    EXPECT_EQ(test::read_bytes(e.path()), test::read_bytes(path("icopy") / e.path().filename()))
        << e.path();
  }
}

// Issue 34, items 4 and 11: a listing whose entries are not files of the folder ({"name": 5},
// null, 3, "..", "../etc.jpg") is read without an internal error: each is listed as ignored in
// errors.jsonl with what it was, and the one real file is the dataset.
TEST_F(RemoteCli, HostileListingEntriesAreListedNotReadAndNeverCrash) {
  const uint64_t size = fs::file_size(path("ds") / "files" / "000001.jpg");
  const std::string listing = fmt::format(
      R"([{{"name":5}},null,3,{{"name":".."}},{{"name":"../etc.jpg","type":"file","size":4}},)"
      R"({{"name":"000001.jpg","type":"file","size":{}}}])",
      size);
  const std::string extra = "location = /hostile/ { default_type application/json; return 200 '" +
                            listing + "'; }\nlocation = /hostile/000001.jpg { alias " +
                            (path("ds") / "files" / "000001.jpg").string() + "; }\n";
  const auto r = serve("hostile", "none", extra,
                       baseline(std::string(kUrl) + "hostile/", "hostile-run",
                                "--set loader.num_workers=0 --set loader.batch_size=1", 1));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  const std::string errors = test::read_text(path("hostile-run") / "errors.jsonl");
  size_t ignored = 0;
  for (size_t at = 0; (at = errors.find("names no file in this folder", at)) != std::string::npos;
       ++at)
    ++ignored;
  EXPECT_EQ(ignored, 5u) << errors;
  EXPECT_NE(errors.find("../etc.jpg"), std::string::npos) << errors;
  EXPECT_EQ(test::read_json(path("hostile-run") / "summary.json")["status"], "complete");
}

// Issue 34, item 4: a folder holding a symlink to itself, which nginx follows (2 images made 66
// samples), is listed once, the loop named in errors.jsonl; a redirect within the server is
// followed, one to another server refused with both named (locality.url would name the first).
TEST_F(RemoteCli, ASymlinkLoopIsListedOnceAndARedirectElsewhereIsRefused) {
  const fs::path loopy = path("ds") / "loopy";
  fs::create_directories(loopy);
  fs::copy_file(path("ds") / "files" / "000001.jpg", loopy / "000001.jpg",
                fs::copy_options::overwrite_existing);
  fs::copy_file(path("ds") / "files" / "000002.jpg", loopy / "000002.jpg",
                fs::copy_options::overwrite_existing);
  if (!fs::is_symlink(loopy / "loop")) fs::create_directory_symlink(".", loopy / "loop");
  // One sample of a listed folder redirected to another server: that sample is refused, named.
  const fs::path redir = path("ds") / "redir";
  fs::create_directories(redir);
  for (const char* name : {"000001.jpg", "000002.jpg", "000003.jpg"})
    fs::copy_file(path("ds") / "files" / name, redir / name, fs::copy_options::overwrite_existing);
  const auto r = serve(
      "loops", "none",
      "location /moved/ { rewrite ^/moved/(.*)$ /files/$1 redirect; }\n"
      "location /away/ { return 302 http://127.0.0.2:8080/files/; }\n"
      "location = /redir/000002.jpg { return 302 http://127.0.0.2:8080/files/000002.jpg; }\n",
      baseline(std::string(kUrl) + "loopy/", "loop-run",
               "--set loader.num_workers=0 --set loader.batch_size=1", 2) +
          " && " + baseline(std::string(kUrl) + "moved/", "moved-run") + " && " +
          baseline(std::string(kUrl) + "files/", "direct-run") +
          fmt::format(" && {{ $M inspect --data {}away/ > away.out 2>&1; echo \"away $?\"; }}",
                      kUrl) +
          " && { " +
          baseline(std::string(kUrl) + "redir/", "redir-run",
                   "--set loader.num_workers=0 --set loader.batch_size=1", 2) +
          "; echo \"redir $?\"; }");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json loop = test::read_json(path("loop-run") / "summary.json");
  // The two images once (the loop would have added each again at every level, 32 deep).
  EXPECT_EQ(loop["locality"]["dataset_bytes"],
            fs::file_size(loopy / "000001.jpg") + fs::file_size(loopy / "000002.jpg"))
      << loop["locality"];
  const std::string errors = test::read_text(path("loop-run") / "errors.jsonl");
  EXPECT_NE(errors.find("its listing is that of the dataset's root above it, entry for entry: a "
                        "symlink loop"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("\"file\":\"http://127.0.0.1:8080/loopy/loop/\""), std::string::npos)
      << errors;
  EXPECT_EQ(test::read_json(path("moved-run") / "summary.json")["status"], "complete");
  EXPECT_EQ(test::read_text(path("moved-run") / "digests.csv"),
            test::read_text(path("direct-run") / "digests.csv"));
  EXPECT_NE(r.output.find("away 3"), std::string::npos) << r.output;
  const std::string away = test::read_text(path("away.out"));
  EXPECT_NE(away.find("HTTP 302 redirects to http://127.0.0.2:8080/files/, another server than "
                      "http://127.0.0.1:8080: not followed"),
            std::string::npos)
      << away;
  EXPECT_NE(r.output.find("redir 0"), std::string::npos) << r.output;
  const std::string redirected = test::read_text(path("redir-run") / "errors.jsonl");
  EXPECT_NE(redirected.find("000002"), std::string::npos) << redirected;
  EXPECT_NE(redirected.find("HTTP 302 redirects to http://127.0.0.2:8080/files/000002.jpg, another "
                            "server than http://127.0.0.1:8080: not followed"),
            std::string::npos)
      << redirected;
}

// Issue 34, item 5: a listing served at 1 byte a second (an endless or hostile server) does not
// hold Ctrl-C off: mmprof stops within a poll of the transfer (50 ms), where it waited for the
// request's timeout and its retries before (30 s x 4 here).
TEST_F(RemoteCli, CtrlCStopsASlowListingAtOnce) {
  const auto r = serve("slow-listing", "none", "location = /files/ { limit_rate 1; }\n",
                       fmt::format("$M inspect --data {}files/ >/dev/null 2>&1 &\npid=$!\n"
                                   "sleep 1.5\nt0=$(date +%s%N)\nkill -INT $pid\nwait $pid\n"
                                   "echo \"exit $? after $((($(date +%s%N) - t0) / 1000000)) ms\"",
                                   kUrl));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::smatch m = [&] {
    std::smatch out;
    std::regex_search(r.output, out, std::regex("exit ([0-9]+) after ([0-9]+) ms"));
    return out;
  }();
  ASSERT_EQ(m.size(), 3u) << r.output;
  EXPECT_EQ(m[1], "130") << r.output;
  // 5 ms here; the bound only has to tell it from waiting for the request's 30 s timeout (119 s
  // with the retries before), so no load can break it.
  EXPECT_LT(std::stoi(m[2]), 25'000) << r.output;
}

// The same while the data-mix probe reads a sample served at 1 byte a second (issue 34 item 5:
// it waited for the read's own timeout): the probe stops within a poll, and what it probed is
// kept, marked interrupted.
TEST_F(RemoteCli, CtrlCStopsTheDataMixProbeDuringASlowSample) {
  const auto r = serve(
      "slow-sample", "none", "location ~ \\.jpg$ { limit_rate 1; }\n",
      // Ctrl-C once the listing was served (nginx logs a request when it ends), so that it lands
      // in the probe however slowly this machine starts mmprof.
      fmt::format("$M inspect --json --data {}files/ >mix.json 2>&1 &\npid=$!\n"
                  "for i in $(seq 600); do grep -q ' /files/$' {} 2>/dev/null && break; "
                  "sleep 0.05; done\nsleep 0.5\nt0=$(date +%s%N)\nkill -INT $pid\nwait $pid\n"
                  "echo \"exit $? after $((($(date +%s%N) - t0) / 1000000)) ms\"\ncat mix.json",
                  kUrl, test::shell_quote(path("srv-slow-sample") / "access.log")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("exit ([0-9]+) after ([0-9]+) ms")))
      << r.output;
  EXPECT_EQ(m[1], "130") << r.output;
  EXPECT_LT(std::stoi(m[2]), 25'000) << r.output;  // not the read's 30 s timeout
  // The clips and PNGs probed before the first JPEG are kept.
  ASSERT_TRUE(std::regex_search(
      r.output, m, std::regex("interrupted \\(Ctrl-C\\) after ([0-9]+) of 40 samples")))
      << r.output;
  EXPECT_LT(std::stoi(m[1]), 40) << r.output;
}

// Ctrl-C while sharding a remote dataset (1 MB/s), once its hidden .partial folder holds a
// shard being written: exit 130, and neither --out nor the .partial folder exists.
TEST_F(RemoteCli, AnInterruptedShardLeavesNothing) {
  const auto r = serve(
      "shard-sigint", "8mbit", "",
      fmt::format("$M shard --quiet {}files/ --out new-shards &\npid=$!\n"
                  "for i in $(seq 600); do [ -n \"$(ls -A .new-shards.partial 2>/dev/null)\" ] "
                  "&& break; sleep 0.1; done\nkill -INT $pid\nwait $pid\necho \"exit $?\"\n"
                  "ls -A | grep -c shards",
                  kUrl));
  EXPECT_NE(r.output.find("exit 130"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing written to new-shards"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("new-shards")));
  EXPECT_FALSE(fs::exists(path(".new-shards.partial")));
}

// tc's token bucket lets at most the planted rate through (TCP/IP headers take ~4 % of it at
// this MTU): a measured rate above it is a measurement that counts bytes the window did not
// read (a throughput window opened after prefetched batches were fetched gives 5.3 MB/s here).
// Below it: load and request overheads (a busy or sanitized build decodes between reads), so
// the lower bound is the bytes over the whole command's wall time, which holds whatever the load.
TEST_F(RemoteCli, MeasuredNetworkRateStaysUnderThePlantedBandwidth) {
  constexpr double kPlantedMBps = 5.0;  // 40 Mbit/s
  // Each command's wall time, taken by the script around it: a rate measured inside the command
  // is at least its bytes over that time (a lower bound that load cannot break).
  const auto r =
      serve("shaped", "40mbit", "",
            fmt::format("t0=$EPOCHREALTIME; $M stage --json {}files/ shaped-copy --threads 4 > "
                        "shaped.out && t1=$EPOCHREALTIME && {} && t2=$EPOCHREALTIME && "
                        "echo \"$t0 $t1 $t2\" > shaped.times",
                        kUrl,
                        baseline(std::string(kUrl) + "files/", "shaped-run",
                                 "--set data.remote.concurrency=4", 12)));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  double t0 = 0, t1 = 0, t2 = 0;
  std::istringstream(test::read_text(path("shaped.times"))) >> t0 >> t1 >> t2;
  const json copy = test::read_json(path("shaped.out"));
  const double staged = copy["copied_mb_per_s"].get<double>();
  EXPECT_LE(staged, 1.03 * kPlantedMBps);
  EXPECT_GE(staged, copy["copied_bytes"].get<double>() / 1e6 / (t1 - t0)) << copy;
  const json p =
      test::read_json(path("shaped-run") / "summary.json")["locality"]["phases"]["pipeline"];
  const double loader = p["network_mb_per_s"].get<double>();
  EXPECT_LE(loader, 1.03 * kPlantedMBps) << p;
  EXPECT_GE(loader, p["network_bytes"].get<double>() / 1e6 / (t2 - t1)) << p;
  EXPECT_NEAR(loader, p["network_bytes"].get<double>() / 1e6 / p["read_span_s"].get<double>(),
              1e-9);
}

TEST_F(RemoteCli, FaultsAreNamedRetriedAsConfiguredAndListed) {
  // Four samples the server fails: one missing, one a 503 every time, one slower than the
  // timeout, one whose file the server holds cut short (its first 1000 bytes). The loader reads
  // each once (40 samples, 5 steps of 8).
  auto cut = test::read_bytes(path("ds") / "files" / "000007.jpg");
  cut.resize(1000);
  test::write_bytes(path("cut.jpg"), cut);
  const std::string extra =
      "location = /files/000003.jpg { return 404; }\n"
      "location = /files/000004.jpg { return 503; }\n"
      "location = /files/000005.jpg { limit_rate 1k; }\n"
      "location = /files/000007.jpg { alias " +
      path("cut.jpg").string() + "; }\n";
  const auto r = serve("faults", "none", extra,
                       baseline(std::string(kUrl) + "files/", "faults-run",
                                "--set data.remote.timeout_s=3 --set data.remote.retries=1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, std::string> failed;
  std::istringstream errors(test::read_text(path("faults-run") / "errors.jsonl"));
  std::string line;
  while (std::getline(errors, line)) {
    const json e = json::parse(line);
    failed[e.value("key", "")] = e.value("message", "");
  }
  ASSERT_EQ(failed.size(), 4u) << test::read_text(path("faults-run") / "errors.jsonl");
  EXPECT_NE(failed["000003"].find("HTTP 404"), std::string::npos) << failed["000003"];
  EXPECT_EQ(failed["000003"].find("retr"), std::string::npos) << "a 404 is not retried";
  EXPECT_NE(failed["000004"].find("HTTP 503 (after 1 retry)"), std::string::npos)
      << failed["000004"];
  EXPECT_NE(failed["000005"].find("data.remote.timeout_s=3"), std::string::npos)
      << failed["000005"];
  EXPECT_NE(failed["000007"].find("the response ended after 1000 of"), std::string::npos)
      << failed["000007"];
  const json s = test::read_json(path("faults-run") / "summary.json");
  EXPECT_EQ(s["locality"]["phases"]["pipeline"]["read_retries"], 3) << s["locality"];
  // Shards with no index beside them: one sentence, exit 3.
  const auto plain =
      serve("plain", "none", "", baseline(std::string(kUrl) + "plain/", "plain-run"));
  EXPECT_EQ(plain.exit_code, 3) << plain.output;
  EXPECT_NE(plain.output.find("index.csv"), std::string::npos) << plain.output;
  // Nothing listening: exit 3 naming the URL.
  const auto none = serve("none", "none", "", baseline("http://127.0.0.1:8081/", "none-run"));
  EXPECT_EQ(none.exit_code, 3) << none.output;
  EXPECT_NE(none.output.find("cannot list the remote dataset http://127.0.0.1:8081/"),
            std::string::npos)
      << none.output;
}

TEST_F(RemoteCli, ServerGoneMidRunStopsTheRunAndKeepsWhatItMeasured) {
  // 1 MB/s: the run lasts; once it has measured steps the server is stopped. A transfer cut with
  // bytes still queued in the shaped link stalls rather than failing: data.remote.timeout_s=2
  // bounds it, then the reconnection is refused and the run stops.
  const std::string script = fmt::format(
      "{} &\nrun=$!\n"
      "for i in $(seq 600); do [ \"$(wc -l < gone-run/steps.csv 2>/dev/null || echo 0)\" -ge 3 ] "
      "&& break; sleep 0.05; done\n"
      "kill $MMPROF_HTTP_PID\nt0=$SECONDS\nwait $run\necho \"exit $? after $((SECONDS - t0)) s\"\n",
      baseline(std::string(kUrl) + "files/", "gone-run", "--set data.remote.timeout_s=2", 400));
  const auto r = serve("gone", "8mbit", "", script);
  EXPECT_NE(r.output.find("exit 1 after"), std::string::npos) << r.output;
  const auto after = r.output.find(" after ", r.output.find("exit 1"));
  ASSERT_NE(after, std::string::npos) << r.output;
  // Bounded: one timeout and the retries' back-off (0.7 s), with room for a loaded machine.
  EXPECT_LE(std::stoi(r.output.substr(after + 7)), 20) << r.output;
  EXPECT_NE(r.output.find("remote storage unreachable"), std::string::npos) << r.output;
  const json s = test::read_json(path("gone-run") / "summary.json");
  EXPECT_EQ(s["status"], "failed") << s;
  EXPECT_NE(s["message"].get<std::string>().find("127.0.0.1:8080"), std::string::npos) << s;
  EXPECT_GE(test::read_csv(path("gone-run") / "steps.csv").rows.size(), 2u);
}

// The staged copy holds the remote dataset's samples (the same fingerprint): its arm is checked
// as content-preserving, by batch digests. A copy missing a sample is another dataset: said, and
// content-changing.
TEST_F(RemoteCli, AbOfTheRemoteDatasetAgainstItsStagedCopyGivesTheBreakEven) {
  fs::create_directories(path("partial"));
  for (const auto& e : fs::directory_iterator(path("ds") / "files")) {
    if (e.path().stem() != "000009") fs::copy_file(e.path(), path("partial") / e.path().filename());
  }
  const auto r = serve(
      "ab", "none", "",
      fmt::format("$M stage --quiet {0}files/ staged && $M ab --quiet --factor "
                  "data.path={0}files/,staged,partial --cache cold --rounds 6 --set "
                  "phases.steps=4 --set phases.warmup_steps=1 --set loader.batch_size=8 --out ab "
                  "&& $M report --quiet ab --out ab-report",
                  kUrl));
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 5) << r.output;  // 5: a verdict undecided
  EXPECT_NE(r.output.find("mmprof: note: data.path=partial (39 samples"), std::string::npos)
      << r.output;
  const json experiment = test::read_json(path("ab") / "experiment.json");
  for (const json& arm : experiment["results"]) {
    if (arm.value("factor", json()) != "data.path") continue;
    if (arm["value"] == "staged") {
      EXPECT_EQ(arm["content"], "preserving") << arm;
      EXPECT_EQ(arm["correctness"]["kind"], "digest") << arm;
      EXPECT_EQ(arm["correctness"]["ok"], true) << arm;
    } else {
      EXPECT_EQ(arm["content"], "changing") << arm;
    }
  }
  // --cache cold: the staged copies' trials measured their residency when the window began (the
  // remote arm has nothing local); the experiment counts the warm ones from the trials' runs.
  const std::string phase = experiment["design"]["metric"]["phase"];
  int local = 0, warm = 0;
  const json::json_pointer at_window("/locality/phases/" + phase + "/resident_at_window");
  for (const json& t : experiment["trials"]) {
    if (t["status"] != "complete") continue;
    const json summary =
        test::read_json(path("ab") / t["run_dir"].get<std::string>() / "summary.json");
    const json resident = summary.contains(at_window) ? summary[at_window] : json();
    if (!resident.is_number()) continue;
    ++local;
    warm += resident.get<double>() >= 0.5 ? 1 : 0;
  }
  const json& cache = experiment["cache_at_window"];
  ASSERT_TRUE(cache.is_object()) << experiment.dump().substr(0, 2000);
  EXPECT_EQ(cache["trials"], local);
  EXPECT_EQ(cache["warm_trials"], warm);
  EXPECT_EQ(cache["cold_in_fact"], warm == 0);
  const json report = test::read_json(path("ab-report") / "report.json");
  EXPECT_EQ(report["experiments"][0]["cache_at_window"], cache);
  const json& staging = report["experiments"][0]["staging"];
  ASSERT_EQ(staging.size(), 2u) << report["experiments"][0].dump().substr(0, 2000);
  const json& e = staging[0]["arm"] == "data.path=staged" ? staging[0] : staging[1];
  const json stage = test::read_json(path("staged") / "stage.json");
  EXPECT_EQ(e["stage_s"], stage["wall_s"]) << e;
  EXPECT_EQ(e["source"], std::string(kUrl) + "files/") << e;
  EXPECT_NE(e["caveat"].get<std::string>().find("over HTTP"), std::string::npos) << e;
  const auto md = test::read_text(path("ab-report") / "report.md");
  EXPECT_NE(md.find("pays off after epochs"), std::string::npos);
}

}  // namespace
}  // namespace mmprof
