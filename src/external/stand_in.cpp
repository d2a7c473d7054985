#include "external/stand_in.hpp"

#include <fmt/format.h>

#include <regex>

#include "mmprof/error.hpp"
#include "rundir/json_read.hpp"

namespace mmprof::external {
namespace {

using nlohmann::json;

// The output size of the first resizing transform in a torchvision transform's repr:
// "RandomResizedCrop(size=(224, 224), ...)", "Resize(size=256, ...)", "CenterCrop(size=(224,
// 224))". The last crop decides what the model sees, so crops win over resizes.
std::optional<int> transform_size(const std::string& repr) {
  static const std::regex crop(R"((?:RandomResizedCrop|CenterCrop|RandomCrop)\(size=\(?(\d+))");
  static const std::regex resize(R"(Resize\(size=\(?(\d+))");
  std::smatch m;
  if (std::regex_search(repr, m, crop) || std::regex_search(repr, m, resize))
    return std::stoi(m[1]);
  return std::nullopt;
}

}  // namespace

StandIn stand_in_for(const RunDir& job) {
  const Summary& s = job.summary();
  if (!s.external()) {
    throw UsageError(fmt::format("--like {}: not a run of your own job (mmprof baseline -- CMD)",
                                 job.dir().string()));
  }
  const JobLoader* loader = s.job ? s.job->dataloader.followed() : nullptr;
  if (loader == nullptr || !loader->config.is_object()) {
    throw UsageError(
        fmt::format("--like {}: the run has no DataLoader the hook followed (hook: {})",
                    job.dir().string(), s.job ? s.job->hook.status : "?"));
  }
  const json& c = loader->config;
  StandIn out;
  const auto take = [&](const char* arg, const char* key) {
    if (!c.contains(arg) || c[arg].is_null()) {
      out.unknown.push_back(key);
      return;
    }
    const json& v = c[arg];
    out.sets.push_back(
        fmt::format("{}={}", key, v.is_boolean() ? (v.get<bool>() ? "true" : "false") : v.dump()));
    out.why.push_back(fmt::format("{} = the job's DataLoader {}", key, arg));
  };
  take("batch_size", "loader.batch_size");
  take("num_workers", "loader.num_workers");
  if (c.value("num_workers", 0) > 0) take("prefetch_factor", "loader.prefetch_factor");
  take("pin_memory", "loader.pin_memory");
  take("persistent_workers", "loader.persistent_workers");
  if (c.contains("dataset_root") && c["dataset_root"].is_string()) {
    out.sets.push_back("data.path=" + c["dataset_root"].get<std::string>());
    out.why.push_back("data.path = the job's dataset root");
  } else {
    out.unknown.push_back("data.path (give --data)");
  }
  if (c.contains("transform") && c["transform"].is_string()) {
    if (const auto size = transform_size(c["transform"].get<std::string>())) {
      out.sets.push_back(fmt::format("image.size={}", *size));
      out.why.push_back("image.size = the job's crop/resize transform");
    }
  }
  // The job's own work per batch (its step minus its wait), as the stand-in's emulated step.
  if (const auto compute = s.latency.compute.p50) {
    out.sets.push_back("step.kind=sleep");
    out.sets.push_back(fmt::format("step.ms={:.3f}", *compute));
    out.why.push_back("step = a sleep of the job's median compute per batch (its step - its wait)");
  } else {
    out.unknown.push_back("step (the job measured no step)");
  }
  return out;
}

}  // namespace mmprof::external
