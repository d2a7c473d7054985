#include "measure/manifest.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "env/inventory.hpp"
#include "mmprof/run_dir.hpp"
#include "util/version.hpp"

namespace mmprof {

nlohmann::json baseline_spec(const Config& c, const RunFacts& facts) {
  const int per_device = c.loader.batch_size;
  const int global = per_device * c.step.accum_steps * c.dist.world_size;
  return {
      {"step_kind", to_string(c.step.kind)},
      {"training_step", facts.step_description},
      {"timings_include_model_compute", facts.step_includes_model_compute},
      {"accum_steps", c.step.accum_steps},
      {"per_device_batch", per_device},
      {"global_batch", global},
      {"world_size", c.dist.world_size},
      {"rank", c.dist.rank},
      {"sync", c.dist.sync},
      {"seq_len", c.text.seq_len},
      {"image",
       {{"shape", {3, c.image.size, c.image.size}},
        {"dtype", c.image.dtype == ImageDType::uint8 ? "uint8" : "float32"},
        {"images_per_sample", 1}}},
      {"video",
       {{"shape", {c.video.frames, 3, c.video.size, c.video.size}},
        {"frames", c.video.frames},
        {"sampling", c.video.sampling == VideoSampling::uniform ? "uniform" : "random_window"}}},
      {"step_unit", "one optimizer step = accum_steps batches"},
  };
}

namespace {

// The network block: interfaces, and at the end of a run the bytes moved since it started.
nlohmann::json network_block(const nlohmann::json& interfaces, const RunFacts& facts) {
  nlohmann::json n = {{"interfaces", interfaces}};
  if (facts.end_of_run) {
    n["during_run"] = env::network_delta(facts.network_at_start, env::network_counters());
  } else {
    n["during_run"] = nullptr;
    n["during_run_reason"] = "measured at the end of the run";
  }
  return n;
}

}  // namespace

nlohmann::json provenance_manifest(const std::vector<std::string>& argv,
                                   const nlohmann::json& config_tree,
                                   const std::filesystem::path& repo, const Dataset* dataset,
                                   const RunFacts& facts) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::error_code ec;
  const nlohmann::json inventory = env::static_inventory(repo, dataset);
  return {
      {"schema", run_schema::manifest},
      {"created_utc",
       fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(
                                                std::chrono::system_clock::now())))},
      {"command", argv},
      {"cwd", std::filesystem::current_path(ec).string()},
      {"hostname", host},
      {"mmprof", {{"version", version()}, {"commit", git_commit()}, {"dirty", git_dirty()}}},
      {"environment", env::current_loader_environment()},
      {"config", config_tree},
      {"inventory_schema", env::kInventorySchema},
      {"repo", inventory["repo"]},
      {"software", inventory["software"]},
      {"hardware", inventory["hardware"]},
      {"storage", inventory["storage"]},
      {"network", network_block(inventory["interfaces"], facts)},
  };
}

}  // namespace mmprof
