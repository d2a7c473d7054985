#include "env/inventory.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <mutex>

#include "env/network.hpp"
#include "env/repo_info.hpp"
#include "env/run_provenance.hpp"
#include "env/storage.hpp"
#include "env/system_info.hpp"
#include "probe/host_files.hpp"

extern char** environ;

namespace mmprof::env {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path cwd() {
  std::error_code ec;
  return fs::current_path(ec);
}

fs::path canonical_or_absolute(const fs::path& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p) : c;
}

json compute_static(const fs::path& repo, const Dataset* dataset) {
  const procfs::HostFiles host;
  json storage;
  if (dataset != nullptr && dataset->remote()) {
    // No local device holds it: what its server stores it on is out of reach.
    storage = {{"of", "remote data path"},
               {"url", dataset->root().string()},
               {"reason",
                "the dataset is read over HTTP; the network's rate is the run's "
                "(summary.json locality)"}};
  } else {
    const fs::path data_path = dataset != nullptr ? dataset->root() : cwd();
    storage = storage_info(host, canonical_or_absolute(data_path).string());
    storage["of"] = dataset != nullptr ? "data path" : "working directory (no --data given)";
  }
  return {{"repo", repo_info(repo.empty() ? cwd() : repo)},
          {"software", software_info(host)},
          {"hardware", hardware_info(host)},
          {"storage", storage},
          {"interfaces", network_interfaces(host)}};
}

}  // namespace

json current_loader_environment() {
  return loader_environment(environ);
}

json static_inventory(const fs::path& repo, const Dataset* dataset) {
  static std::mutex mutex;
  static std::map<std::string, json> cache;
  std::string key = repo.string();
  key.push_back('\n');
  if (dataset != nullptr) key.append(dataset->root().string());
  const std::lock_guard lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, compute_static(repo, dataset)).first;
  return it->second;
}

json build_inventory(const InventoryOptions& o) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  json s = static_inventory(o.repo, o.dataset);
  const auto now = std::chrono::system_clock::now();
  json inv = {
      {"schema", kInventorySchema},
      {"created_utc", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                                  fmt::gmtime(std::chrono::system_clock::to_time_t(now)))},
      {"run",
       {{"command", o.argv},
        {"cwd", cwd().string()},
        {"hostname", host},
        {"environment", current_loader_environment()},
        {"mmprof", mmprof_build()}}},
      {"repo", s["repo"]},
      {"software", s["software"]},
      {"hardware", s["hardware"]},
      {"storage", s["storage"]},
      {"network", {{"interfaces", s["interfaces"]}}},
      {"data_mix", nullptr},
  };
  const auto counters = network_counters();
  json totals = json::object();
  for (const auto& [name, c] : counters.interfaces)
    totals[name] = {{"rx_bytes", c.rx_bytes}, {"tx_bytes", c.tx_bytes}};
  inv["network"]["counters"] = counters.valid ? totals : json();
  if (o.dataset != nullptr && o.data_mix) {
    inv["data_mix"] = data_mix(*o.dataset, o.mix_limit, o.mix_seed);
  } else if (o.dataset == nullptr) {
    inv["data_mix_reason"] = "no dataset given (--data)";
  }
  if (o.probe_storage && o.dataset != nullptr && o.dataset->remote()) {
    inv["storage"]["probe_reason"] = "a remote dataset: no local storage to probe";
  } else if (o.probe_storage && o.dataset != nullptr) {
    std::vector<ProbeFile> files;
    for (const auto& f : o.dataset->files()) {
      std::error_code ec;
      const auto path = o.dataset->root() / f;
      files.push_back({path.string(), static_cast<uint64_t>(fs::file_size(path, ec))});
    }
    inv["storage"]["probe"] = run_storage_probe(files, o.storage_limits);
  }
  return inv;
}

}  // namespace mmprof::env
