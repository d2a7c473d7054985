#include "run/locality.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <system_error>

#include "env/page_cache.hpp"

namespace mmprof {

std::string to_string(DataCache cache) {
  switch (cache) {
    case DataCache::warm:
      return "warm";
    case DataCache::cold:
      return "cold";
    case DataCache::as_is:
      break;
  }
  return "as-is";
}

DataLocality::DataLocality(DataCache cache, const Dataset& dataset) : cache_(cache) {
  if (dataset.remote()) {
    url_ = dataset.root().string();
    dataset_bytes_ = dataset.total_bytes();  // the samples' bytes (a shard's headers not known)
    return;
  }
  for (const auto& name : dataset.files())
    files_.push_back(dataset.root() / name);
  // Files: the index holds every file's size already (no stat of a million files). Tar: the
  // shards' sizes, headers and padding included.
  if (!dataset.layout_info().containers) {
    dataset_bytes_ = dataset.total_bytes();
  } else {
    for (const auto& file : files_) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(file, ec);
      if (!ec) dataset_bytes_ += size;
    }
  }
  const size_t every = (files_.size() + kResidencySample - 1) / kResidencySample;
  for (size_t i = 0; i < files_.size(); i += std::max<size_t>(every, 1))
    measured_.push_back(files_[i]);
}

void DataLocality::before_phase(const std::string& phase) {
  Phase& p = phases_[phase];
  if (!url_.empty()) {
    p.prepared = "remote";  // no local copy to fill or empty; the server's cache is its own
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  env::Residency r;
  switch (cache_) {
    case DataCache::cold:
      r = env::evict_from_page_cache(files_);
      p.prepared = "evicted";
      p.pages_left_resident = r.resident;
      break;
    case DataCache::warm:
      env::read_into_page_cache(files_);
      r = env::page_cache_residency(measured_);
      p.prepared = "read";
      break;
    case DataCache::as_is:
      r = env::page_cache_residency(measured_);
      p.prepared = "as-is";
      break;
  }
  p.prepare_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.resident_before = r.fraction();
}

void DataLocality::window_begins(const std::string& phase) {
  if (!url_.empty()) return;
  phases_[phase].resident_at_window = env::page_cache_residency(measured_).fraction();
}

void DataLocality::after_phase(const std::string& phase) {
  Phase& p = phases_[phase];
  if (!url_.empty()) return;
  p.resident_after = env::page_cache_residency(measured_).fraction();
  p.after_measured = true;
}

void DataLocality::phase_bytes(const std::string& phase, const PhaseBytes& bytes) {
  phases_[phase].bytes = bytes;
}

Locality DataLocality::figures(std::optional<double> host_memory_mib) const {
  const bool remote = !url_.empty();
  Locality out;
  for (const auto& [name, p] : phases_) {
    LocalityPhase& f = out.phases[name];
    f.prepared = p.prepared;
    f.prepare_s = p.prepare_s;
    if (!remote) f.resident_before = p.resident_before;
    f.resident_at_window = p.resident_at_window;
    if (p.after_measured) f.resident_after = p.resident_after;
    f.pages_left_resident = p.pages_left_resident;
    if (!p.bytes) continue;
    f.loader_bytes = p.bytes->loader_bytes;
    f.device_bytes = p.bytes->device_bytes;
    // Readahead and block rounding make the device read a little more than asked: capped at 1.
    if (!remote && f.device_bytes && p.bytes->loader_bytes > 0) {
      f.page_cache_fraction = std::clamp(
          1.0 - static_cast<double>(*f.device_bytes) / static_cast<double>(p.bytes->loader_bytes),
          0.0, 1.0);
    }
    if (remote) {
      // Every byte the loader read came over HTTP, over the span its samples' reads took.
      f.network_bytes = p.bytes->loader_bytes;
      f.read_span_s = p.bytes->read_span_s;
      if (p.bytes->read_span_s > 0) {
        f.network_mb_per_s =
            static_cast<double>(p.bytes->loader_bytes) / 1e6 / p.bytes->read_span_s;
      }
      f.read_retries = p.bytes->retries;
    }
  }
  const double dataset_mib = static_cast<double>(dataset_bytes_) / (1024.0 * 1024.0);
  out.source = remote ? "network" : "local";
  out.cache = to_string(cache_);
  out.dataset_files = files_.size();
  out.dataset_bytes = dataset_bytes_;
  out.residency_files = cache_ == DataCache::cold ? files_.size() : measured_.size();
  out.host_memory_mib = host_memory_mib;
  if (host_memory_mib) out.fits_in_ram = dataset_mib < *host_memory_mib;
  if (cache_ == DataCache::cold) {
    out.note =
        "cold: each loader phase began after posix_fadvise(POSIX_FADV_DONTNEED) on every file of "
        "the dataset; pages another process maps (or a tmpfs holds) cannot be dropped that way, "
        "pages_left_resident counts them";
  }
  if (remote) {
    out.url = url_;
    out.note = fmt::format(
        "read over HTTP from {}: nothing is kept locally, so every epoch reads it from the server "
        "again, whatever this host's memory; data.cache has nothing local to fill or empty "
        "(mmprof stage copies it to local storage)",
        url_);
  } else if (out.fits_in_ram == true) {
    out.ram_note = fmt::format(
        "the dataset ({:.0f} MiB) fits in this host's memory ({:.0f} MiB): after one epoch it is "
        "read from the page cache, whatever the storage",
        dataset_mib, *host_memory_mib);
  }
  return out;
}

}  // namespace mmprof
