#include "report/knowledge_base.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "mmprof/error.hpp"
#include "report/json_access.hpp"
#include "report/yaml_json.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

json result(const std::string& check, bool ok, const std::string& detail) {
  return {{"check", check}, {"ok", ok}, {"detail", detail}};
}

bool network_fs(const std::string& fs) {
  static const char* kNetwork[] = {"nfs",  "nfs4",   "cifs",      "smb3", "lustre",
                                   "gpfs", "beegfs", "glusterfs", "ceph"};
  return fs.rfind("fuse.", 0) == 0 || std::any_of(std::begin(kNetwork), std::end(kNetwork),
                                                  [&](const char* n) { return fs == n; });
}

// "13.0" >= "11.0", "1.13.0a0" >= "1.7", "2.6.0+cu124" >= "2.6": major, minor, patch compared as
// numbers; a suffix after them (a pre-release, a local build tag) is ignored.
bool version_at_least(const std::string& have, const std::string& need) {
  std::array<int, 3> h{}, n{};
  std::sscanf(have.c_str(), "%d.%d.%d", &h[0], &h[1], &h[2]);
  std::sscanf(need.c_str(), "%d.%d.%d", &n[0], &n[1], &n[2]);
  return h >= n;
}

using Check = std::function<json(const json& arg, const json& analysis, const json& manifest)>;

json check_gpu(const json&, const json&, const json& m) {
  const json gpus = value_at(m, "/hardware/gpus");
  if (gpus.is_array() && !gpus.empty()) {
    return result(
        "gpu", true,
        fmt::format("{} GPU(s): {}", gpus.size(), value_text(gpus[0].value("name", json("?")))));
  }
  return result("gpu", false,
                "no GPU: " + string_at(m, "/hardware/gpu_unavailable_reason", "none listed"));
}

// NVDEC or NVJPG engines on one of the GPUs, as NVML counted them (hardware.gpus[].nvdec_engines,
// nvjpg_engines; docs/gpu.md). Unknown counts are not assumed.
json check_engine(const std::string& engine, const json& a, const json& m) {
  const json gpu = check_gpu(json(), a, m);
  if (gpu["ok"] != true) return result(engine, false, gpu["detail"]);
  const std::string key = engine + "_engines";
  for (const auto& g : value_at(m, "/hardware/gpus")) {
    const json n = g.value(key, json());
    if (n.is_number() && n.get<int>() > 0) {
      return result(engine, true,
                    fmt::format("{} x{} on {}", engine, n.get<int>(), value_text(g["name"])));
    }
  }
  return result(engine, false,
                "cannot verify: NVML gave no " + engine + " engine count for any GPU (" +
                    string_at(m, "/software/gpu_decode/nvml_reason", "NVML not in the manifest") +
                    ")");
}

// The pixels of one output image, and how it reads: image.size squared (mmprof's loader), else
// the height x width of the sample tensor a job's batches hold (channels first or last), the
// size its __getitem__ delivers. Nothing when neither is known.
std::optional<std::pair<double, std::string>> output_image(const json& m) {
  const json size = run_config_value("image.size", m);
  if (size.is_number()) {
    return std::pair(size.get<double>() * size.get<double>(),
                     fmt::format("{}x{} output", value_text(size), value_text(size)));
  }
  const json shape = value_at(m, "/baseline_spec/sample_tensor/shape");
  if (!shape.is_array() || shape.size() != 3) return std::nullopt;
  for (const auto& d : shape)
    if (!d.is_number_integer() || d.get<int64_t>() <= 0) return std::nullopt;
  const auto dim = [&](size_t i) { return shape[i].get<int64_t>(); };
  const auto channels = [](int64_t c) { return c == 1 || c == 3 || c == 4; };
  int64_t h = 0, w = 0;
  if (channels(dim(0))) {
    h = dim(1), w = dim(2);
  } else if (channels(dim(2))) {
    h = dim(0), w = dim(1);
  } else {
    return std::nullopt;
  }
  return std::pair(static_cast<double>(h * w),
                   fmt::format("{}x{} output of the job's batches", w, h));
}

// The share of the data mix's probed images whose source has more than `pixels_over_output` x
// the pixels of the output (output_image): sources a random-resized crop or a resize mostly
// throws away after paying for their decode.
json check_oversized_sources(const json& arg, const json&, const json& m) {
  const double k = arg.value("pixels_over_output", 4.0);
  const double need = arg.value("min_share", 0.25);
  const json resolutions = value_at(m, "/data_mix/images/resolutions");
  const auto output = output_image(m);
  if (!resolutions.is_object() || resolutions.empty() || !output) {
    return result("oversized_sources", false,
                  "cannot verify: the manifest has no image resolutions in its data mix or no "
                  "output size (image.size, or a job's image-shaped sample tensor)");
  }
  double images = 0, over = 0;
  for (const auto& [wxh, count] : resolutions.items()) {
    int w = 0, h = 0;
    if (std::sscanf(wxh.c_str(), "%dx%d", &w, &h) != 2 || !count.is_number()) continue;
    images += count.get<double>();
    if (static_cast<double>(w) * h > k * output->first) over += count.get<double>();
  }
  const double share = images > 0 ? over / images : 0;
  return result("oversized_sources", images > 0 && share >= need,
                fmt::format("{:.0f} % of the {:.0f} probed images have more than {:g} x the "
                            "pixels of the {} (need {:.0f} %)",
                            100 * share, images, k, output->second, 100 * need));
}

// The software versions a precondition may name, and where a job's manifest records each: torch
// is the user's job's own (its hook reports torch.__version__, docs/external-hook.md).
const std::map<std::string, std::string>& version_facts() {
  static const std::map<std::string, std::string> table = {
      {"torch", "/job/dataloader/versions/torch"}};
  return table;
}

// {software: minimum version}: every named version must be recorded and at least the minimum.
// mmprof's own loader is not PyTorch's: it has every option mmprof ab varies, so the check holds
// there and says what a PyTorch job would need.
json check_versions(const json& arg, const json&, const json& m) {
  std::string detail;
  const auto add = [&](const std::string& text) { detail += (detail.empty() ? "" : "; ") + text; };
  const bool job = string_at(m, "/source", "") == "external";
  for (const auto& [software, need] : arg.items()) {
    if (!job) {
      add(fmt::format("mmprof's own loader has it (a PyTorch job needs {} >= {})", software,
                      value_text(need)));
      continue;
    }
    const json have = value_at(m, version_facts().at(software));
    if (!have.is_string()) {
      return result("version_at_least", false,
                    fmt::format("cannot verify: the job's {} version is not recorded (need >= {})",
                                software, value_text(need)));
    }
    if (!version_at_least(have.get<std::string>(), value_text(need))) {
      return result("version_at_least", false,
                    fmt::format("the job's {} {} is older than {}, which introduced it", software,
                                have.get<std::string>(), value_text(need)));
    }
    add(fmt::format("the job's {} {} (need >= {})", software, have.get<std::string>(),
                    value_text(need)));
  }
  return result("version_at_least", true, detail);
}

// "1.40 cores idle on the host", or the run's own unused cores when the host was not measured.
std::string idle_cores_text(double idle, const json& a) {
  // Older runs have no host figures: their idle cores are only those the run left.
  const bool host = value_at(a, "/resources/cpu/host_busy_cores").is_number();
  return fmt::format(
      "{:.2f} cores {}", idle,
      host ? "idle on the host" : "the run left unused (the host's load not measured)");
}

// Whether the host has room for one loading process more: the idle cores cover what one of the
// run's own used, or they mostly waited off CPU (sleeping, on I/O or a lock), when the host's
// busy cores are not what limits them.
json check_room_for_a_worker(const json&, const json& a, const json&) {
  const WorkerCoreNeed need = worker_core_need(a);
  if (need.waits) return result("room_for_a_worker", true, need.text);
  const auto idle = number_at(a, "/resources/cpu/idle_cores");
  if (!idle) return result("room_for_a_worker", false, "cannot verify: CPU use not measured");
  return result("room_for_a_worker", *idle >= need.cores,
                fmt::format("{}; {}", need.text, idle_cores_text(*idle, a)));
}

// Whether the run measured an epoch boundary that stalled (summary epoch_boundary: a job's, or
// mmprof's loader's pipeline phase): a change that acts at the boundary (persistent workers)
// shows nothing in trials that never cross one, or cross one without a stall.
json check_epoch_boundary_stall(const json&, const json& a, const json&) {
  const json eb = value_at(a, "/epoch_boundary");
  if (!eb.is_object()) {
    return result("epoch_boundary_stall", false,
                  "cannot verify: the run has no epoch boundary figures");
  }
  const json phase = eb.contains("boundaries") ? eb : value_at(eb, "/pipeline");
  const auto boundaries = number_at(phase, "/boundaries").value_or(0);
  if (boundaries < 1) {
    const auto per_epoch = number_at(eb, "/batches_per_epoch");
    return result(
        "epoch_boundary_stall", false,
        fmt::format("no epoch boundary in the measured steps: the trials cannot show a change at "
                    "the boundary (measure more than an epoch{})",
                    per_epoch ? fmt::format(": over {:.0f} batches", *per_epoch) : ""));
  }
  const bool stall = value_at(eb, "/stall") == true;
  return result("epoch_boundary_stall", stall,
                fmt::format("{:.0f} epoch boundar{} measured: {}", boundaries,
                            boundaries == 1 ? "y" : "ies", string_at(eb, "/verdict", "?")));
}

json check_idle_cores(const json& arg, const json& a, const json&) {
  const auto idle = number_at(a, "/resources/cpu/idle_cores");
  if (!idle) return result("idle_cores", false, "cannot verify: CPU use not measured");
  return result("idle_cores", *idle >= arg.get<double>(),
                fmt::format("{} in the pipeline phase (need {})", idle_cores_text(*idle, a),
                            value_text(arg)));
}

json check_memory_headroom(const json& arg, const json& a, const json&) {
  const auto peak = number_at(a, "/resources/memory/host_peak_mib");
  const auto total = number_at(a, "/resources/memory/host_total_mib");
  if (!peak || !total) return result("memory_headroom", false, "cannot verify: memory not sampled");
  const double free = 1.0 - *peak / *total;
  return result("memory_headroom", free >= arg.get<double>(),
                fmt::format("{:.0f} % of host memory free at peak (need {:.0f} %)", 100 * free,
                            100 * arg.get<double>()));
}

json check_nvdec(const json&, const json& a, const json& m) {
  return check_engine("nvdec", a, m);
}

json check_nvjpg(const json&, const json& a, const json& m) {
  return check_engine("nvjpg", a, m);
}

json check_ffmpeg_decoder(const json& arg, const json&, const json& m) {
  // The inventory's gpu_decode block (docs/gpu.md): *_cuvid decoders and the codecs whose
  // own decoder has a CUDA hwaccel, so "h264_cuvid" and "h264" both ask for NVDEC.
  const json f = value_at(m, "/software/gpu_decode/ffmpeg");
  if (!f.is_object()) {
    return result("ffmpeg_decoder", false,
                  "cannot verify: the manifest does not list FFmpeg's GPU decoders");
  }
  bool has = false;
  for (const char* list : {"cuvid_decoders", "nvdec_hwaccel_codecs"}) {
    const json& names = f[list];
    has = has || std::find(names.begin(), names.end(), arg) != names.end();
  }
  return result("ffmpeg_decoder", has,
                "FFmpeg " + std::string(has ? "has " : "lacks ") + value_text(arg));
}

json check_cuda_min(const json& arg, const json&, const json& m) {
  const json driver = value_at(m, "/software/cuda/driver");
  if (!driver.is_string()) {
    return result("cuda_min", false,
                  "no CUDA driver: " + string_at(m, "/software/cuda/driver_reason", "unknown"));
  }
  const bool ok = version_at_least(driver.get<std::string>(), value_text(arg));
  return result("cuda_min", ok,
                fmt::format("CUDA driver {} (need {})", value_text(driver), value_text(arg)));
}

json check_config_in(const json& arg, const json&, const json& m) {
  for (const auto& [key, allowed] : arg.items()) {
    const json value = run_config_value(key, m);
    if (value.is_null() && string_at(m, "/source", "") == "external") {
      return result("config_in", false,
                    fmt::format("{}: the job's DataLoader (torch {}) has no such argument", key,
                                string_at(m, "/job/dataloader/versions/torch", "?")));
    }
    const std::string have = value_text(value);
    const bool ok = std::any_of(allowed.begin(), allowed.end(),
                                [&](const json& v) { return value_text(v) == have; });
    if (!ok) return result("config_in", false, fmt::format("{} is {} already", key, have));
  }
  return result("config_in", true, "configuration allows it");
}

json check_config_at_least(const json& arg, const json&, const json& m) {
  // A key that only has a meaning from some value of another on: PyTorch refuses
  // prefetch_factor and persistent_workers when num_workers is 0 (docs/2.6/data.html).
  for (const auto& [key, least] : arg.items()) {
    const json value = run_config_value(key, m);
    if (!value.is_number()) {
      return result("config_at_least", false,
                    fmt::format("cannot verify: {} is not recorded", key));
    }
    if (value.get<double>() < least.get<double>()) {
      return result("config_at_least", false,
                    fmt::format("{} is {}: the loader refuses this change below {}", key,
                                value_text(value), value_text(least)));
    }
  }
  return result("config_at_least", true, "configuration allows it");
}

json check_image_format(const json& arg, const json&, const json& m) {
  // A user's job records no data mix unless mmprof probed its data: unknown is not none.
  if (!value_at(m, "/data_mix/images/formats").is_object()) {
    return result("image_format", false,
                  "cannot verify: the manifest has no data mix (no image formats probed)");
  }
  const auto n = number_at(m, "/data_mix/images/formats/" + value_text(arg));
  return result("image_format", n.value_or(0) > 0,
                fmt::format("{} {} images in the data mix", n.value_or(0), value_text(arg)));
}

json check_modality(const json& arg, const json&, const json& m) {
  const auto n = number_at(m, "/data/" + value_text(arg) + "s");
  return result("modality", n.value_or(0) > 0,
                fmt::format("{} {}s in the dataset", n.value_or(0), value_text(arg)));
}

json check_layout(const json& arg, const json&, const json& m) {
  const std::string have = string_at(m, "/data/layout", "unknown");
  return result("layout", have == value_text(arg), "the dataset's layout is " + have);
}

json check_network_storage(const json&, const json&, const json& m) {
  if (string_at(m, "/storage/of", "") == "remote data path") {
    return result("network_storage", true,
                  "the data is read over HTTP from " + string_at(m, "/storage/url", "?"));
  }
  const std::string fs = string_at(m, "/storage/fs_type", "");
  if (fs.empty()) {
    return result("network_storage", false, "cannot verify: no storage block in the manifest");
  }
  return result("network_storage", network_fs(fs), "the data is on " + fs);
}

const std::map<std::string, Check>& checks() {
  static const std::map<std::string, Check> table = {
      {"idle_cores", check_idle_cores},
      {"room_for_a_worker", check_room_for_a_worker},
      {"epoch_boundary_stall", check_epoch_boundary_stall},
      {"memory_headroom", check_memory_headroom},
      {"gpu", check_gpu},
      {"nvdec", check_nvdec},
      {"nvjpg", check_nvjpg},
      {"ffmpeg_decoder", check_ffmpeg_decoder},
      {"cuda_min", check_cuda_min},
      {"config_in", check_config_in},
      {"config_at_least", check_config_at_least},
      {"image_format", check_image_format},
      {"oversized_sources", check_oversized_sources},
      {"modality", check_modality},
      {"layout", check_layout},
      {"version_at_least", check_versions},
      {"network_storage", check_network_storage},
  };
  return table;
}

void require(const json& j, const char* key, const std::string& where, const std::string& name) {
  if (!j.contains(key)) throw UsageError(fmt::format("{}: {} has no '{}'", name, where, key));
}

// One {classification, stages, resources} map of lists, or a non-empty list of such maps.
void check_addresses(const json& addresses, const std::string& where, const std::string& name) {
  const auto bad = [&] {
    return UsageError(fmt::format(
        "{}: {}'s addresses must be a map of classification/stages/resources lists, or a list "
        "of such maps; got {}",
        name, where, addresses.dump()));
  };
  const json alternatives = addresses.is_array() ? addresses : json::array({addresses});
  if (alternatives.empty()) throw bad();
  for (const auto& a : alternatives) {
    if (!a.is_object()) throw bad();
    for (const auto& [key, list] : a.items()) {
      if ((key != "classification" && key != "stages" && key != "resources") || !list.is_array())
        throw bad();
    }
  }
}

void check_version_names(const json& arg, const std::string& where, const std::string& name) {
  std::string known;
  for (const auto& [software, pointer] : version_facts())
    known += (known.empty() ? "" : ", ") + software;
  if (!arg.is_object() || arg.empty()) {
    throw UsageError(
        fmt::format("{}: {}'s version_at_least is not a map of software to a quoted version ({})",
                    name, where, known));
  }
  for (const auto& [software, need] : arg.items()) {
    if (!version_facts().count(software) || !need.is_string()) {
      throw UsageError(
          fmt::format("{}: {}'s version_at_least names {}: {} (known: {}, the version quoted)",
                      name, where, software, need.dump(), known));
    }
  }
}

}  // namespace

WorkerCoreNeed worker_core_need(const json& analysis) {
  const json loading = value_at(analysis, "/resources/cpu/loading");
  if (!loading.is_object())
    return {1, false, "a worker more needs a core (what the loading processes did: not measured)"};
  if (!loading["cores_each"].is_number())
    return {1, false, "a worker more needs a core (" + loading["text"].get<std::string>() + ")"};
  const double each = loading["cores_each"].get<double>();
  const bool waits = loading["kind"] == "off-cpu";
  // A process that mostly waits still runs a little: never less than a twentieth of a core each.
  return {std::max(each, 0.05), waits,
          fmt::format("a worker more needs about {:.2f} cores: {}", each,
                      loading["text"].get<std::string>())};
}

json parse_knowledge_base(const std::string& yaml_text, const std::string& name) {
  json kb = yaml_to_json(yaml_text, name);
  if (!kb.is_object()) throw UsageError(name + " is not a YAML map");
  require(kb, "version", "the knowledge base", name);
  require(kb, "changes", "the knowledge base", name);
  for (const auto& c : kb["changes"]) {
    require(c, "id", "a change", name);
    const std::string where = "change " + value_text(c["id"]);
    for (const char* key : {"title", "factor", "values", "addresses", "preconditions", "sources"})
      require(c, key, where, name);
    check_addresses(c["addresses"], where, name);
    for (const auto& p : c["preconditions"]) {
      if (!p.is_object() || p.size() != 1 || !checks().count(p.begin().key())) {
        throw UsageError(
            fmt::format("{}: {} has an unknown precondition {}", name, where, p.dump()));
      }
      if (p.begin().key() == "version_at_least")
        check_version_names(p.begin().value(), where, name);
    }
    for (const auto& s : c["sources"]) {
      require(s, "url", where + "'s source", name);
      require(s, "title", where + "'s source", name);
      // When a fact was published, or which version of the software it describes, dates it; the
      // day someone read a living page does not.
      if (!s.contains("published") && !s.contains("version")) {
        throw UsageError(fmt::format(
            "{}: {}'s source {} has neither 'published' nor 'version' (an 'accessed' date alone "
            "does not date what it says)",
            name, where, value_text(s["url"])));
      }
    }
  }
  return kb;
}

json check_precondition(const json& p, const json& analysis, const json& manifest) {
  const auto it = checks().find(p.begin().key());
  return it->second(p.begin().value(), analysis, manifest);
}

}  // namespace mmprof::report
