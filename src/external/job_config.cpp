#include "external/job_config.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "config/config_keys.hpp"
#include "mmprof/error.hpp"
#include "rundir/json_file.hpp"

namespace mmprof::external {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json followed_config(const json& dataloader) {
  if (!dataloader.is_object() || !dataloader.contains("loaders")) return nullptr;
  for (const auto& l : dataloader["loaders"]) {
    if (l.is_object() && l.value("followed", false) && l.contains("config")) return l["config"];
  }
  return nullptr;
}

// One index file's shards, samples and bytes; throws InputError or json::exception on a corrupt
// one (the caller lists it as such).
struct IndexCount {
  int64_t shards = 0, samples = 0, bytes = 0;
};

IndexCount count_mds(const json& index) {
  IndexCount c;
  for (const auto& s : index.at("shards")) {
    ++c.shards;
    c.samples += s.at("samples").get<int64_t>();
    // What the shard holds on disk: its compressed file when it has one.
    const json& file =
        s.contains("zip_data") && s["zip_data"].is_object() ? s["zip_data"] : s.at("raw_data");
    c.bytes += file.at("bytes").get<int64_t>();
  }
  return c;
}

IndexCount count_litdata(const json& index) {
  IndexCount c;
  for (const auto& chunk : index.at("chunks")) {
    ++c.shards;
    c.samples += chunk.at("chunk_size").get<int64_t>();
    c.bytes += chunk.at("chunk_bytes").get<int64_t>();
  }
  return c;
}

}  // namespace

json job_config_tree(const json& tree, const json& dataloader) {
  json out = {{"metrics", tree.at("metrics")},
              {"trace", tree.at("trace")},
              {"phases",
               {{"steps", tree.at("phases").at("steps")},
                {"warmup_steps", tree.at("phases").at("warmup_steps")}}}};
  const json config = followed_config(dataloader);
  if (!config.is_object()) {
    out["loader"] = nullptr;
    return out;
  }
  json loader = json::object();
  for (const std::string_view key : config::dataloader_keys()) {
    const std::string argument(config::find_key(key)->dataloader);
    loader[std::string(key.substr(key.find('.') + 1))] =
        config.contains(argument) ? config[argument] : json(nullptr);
  }
  // shuffle is an argument, not an attribute: the sampler it chose says it. Any other sampler (an
  // IterableDataset's, a job's own) is not the shuffle argument's doing: null.
  const std::string sampler = config.value("sampler", json()).is_string() ? config["sampler"] : "";
  if (loader.contains("shuffle") && loader["shuffle"].is_null()) {
    if (sampler == "RandomSampler") loader["shuffle"] = true;
    if (sampler == "SequentialSampler") loader["shuffle"] = false;
  }
  out["loader"] = loader;
  return out;
}

json streamed_dataset(const json& dataloader) {
  const json config = followed_config(dataloader);
  if (!config.is_object() || !config.contains("library") || !config["library"].is_object())
    return nullptr;
  const json& library = config["library"];
  const std::string name = library.value("name", "");
  const bool mds = name == "mosaicml-streaming";
  if (!mds && name != "litdata") return nullptr;
  json out = {{"layout", mds ? "mds" : "litdata"},
              {"library", name},
              {"paths", json::array()},
              {"index_files", json::array()},
              {"shards", 0},
              {"samples", 0},
              {"total_bytes", 0},
              {"why_incomplete", json::array()}};
  for (const auto& where : library.value("locations", json::array())) {
    if (!where.is_object() || !where["local"].is_string()) continue;
    const fs::path index = fs::path(where["local"].get<std::string>()) / "index.json";
    try {
      const std::optional<json> j = rundir::read_json_if_present(index);
      if (!j) {
        out["why_incomplete"].push_back(
            fmt::format("{}: no index yet (the shards are streamed from {})", index.string(),
                        where["remote"].is_string() ? where["remote"].get<std::string>() : "?"));
        continue;
      }
      const IndexCount c = mds ? count_mds(*j) : count_litdata(*j);
      out["paths"].push_back(where["local"]);
      out["index_files"].push_back(index.string());
      out["shards"] = out["shards"].get<int64_t>() + c.shards;
      out["samples"] = out["samples"].get<int64_t>() + c.samples;
      out["total_bytes"] = out["total_bytes"].get<int64_t>() + c.bytes;
    } catch (const Error& e) {
      out["why_incomplete"].push_back(e.what());
    } catch (const json::exception& e) {
      out["why_incomplete"].push_back(fmt::format("{} is not a {} index ({})", index.string(),
                                                  mds ? "MDS" : "LitData", e.what()));
    }
  }
  if (out["index_files"].empty()) {
    for (const char* figure : {"shards", "samples", "total_bytes"})
      out[figure] = nullptr;  // unknown, not none
    if (out["why_incomplete"].empty())
      out["why_incomplete"].push_back(name + "'s dataset names no local folder");
  }
  return out;
}

}  // namespace mmprof::external
