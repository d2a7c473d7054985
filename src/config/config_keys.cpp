#include "config/config_keys.hpp"

#include <fmt/format.h>

#include <climits>
#include <cmath>

namespace mmprof::config {
namespace {

using nlohmann::json;

constexpr double kIntMax = INT32_MAX;
constexpr double kBytesMax = 1ull << 50;  // a file size: 1 PiB
constexpr double kMinWaitS = 0.001;       // a timeout: 1 ms (libcurl's and poll's unit)
constexpr double kDayS = 86400;
constexpr double kWeekS = 7 * kDayS;

KeySpec integer(std::string_view key, int64_t def, double lo, double hi,
                std::string_view doc = "") {
  return {key, KeyType::integer, def, {}, lo, hi, "", doc, ""};
}
// Every number has a range: a duration in a double becomes int64 nanoseconds or a libcurl
// millisecond count, and 1e13 ms or 1e-9 s must be refused by name, not overflow or round to
// "no timeout" (issue 34).
KeySpec number(std::string_view key, double def, double lo, double hi, std::string_view doc = "") {
  return {key, KeyType::number, def, {}, lo, hi, "", doc, ""};
}
KeySpec boolean(std::string_view key, bool def, std::string_view doc = "") {
  return {key, KeyType::boolean, def, {}, -INFINITY, INFINITY, "", doc, ""};
}
KeySpec choice(std::string_view key, std::vector<std::string> choices, std::string_view doc = "") {
  json def = choices.front();
  return {key, KeyType::choice, def, std::move(choices), -INFINITY, INFINITY, "", doc, ""};
}
KeySpec text(std::string_view key, const std::string& def, std::string_view doc = "") {
  return {key, KeyType::text, def, {}, -INFINITY, INFINITY, "", doc, ""};
}
KeySpec path(std::string_view key, std::string_view doc = "") {
  return {key, KeyType::path, nullptr, {}, -INFINITY, INFINITY, "", doc, ""};
}
KeySpec env_integer(std::string_view key, std::string_view env, std::string_view doc) {
  return {key, KeyType::integer, "env", {}, 0, kIntMax, env, doc, ""};
}

// A key a user's job takes too: `argument` is its PyTorch DataLoader name.
KeySpec job_key(KeySpec k, std::string_view argument) {
  k.dataloader = argument;
  return k;
}

std::string yaml_value(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return fmt::format("{}", v.get<double>());  // shortest form: 300, 0.5
}

std::string comment(const KeySpec& k) {
  std::string c;
  if (k.type == KeyType::choice) {
    for (const auto& option : k.choices)
      c += (c.empty() ? "" : " | ") + option;
    if (!k.doc.empty()) c += ": ";
  }
  return c + std::string(k.doc);
}

// A "key: value" line with its comment aligned at column 25 (one space when the line is longer).
std::string line(std::string_view text, const std::string& note) {
  std::string out(text);
  if (!note.empty()) out += std::string(out.size() < 24 ? 24 - out.size() : 0, ' ') + " # " + note;
  return out + "\n";
}

// data.*, loader.*: where the samples come from and how they are loaded.
std::vector<KeySpec> input_keys() {
  return {
      path("data.path", "null = the embedded default dataset (~/.cache/mmprof/default-v1)"),
      choice("data.layout", {"auto", "files", "tar", "tar_stream"}),
      integer("data.shuffle_buffer", 1000, 1, 1 << 24,
              "data.layout=tar_stream: samples held to shuffle each worker's stream (1: none)"),
      choice("data.cache", {"as-is", "warm", "cold"},
             "before each loader phase: the page cache as it is, filled, or emptied of the data"),
      integer("data.remote.concurrency", 4, 1, 256,
              "an http(s) data.path: range requests in flight per worker"),
      integer("data.remote.retries", 3, 0, 100,
              "a 5xx, timeout or cut connection is retried this often (back-off 0.1 s, doubling)"),
      number("data.remote.timeout_s", 30, kMinWaitS, kDayS,
             "longest one request may take, connecting included"),
      job_key(integer("loader.batch_size", 32, 1, 1 << 16), "batch_size"),
      job_key(integer("loader.num_workers", 2, 0, 256), "num_workers"),
      choice("loader.worker_mode", {"process", "thread"}),
      job_key(integer("loader.prefetch_factor", 2, 1, 64), "prefetch_factor"),
      job_key(boolean("loader.persistent_workers", true), "persistent_workers"),
      job_key(boolean("loader.in_order", true), "in_order"),
      job_key(choice("loader.pin_memory", {"auto", "true", "false"}), "pin_memory"),
      job_key(boolean("loader.shuffle", true), "shuffle"),
      integer("loader.seed", 0, 0, 1 << 30),
      choice("loader.on_error", {"skip", "fail"}),
      choice("loader.on_worker_failure", {"respawn", "fail"},
             "a dead or hung worker is replaced, its batches retried"),
      integer("loader.max_respawns", 4, 0, 1 << 16, "per loader; one more death fails the run"),
      job_key(number("loader.timeout_s", 300, kMinWaitS, kWeekS,
                     "longest a worker may hold one batch before it counts as hung"),
              "timeout"),
      boolean("loader.buffer_reuse", true,
              "keep worker decode buffers between samples (false: fresh pages per sample)"),
      boolean("loader.huge_pages", false,
              "batch ring from the hugetlbfs pool (vm.nr_hugepages must cover it)"),
      boolean("loader.pin_workers", false, "worker i on the i-th CPU of the affinity mask"),
  };
}

// image.*, video.*, text.*, decode.*: how each modality is decoded and shaped.
std::vector<KeySpec> media_keys() {
  return {
      integer("image.size", 224, 8, 4096),
      choice("image.dtype", {"float32", "uint8"}),
      boolean("image.dct_scaling", true),
      choice("image.dct_scales", {"halves", "eighths"},
             "halves: 1/2, 1/4, 1/8 (SIMD IDCTs); eighths: any n/8 (3/8..7/8 are slower C IDCTs)"),
      boolean("image.crop_decode", true,
              "JPEG: decode only the rows and blocks around the random crop (same pixels)"),
      choice("image.resizer", {"mmprof", "swscale"},
             "mmprof is PIL's antialiased filter, swscale FFmpeg's bilinear"),
      boolean("image.simd", true,
              "mmprof's resize with AVX2 where the CPU has it (same pixels; false: portable C++)"),
      choice("image.decode_device", {"inherit", "cpu", "gpu"},
             "where images decode: inherit takes decode.device"),
      integer("image.max_pixels", 178'956'970, 1, kIntMax,
              "larger images are refused from their header (PIL's bomb threshold)"),
      integer("image.max_bytes", 256 << 20, 1, kBytesMax,
              "larger image files are refused before they are read (256 MiB)"),
      integer("image.max_decode_ms", 10'000, 0, kIntMax,
              "a longer decode fails its sample (0 = no budget)"),
      integer("video.frames", 8, 1, 1024),
      integer("video.size", 224, 8, 4096),
      choice("video.sampling", {"uniform", "random_window"}),
      integer("video.decoder_threads", 1, 1, 64),
      boolean("video.reuse_decoder", false,
              "keep the codec context open across clips of the same decoder setup"),
      boolean("video.skip_nonref", true, "skip non-reference frames shown before the frame wanted"),
      choice("video.decode_device", {"inherit", "cpu", "gpu"},
             "where clips decode: inherit takes decode.device"),
      integer("video.max_pixels", 178'956'970, 1, kIntMax, "per frame"),
      integer("video.max_bytes", 1 << 30, 1, kBytesMax,
              "larger video files are refused before they are read (1 GiB)"),
      integer("video.max_decode_ms", 60'000, 0, kIntMax,
              "a longer decode of one clip fails its sample (0 = no budget)"),
      integer("text.seq_len", 77, 1, 1 << 16),
      integer("text.max_bytes", 1 << 20, 0, kIntMax,
              "longer captions are refused before they are read"),
      choice("decode.device", {"cpu", "gpu"},
             "cpu: the loader's workers decode; gpu: they only read, the main process decodes "
             "on the GPU"),
      choice("decode.gpu_backend", {"nvdec", "emulated"},
             "nvdec: NVIDIA's decode engines through FFmpeg's CUDA hwaccel; emulated: the host "
             "decodes in the main process in their place (rehearsals, tests)"),
      integer("decode.staging_mib", 64, 1, 1 << 16,
              "per batch slot: room for the compressed bytes workers hand to the main process"),
  };
}

// step.*, phases.*, dist.*, metrics.*, trace.*: the consumer and what is measured.
std::vector<KeySpec> run_keys() {
  return {
      choice("step.kind", {"none", "sleep", "spin", "torch", "gemm"}),
      number("step.ms", 0, 0, 3'600'000, "per micro-batch, for sleep, spin and gemm"),
      path("step.model"),
      integer("step.accum_steps", 1, 1, 1 << 16),
      text("step.device", "cpu", "cpu | cuda | cuda:N (gpu = cuda)"),
      integer("phases.warmup_steps", 10, 0, 1 << 24),
      integer("phases.steps", 100, 1, 1 << 24),
      number("phases.warmup_s", 0, 0, kDayS,
             "warm-up lasts at least this long too (0: by steps only)"),
      integer("phases.steady_blocks", 0, 0, 1 << 10,
              "> 0: steady-state check after warm-up (steady.json; mmprof ab sets it)"),
      env_integer("dist.rank", "RANK", "from RANK, else 0"),
      env_integer("dist.world_size", "WORLD_SIZE", "from WORLD_SIZE, else 1"),
      choice("dist.sync", {"none", "barrier", "allreduce"}),
      number("dist.allreduce_mb", 25, 0.001, 1 << 16,
             "gradient MB summed across ranks per optimizer step (dist.sync=allreduce)"),
      number("dist.timeout_s", 120, kMinWaitS, kDayS,
             "rendezvous and each collective: a dead or hung rank stops the others after this"),
      integer("metrics.interval_ms", 100, 0, 60'000,
              "resource sampling period (resources.csv, host.csv); 0 = phase boundaries only"),
      integer("trace.sample_every", 1, 1, kIntMax,
              "per-sample spans for every Nth batch; batch, step and counter events always"),
      integer("trace.max_events", 1'000'000, 1, kIntMax,
              "recorded events past this cap are dropped and counted (trace.json, summary)"),
  };
}

}  // namespace

const std::vector<KeySpec>& key_table() {
  static const std::vector<KeySpec> keys = [] {
    std::vector<KeySpec> all;
    for (auto&& part : {input_keys(), media_keys(), run_keys()})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return keys;
}

const KeySpec* find_key(std::string_view dotted) {
  for (const auto& k : key_table())
    if (k.key == dotted) return &k;
  return nullptr;
}

std::vector<std::string_view> dataloader_keys() {
  std::vector<std::string_view> out;
  for (const auto& k : key_table())
    if (!k.dataloader.empty()) out.push_back(k.key);
  return out;
}

std::string_view section_doc(std::string_view section) {
  if (section == "trace") return "mmprof trace only (see docs/trace.md)";
  return "";
}

std::string key_values(const KeySpec& k) {
  const auto range = [&](const char* what) {
    const std::string hi = k.max >= kIntMax ? "" : yaml_value(k.max);
    std::string r = std::isfinite(k.min) && !hi.empty()
                        ? fmt::format("{} in [{}, {}]", what, yaml_value(k.min), hi)
                    : std::isfinite(k.min) ? fmt::format("{} >= {}", what, yaml_value(k.min))
                                           : what;
    return k.env.empty() ? r : r + " or env (" + std::string(k.env) + ")";
  };
  switch (k.type) {
    case KeyType::choice: {
      std::string c;
      for (const auto& option : k.choices)
        c += (c.empty() ? "" : " | ") + option;
      return c;
    }
    case KeyType::boolean:
      return "true | false";
    case KeyType::integer:
      return range("integer");
    case KeyType::number:
      return range("number");
    case KeyType::path:
      return "path or null";
    default:
      return "text";
  }
}

std::string key_list_text() {
  std::string out;
  for (const KeySpec& k : key_table()) {
    std::string doc(k.doc);
    if (!k.dataloader.empty()) {
      doc +=
          (doc.empty() ? "" : "; ") + fmt::format("a user's job: DataLoader({}=...)", k.dataloader);
    }
    out += fmt::format("{}\t{}\t{}\t{}\n", k.key, key_values(k), yaml_value(k.default_value), doc);
  }
  return out;
}

std::string default_config_yaml() {
  std::string out =
      "# The embedded default configuration, written out by the key table of\n"
      "# src/config/config_keys.cpp (a test checks this file against it). Override any key with\n"
      "# --set key=value; docs/architecture.md says how to add one.\n";
  // Keys nest by their dots ("data.remote.timeout_s" under data: then remote:); the table lists
  // the keys of one section together.
  std::vector<std::string_view> open;  // the sections the previous key was in
  for (const auto& k : key_table()) {
    std::vector<std::string_view> parts;
    for (size_t at = 0;;) {
      const size_t dot = k.key.find('.', at);
      parts.push_back(k.key.substr(at, dot == std::string_view::npos ? dot : dot - at));
      if (dot == std::string_view::npos) break;
      at = dot + 1;
    }
    size_t same = 0;
    while (same < open.size() && same + 1 < parts.size() && open[same] == parts[same])
      ++same;
    open.resize(same);
    for (; open.size() + 1 < parts.size(); open.push_back(parts[open.size()])) {
      const std::string_view s = parts[open.size()];
      out += line(fmt::format("{:{}}{}:", "", 2 * open.size(), s),
                  open.empty() ? std::string(section_doc(s)) : std::string());
    }
    out += line(
        fmt::format("{:{}}{}: {}", "", 2 * open.size(), parts.back(), yaml_value(k.default_value)),
        comment(k));
  }
  return out;
}

}  // namespace mmprof::config
