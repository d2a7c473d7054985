#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>

#include "ab/content_check.hpp"
#include "decode/decode_error.hpp"
#include "decode/image_decoder.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/csv_table.hpp"
#include "util/shell_quote.hpp"

namespace mmprof::test {

TempDir::TempDir() {
  std::random_device rd;
  auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = base / ("mmprof-test-" + std::to_string(rd()));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory under " + base.string());
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
    result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string shell_quote(const std::filesystem::path& p) {
  return mmprof::shell_quote(p.string());
}

CommandResult run_mmprof(const std::string& args) {
  return run_command(shell_quote(mmprof_bin()) + " " + args + " </dev/null");
}

SplitResult run_mmprof_split(const std::string& args) {
  const TempDir dir;
  const auto errors = dir.path() / "stderr";
  // The braces keep run_command's own 2>&1 from joining stderr back to stdout.
  const CommandResult r = run_command("{ " + shell_quote(mmprof_bin()) + " " + args +
                                      " </dev/null 2>" + shell_quote(errors) + "; }");
  return {r.exit_code, r.output, read_text(errors)};
}

std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string replaced(std::string text, const std::string& what, const std::string& with) {
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size()))
    text.replace(at, what.size(), with);
  return text;
}

std::string read_text(const std::filesystem::path& path) {
  const auto bytes = read_bytes(path);
  return {bytes.begin(), bytes.end()};
}

std::string text_or_empty(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<double> read_numbers(const std::filesystem::path& path) {
  std::vector<double> v;
  std::ifstream in(path);
  for (double x; in >> x;)
    v.push_back(x);
  return v;
}

nlohmann::json read_json(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = read_bytes(path);
  return nlohmann::json::parse(bytes.begin(), bytes.end());
}

Summary typed(const nlohmann::json& j) {
  return summary_from_json(j, "summary.json");
}

std::string verdict_before_drift(const nlohmann::json& result) {
  const std::string verdict = result.value("verdict", "");
  const std::string reason = result.value("reason", "");
  const std::string prefix = "would be ";
  if (verdict != "INCONCLUSIVE" || reason.rfind(prefix, 0) != 0) return verdict;
  return reason.substr(prefix.size(), reason.find(',') - prefix.size());
}

const nlohmann::json& with_class(const nlohmann::json& list, const std::string& cls) {
  for (const auto& e : list)
    if (e.value("class", "") == cls) return e;
  static const nlohmann::json none;
  ADD_FAILURE() << "no class " << cls << " in " << list.dump();
  return none;
}

SampleInfo sample_info(const SampleSpec& spec) {
  SampleInfo s{};
  s.index = spec.index;
  s.worker = spec.worker;
  s.modality = spec.modality;
  s.format = spec.format;
  s.source_width = spec.width;
  s.source_height = spec.height;
  s.read_ms = spec.read_ms;
  s.decode_ms = spec.decode_ms;
  s.augment_ms = spec.augment_ms;
  s.bytes = spec.bytes;
  s.t_start_ns = spec.t_start_ns;
  return s;
}

size_t Csv::column(const std::string& name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << "no column " << name;
  return static_cast<size_t>(it - header.begin());
}

Csv read_csv(const std::filesystem::path& path) {
  const std::string text = read_text(path);
  rundir::CsvReader table(text, path.string());
  Csv csv{table.header(), {}};
  while (table.next()) {
    std::vector<std::string>& row = csv.rows.emplace_back();
    for (size_t c = 0; c < csv.header.size(); ++c)
      row.emplace_back(table.cell(c));
  }
  return csv;
}

void write_bytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  write_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

double psnr(const uint8_t* a, const uint8_t* b, size_t n) {
  return psnr_u8(a, b, n);
}

std::string decode_error(ImageDecoder& decoder, const std::vector<uint8_t>& bytes, RgbImage& out) {
  try {
    decoder.decode(bytes, {}, 0, DctScaling::off, out);
  } catch (const DecodeError& e) {
    return e.what();
  }
  return "";
}

std::vector<uint8_t> ffmpeg_decode_rgb(const std::filesystem::path& file, int frame_index) {
  auto tmp = std::filesystem::temp_directory_path() /
             ("mmprof-ffmpeg-" + std::to_string(std::random_device{}()) + ".rgb");
  std::string cmd = "ffmpeg -v error -nostdin -y -i '" + file.string() + "' -vf 'select=eq(n\\," +
                    std::to_string(frame_index) + ")' -frames:v 1 -f rawvideo -pix_fmt rgb24 '" +
                    tmp.string() + "'";
  auto r = run_command(cmd);
  if (r.exit_code != 0) throw std::runtime_error("ffmpeg failed: " + r.output);
  auto bytes = read_bytes(tmp);
  std::filesystem::remove(tmp);
  return bytes;
}

std::vector<std::string> design_summary_keys() {
  std::vector<std::string> keys = {"throughput.compute.samples_per_s",
                                   "throughput.pipeline.samples_per_s",
                                   "throughput.pipeline.batches_per_s",
                                   "throughput.pipeline.mb_per_s",
                                   "throughput.end_to_end.samples_per_s",
                                   "throughput.predicted_end_to_end.samples_per_s",
                                   "stall_fraction",
                                   "time_to_first_batch_ms",
                                   "memory.main",
                                   "memory.workers",
                                   "memory.host_peak_mib",
                                   "memory.total_pss_peak_mib",
                                   "cpu.utilization_cores",
                                   "cpu.per_process",
                                   "io.read_bytes",
                                   "io.read_mb_per_s",
                                   "gpu",
                                   "errors.count"};
  for (const char* d : {"step", "wait", "compute", "h2d"}) {
    for (const char* f : {"mean", "p50", "p90", "p99", "p999", "max"}) {
      keys.push_back(std::string("latency_ms.") + d + "." + f);
    }
  }
  for (const char* d : {"read", "decode", "augment", "collate", "pin"}) {
    for (const char* f : {"mean", "p50", "p90", "p99", "max"}) {
      keys.push_back(std::string("latency_ms.stages.") + d + "." + f);
    }
  }
  return keys;
}

nlohmann::json::json_pointer dotted_pointer(const std::string& dotted) {
  std::string p;
  std::stringstream in(dotted);
  for (std::string part; std::getline(in, part, '.');)
    p += "/" + part;
  return nlohmann::json::json_pointer(p);
}

void SuiteDataset::make(const std::string& gen_args) {
  dir_ = std::make_unique<TempDir>();
  gen_ = run_mmprof("gen --quiet --out " + shell_quote(path()) + " " + gen_args);
}

void SuiteDataset::drop() {
  dir_.reset();
}

std::multiset<std::string> first_epoch_keys(const std::filesystem::path& run,
                                            const std::string& phase) {
  std::set<int64_t> first_epoch;
  std::istringstream digests(read_text(run / run_file::digests));
  for (std::string line; std::getline(digests, line);) {
    if (line.rfind(phase + ",", 0) != 0) continue;
    const auto a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
    if (line.substr(b + 1, c - b - 1) == "0") first_epoch.insert(std::stoll(line.substr(a + 1)));
  }
  std::multiset<std::string> keys;
  for (const StageRow& s : RunDir::open(run).stages()) {
    if (s.phase == phase && first_epoch.count(s.step) > 0) keys.insert(s.key);
  }
  return keys;
}

int64_t fake_clock() noexcept {
  static int64_t ns = 0;
  return ns += 1'000'000'000;
}

bool capability_required(const std::string& capability) {
  const char* env = std::getenv("MMPROF_TEST_REQUIRE");
  std::stringstream list(env ? env : "");
  for (std::string item; std::getline(list, item, ',');)
    if (item == capability) return true;
  return false;
}

std::string mmprof_bin() {
  return MMPROF_TEST_BIN;
}

const JobTorch& job_torch() {
  static const JobTorch torch = [] {
    const char* env = std::getenv("MMPROF_TEST_TORCH");
    JobTorch t;
    if (env != nullptr && std::string(env) == "1.13") {
      t = {"1.13", "torch", "/usr/bin/python3", ""};
    } else {
      const CommandResult venv =
          run_command(shell_quote(source_dir() / "scripts" / "torch2-python") + " 2>/dev/null");
      t = {"2", "torch2", "", ""};
      if (venv.exit_code == 0) t.python = venv.output.substr(0, venv.output.find('\n'));
    }
    if (!t.python.empty() &&
        run_command(shell_quote(t.python) + " -c 'import torch' 2>/dev/null").exit_code != 0) {
      t.python.clear();
    }
    if (t.python.empty()) {
      t.why = t.label == "2" ? "no torch 2.x venv: scripts/install-deps --torch2"
                             : "/usr/bin/python3 has no torch: scripts/install-deps";
    }
    return t;
  }();
  return torch;
}

std::filesystem::path source_dir() {
  return MMPROF_TEST_SOURCE_DIR;
}

}  // namespace mmprof::test
