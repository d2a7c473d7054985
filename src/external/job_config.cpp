#include "external/job_config.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "config/config_keys.hpp"
#include "data/data_mix.hpp"
#include "mmprof/dataset.hpp"
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

namespace {

// The index a streaming library's writer left beside its shards (MDS, LitData), summed over the
// library's local locations.
json indexed_dataset(const json& library, bool mds) {
  const std::string name = library.value("name", "");
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

// A Hugging Face dataset: its rows as the dataset counts them, its Arrow files (one a shard) as
// they are on disk.
json arrow_dataset(const json& library) {
  const json rows = library.value("settings", json::object()).value("num_rows", json());
  json out = {{"layout", "arrow"},
              {"library", library.value("name", "")},
              {"paths", json::array()},
              {"shards", 0},
              {"samples", rows.is_number_integer() ? rows : json(nullptr)},
              {"total_bytes", 0},
              {"why_incomplete", json::array()}};
  for (const auto& where : library.value("locations", json::array())) {
    if (!where.is_object() || !where["local"].is_string()) continue;
    const fs::path file = where["local"].get<std::string>();
    std::error_code ec;
    const uintmax_t bytes = fs::file_size(file, ec);
    if (ec) {
      out["why_incomplete"].push_back(
          fmt::format("{}: its size cannot be read ({})", file.string(), ec.message()));
      continue;
    }
    out["paths"].push_back(file.string());
    out["shards"] = out["shards"].get<int64_t>() + 1;
    out["total_bytes"] = out["total_bytes"].get<int64_t>() + static_cast<int64_t>(bytes);
  }
  if (out["paths"].empty()) {
    out["shards"] = out["total_bytes"] = nullptr;
    if (out["why_incomplete"].empty())
      out["why_incomplete"].push_back("the dataset has no Arrow file on disk (built in memory)");
  }
  if (!rows.is_number_integer()) out["why_incomplete"].push_back("the dataset gave no row count");
  return out;
}

// A WebDataset's shards as mmprof indexes its own (tar layout, data.layout=tar): the samples, their
// bytes and their data mix, when the shard list names local files of one folder; else why not.
JobDataset shard_dataset(const json& library) {
  std::vector<std::string> names, remote;
  std::set<fs::path> folders;
  for (const auto& where : library.value("locations", json::array())) {
    if (!where.is_object()) continue;
    if (where["local"].is_string()) {
      const fs::path shard = where["local"].get<std::string>();
      folders.insert(shard.parent_path());
      names.push_back(shard.filename().string());
    } else if (where["remote"].is_string()) {
      remote.push_back(where["remote"].get<std::string>());
    }
  }
  std::string why;
  if (!remote.empty()) {
    why = fmt::format("the job streams {} of its shards from URLs (the first: {})", remote.size(),
                      remote.front());
  } else if (folders.size() != 1) {
    why = folders.empty() ? "the WebDataset names no shard list"
                          : fmt::format("the job's shards lie in {} folders", folders.size());
  } else {
    try {
      const Dataset d = Dataset::open_shards(*folders.begin(), names);
      json data = d.summary();
      data["library"] = library.value("name", "");
      if (d.files().size() < names.size()) {
        data["why_incomplete"] = {fmt::format("{} of the job's {} shards are not in {}",
                                              names.size() - d.files().size(), names.size(),
                                              folders.begin()->string())};
      }
      return {data, env::data_mix(d), ""};
    } catch (const Error& e) {
      why = e.what();
    }
  }
  return {nullptr, nullptr, "the WebDataset's shards are not a dataset mmprof reads: " + why};
}

}  // namespace

JobDataset job_dataset(const json& dataloader) {
  const json config = followed_config(dataloader);
  if (!config.is_object()) return {};
  if (config.contains("library") && config["library"].is_object()) {
    const json& library = config["library"];
    const std::string name = library.value("name", "");
    if (name == "mosaicml-streaming" || name == "litdata")
      return {indexed_dataset(library, name == "mosaicml-streaming"), nullptr, ""};
    if (name == "datasets") return {arrow_dataset(library), nullptr, ""};
    if (name == "webdataset") return shard_dataset(library);
    // A torchdata.nodes Loader reads a dataset of its own (its root below), DALI its reader.
    if (name != "torchdata") return {};
  }
  // A dataset with a folder root (torchvision's ImageFolder and its kind, under a DataLoader or a
  // torchdata.nodes Loader): the folder as mmprof opens its own datasets, and its data mix probed
  // from the files' headers.
  const json root = config.value("dataset_root", json());
  std::error_code ec;
  if (!root.is_string() || !fs::is_directory(root.get<std::string>(), ec)) return {};
  try {
    const Dataset d = Dataset::open(root.get<std::string>(), Layout::auto_detect);
    json data = d.summary();
    data["library"] = nullptr;
    data["root_of"] = config.value("dataset", json());
    return {data, env::data_mix(d), ""};
  } catch (const Error& e) {
    const json cls = config.value("dataset", json());
    return {nullptr, nullptr,
            fmt::format("the {} root {} is not a dataset mmprof reads: {}",
                        cls.is_string() ? cls.get<std::string>() : "dataset",
                        root.get<std::string>(), e.what())};
  }
}

}  // namespace mmprof::external
