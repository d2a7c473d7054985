#pragma once
// Shared helpers for tests: temporary directories, running commands, reading files.
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "mmprof/loader.hpp"
#include "mmprof/summary.hpp"

namespace mmprof {
class ImageDecoder;
struct RgbImage;
}  // namespace mmprof

namespace mmprof::test {

// A fresh directory under $TMPDIR, removed (recursively) when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through /bin/sh and captures its output.
CommandResult run_command(const std::string& command);

// Single-quotes a path or word for /bin/sh.
std::string shell_quote(const std::filesystem::path& p);
// Runs the built mmprof with `args` (already quoted), stdin closed.
CommandResult run_mmprof(const std::string& args);
// The same with its stdout (`output`) apart from its stderr (`errors`): --json's stdout must
// hold the JSON document alone.
struct SplitResult {
  int exit_code = -1;
  std::string output, errors;
};
SplitResult run_mmprof_split(const std::string& args);

std::vector<uint8_t> read_bytes(const std::filesystem::path& path);
// The whitespace-separated numbers of a text file (a job's own log of its waits); none if absent.
std::vector<double> read_numbers(const std::filesystem::path& path);
std::string read_text(const std::filesystem::path& path);  // throws when it cannot be read
// `text` with every `what` replaced by `with` (a command's {placeholders}).
std::string replaced(std::string text, const std::string& what, const std::string& with);
// The file's text, "" when it does not exist (or cannot be read).
std::string text_or_empty(const std::filesystem::path& path);
nlohmann::json read_json(const std::filesystem::path& path);
// The Summary that a summary.json holding `j` reads back as (a test's summary written as JSON).
Summary typed(const nlohmann::json& j);
// An mmprof ab result's verdict, or, where a guard withheld it (INCONCLUSIVE, "would be X, but
// throughput drifts over rounds" or "... never reached steady state"), the X it names: a shared
// machine's load may trend over a test's rounds or keep its short trials from settling.
std::string verdict_before_drift(const nlohmann::json& result);
void write_bytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes);
void write_text(const std::filesystem::path& path, const std::string& text);
// The element of the JSON array `list` whose "class" is `cls` (a test failure and null when none).
const nlohmann::json& with_class(const nlohmann::json& list, const std::string& cls);

// A delivered sample as its worker's record describes it: what the per-class and per-worker
// figures read (index, worker, modality, format, source size, stage times, bytes).
struct SampleSpec {
  uint32_t index = 0;
  int worker = -1;
  Modality modality = Modality::image;
  std::string format = "jpeg";
  int width = 640, height = 480;
  double read_ms = 1, decode_ms = 10, augment_ms = 1;
  uint64_t bytes = 1000;
  int64_t t_start_ns = 0;  // when its worker began reading it
};
SampleInfo sample_info(const SampleSpec& spec);

// A CSV table with RFC 4180 quoting (no field of ours spans lines).
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // The index of a column (a test failure when there is none).
  size_t column(const std::string& name) const;
};
Csv read_csv(const std::filesystem::path& path);

// Peak signal-to-noise ratio in dB between two equally sized 8-bit buffers (inf if identical).
double psnr(const uint8_t* a, const uint8_t* b, size_t n);

// The DecodeError message of decoding `bytes` at full size into `out` ("" when it decodes).
std::string decode_error(ImageDecoder& decoder, const std::vector<uint8_t>& bytes, RgbImage& out);

// Decodes a media file with the ffmpeg CLI to raw RGB24 (optionally one video frame by index).
std::vector<uint8_t> ffmpeg_decode_rgb(const std::filesystem::path& file, int frame_index = 0);

// Every key DESIGN.md promises in summary.json, dotted ("latency_ms.step.p50"); the value may
// be null, the key must exist.
std::vector<std::string> design_summary_keys();
// "a.b.c" -> the JSON pointer /a/b/c.
nlohmann::json::json_pointer dotted_pointer(const std::string& dotted);

// A dataset made once for a whole test suite by `mmprof gen --quiet --out DIR ARGS` (in
// SetUpTestSuite), removed by drop() (in TearDownTestSuite); each test checks gen() first.
class SuiteDataset {
 public:
  void make(const std::string& gen_args);
  void drop();
  std::filesystem::path path() const { return dir_->path() / "ds"; }
  const CommandResult& gen() const { return gen_; }

 private:
  std::unique_ptr<TempDir> dir_;
  CommandResult gen_;
};

// The keys of the samples a run's `phase` delivered in its first epoch (stages.csv, whose steps are
// the phase's batch ids when it had no warm-up and one batch per step; digests.csv gives each
// batch's epoch), with repeats.
std::multiset<std::string> first_epoch_keys(const std::filesystem::path& run,
                                            const std::string& phase);

// A clock for a DecodeBudget (nanoseconds): each read is one second after the one before.
int64_t fake_clock() noexcept;

// Runs `fn`, expects it to throw E, and returns the message (a test failure and "" otherwise).
template <typename E, typename Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

// Whether this run requires the suites that need `capability` ("torch", "netns", "nginx",
// "mountns", "chromium", "time", "findmnt", "evictable-tmp", "avx2", "cupti"): CI names those
// the machine has in MMPROF_TEST_REQUIRE (comma-separated, .ci/stages.sh), and a test that would
// skip for want of one of them fails instead (MMPROF_SKIP_WITHOUT).
bool capability_required(const std::string& capability);

// The torch a job test runs its PyTorch jobs on, as tests/external/run.sh picks it: with
// MMPROF_TEST_TORCH=1.13, Debian's python3-torch under /usr/bin/python3 (capability "torch");
// otherwise torch 2.x, the venv of scripts/install-deps --torch2 (scripts/torch2-python,
// capability "torch2"). `python` is empty when that torch is not installed (`why` says so).
struct JobTorch {
  std::string label, capability, python, why;
};
const JobTorch& job_torch();

// Path of the built mmprof binary, and of the source tree (compiled into the test binaries).
std::string mmprof_bin();
std::filesystem::path source_dir();

}  // namespace mmprof::test

// Skips the test for want of `capability` with `why` (streamed), or fails it when this run
// requires the capability (test::capability_required): a skipped test proves nothing.
#define MMPROF_SKIP_WITHOUT(capability, why)                                            \
  do {                                                                                  \
    if (::mmprof::test::capability_required(capability)) {                              \
      GTEST_FAIL() << "MMPROF_TEST_REQUIRE names " << (capability) << ", yet: " << why; \
    }                                                                                   \
    GTEST_SKIP() << "[needs " << (capability) << "] " << why;                           \
  } while (false)
