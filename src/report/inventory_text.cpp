#include "report/inventory_text.hpp"

#include <fmt/format.h>

namespace mmprof::report {
namespace {

using nlohmann::json;

// A JSON value as table text: strings bare, null as "n/a".
std::string text(const json& v) {
  if (v.is_null()) return "n/a";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return v.dump();
}

std::string row(const std::string& name, const std::string& value) {
  return fmt::format("  {:<14} {}\n", name, value);
}

std::string counts(const json& m) {
  std::string out;
  for (const auto& [k, v] : m.items()) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", k, text(v));
  }
  return out.empty() ? "none" : out;
}

std::string spread(const json& d, const char* unit = "") {
  if (!d.is_object() || d.value("count", 0) == 0) return "none";
  return fmt::format("min {}{u}  p50 {}{u}  p90 {}{u}  max {}{u}  (n={})", text(d["min"]),
                     text(d["p50"]), text(d["p90"]), text(d["max"]), text(d["count"]),
                     fmt::arg("u", unit));
}

std::string version_of(const json& v) {
  if (!v.is_object()) return text(v);
  std::string out = text(v.value("version", json()));
  if (v.contains("reason")) out += " (" + text(v["reason"]) + ")";
  return out;
}

std::string provenance_section(const json& inv) {
  const json& run = inv["run"];
  const json& m = run["mmprof"];
  std::string out = fmt::format("mmprof {} (commit {}{})  host {}\n", text(m["version"]),
                                text(m["commit"]).substr(0, 12),
                                m["dirty"] == true ? ", dirty" : "", text(run["hostname"]));
  const json& r = inv["repo"];
  out += "repository\n";
  if (r["git"] != true) {
    out += row("path", text(r["path"]) + " (not git: " + text(r["reason"]) + ")");
  } else {
    out += row("path", text(r["toplevel"]));
    out += row("head", fmt::format("{} on {}{}", text(r["head"]).substr(0, 12),
                                   r["branch"].is_null() ? "detached HEAD" : text(r["branch"]),
                                   r["dirty"] == true
                                       ? fmt::format(", dirty ({} files)", text(r["dirty_files"]))
                                       : ", clean"));
    if (!r["log"].empty()) {
      const json& c = r["log"][0];
      out += row("last commit", text(c["date"]) + "  " + text(c["subject"]));
    }
  }
  out += "environment\n";
  if (run["environment"].empty()) out += row("(none set)", "");
  for (const auto& [k, v] : run["environment"].items())
    out += row(k, text(v));
  return out;
}

std::string joined(const json& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : " ") + text(n);
  return out.empty() ? "none" : out;
}

// docs/gpu.md: what decode on the GPU would find here (absent in inventories before it).
std::string gpu_decode_rows(const json& d) {
  if (!d.is_object()) return "";
  std::string out;
  const json& nvml = d["nvml"];
  if (nvml.is_object()) {
    out += row("nvml", fmt::format("driver {}, NVML {} ({})", text(nvml["driver_version"]),
                                   text(nvml["nvml_version"]), text(nvml["library"])));
  } else {
    out += row("nvml", text(d["nvml_reason"]));
  }
  const json& f = d["ffmpeg"];
  out += row("ffmpeg cuvid", joined(f["cuvid_decoders"]));
  out += row("ffmpeg nvdec", joined(f["nvdec_hwaccel_codecs"]) +
                                 (f["cuda_hwdevice"] == true ? "" : " (no CUDA device type)"));
  for (const char* lib : {"libcuda", "libnvcuvid"}) {
    out += row(lib, f.value(lib, json()).is_null()
                        ? "not loadable: " + text(f.value(std::string(lib) + "_reason", json()))
                        : text(f[lib]));
  }
  out += row("nvjpeg",
             d["nvjpeg"].is_object() ? text(d["nvjpeg"]["version"]) : text(d["nvjpeg_reason"]));
  return out;
}

std::string software_section(const json& s) {
  std::string out = "software\n";
  out += row("compiler", text(s["compiler"]["name"]) + " " + text(s["compiler"]["version"]));
  out += row("libc", text(s["libc"]["name"]) + " " + text(s["libc"]["version"]));
  out += row("kernel", s["kernel"].is_null() ? "n/a" : text(s["kernel"]["release"]));
  out += row("distribution", text(s["distribution"]));
  out +=
      row("ffmpeg", fmt::format("{} (libavcodec {}, libavformat {})", text(s["ffmpeg"]["version"]),
                                text(s["ffmpeg"]["libavcodec"]), text(s["ffmpeg"]["libavformat"])));
  out += row("libjpeg-turbo", version_of(s["libjpeg_turbo"]));
  out += row("libarchive", version_of(s["libarchive"]));
  const json& c = s["cuda"];
  out += row("cuda runtime",
             text(c["runtime"]) +
                 (c.contains("runtime_reason") ? " (" + text(c["runtime_reason"]) + ")" : ""));
  out += row("cuda driver",
             text(c["driver"]) +
                 (c.contains("driver_reason") ? " (" + text(c["driver_reason"]) + ")" : ""));
  out += row("cupti", text(s["cupti"]["api_version"]));
  const json& t = s["libtorch"];
  out += row("libtorch", version_of(t) + ", plugin " +
                             (t["plugin"].is_null() ? "not found" : text(t["plugin"])));
  out += row("hwloc", text(s["hwloc"]));
  out += gpu_decode_rows(s["gpu_decode"]);
  return out;
}

std::string hardware_section(const json& h) {
  std::string out = "hardware\n";
  const json& cpu = h["cpu"];
  out += row("cpu", text(cpu["model"]));
  out += row("topology", fmt::format("{} sockets, {} cores, {} threads, {} NUMA nodes",
                                     text(cpu["sockets"]), text(cpu["cores"]), text(cpu["threads"]),
                                     h["numa_nodes"].is_array() ? h["numa_nodes"].size() : 0));
  std::string caches;
  if (h["caches"].is_array()) {
    for (const auto& c : h["caches"]) {
      caches += fmt::format("{}{} {} KiB x{}", caches.empty() ? "" : ", ", text(c["level"]),
                            text(c["size_kb"]), text(c["count"]));
    }
  }
  out += row("caches", caches.empty() ? "n/a" : caches);
  out += row("memory", text(h["memory"]["total_mib"]) + " MiB");
  if (h["gpus"].empty()) {
    out += row("gpus", "none: " + text(h["gpu_unavailable_reason"]));
  }
  for (const auto& g : h["gpus"]) {
    out += row(fmt::format("gpu {}", text(g["index"])),
               fmt::format("{}, {} MiB, PCIe {} x{}, NUMA node {}, NVDEC x{}, NVJPG x{}",
                           text(g["name"]), text(g["memory_mib"]), text(g["pcie"]["link_speed"]),
                           text(g["pcie"]["link_width"]), text(g["numa_node"]),
                           text(g.value("nvdec_engines", json())),
                           text(g.value("nvjpg_engines", json()))));
  }
  return out;
}

std::string storage_section(const json& s) {
  std::string out = "storage (" + text(s.value("of", json())) + ")\n";
  out += row("path", text(s["path"]));
  out += row("mount", fmt::format("{} ({}, source {})", text(s["mount_point"]), text(s["fs_type"]),
                                  text(s["source"])));
  std::string device = text(s["block_device"]);
  if (!s["disk"].is_null() && s["disk"] != s["block_device"]) device += " on " + text(s["disk"]);
  if (!s["rotational"].is_null())
    device += s["rotational"] == true ? ", rotational" : ", solid state";
  if (!s["model"].is_null()) device += ", model " + text(s["model"]);
  if (s.contains("device_reason")) device += " (" + text(s["device_reason"]) + ")";
  out += row("device", device);
  if (s.contains("probe")) {
    const json& p = s["probe"];
    out += row("sequential",
               fmt::format("{} MB/s ({}, {} MB in {} s)", text(p["sequential"]["mb_per_s"]),
                           text(p["sequential"]["cache"]),
                           text(json(p["sequential"]["bytes"].get<double>() / 1e6)),
                           text(p["sequential"]["seconds"])));
    out += row("random 4 KiB",
               fmt::format("{} IOPS, {} MB/s ({})", text(p["random_4k"]["iops"]),
                           text(p["random_4k"]["mb_per_s"]), text(p["random_4k"]["cache"])));
    if (p.contains("random_4k_qd")) {
      const json& q = p["random_4k_qd"];
      out += row(fmt::format("random 4 KiB, QD {}", text(q["queue_depth"])),
                 fmt::format("{} IOPS, {} MB/s ({})", text(q["iops"]), text(q["mb_per_s"]),
                             text(q["cache"])));
    }
    out += row("caches", text(p["cache_method"]));
  }
  return out;
}

std::string network_section(const json& n) {
  std::string out = "network\n";
  for (const auto& i : n["interfaces"]) {
    out += row(text(i["name"]), fmt::format("{}, speed {} Mb/s, mtu {}", text(i["operstate"]),
                                            text(i["speed_mbps"]), text(i["mtu"])));
  }
  return out;
}

std::string data_section(const json& inv) {
  const json& d = inv["data_mix"];
  if (d.is_null()) return "data mix\n" + row("", text(inv.value("data_mix_reason", json())));
  std::string out = "data mix (" + text(d["path"]) + ", " + text(d["layout"]) + ")\n";
  const json& c = d["counts"];
  out += row("samples", fmt::format("{} ({} images, {} videos, {} captions)", text(c["samples"]),
                                    text(c["images"]), text(c["videos"]), text(c["captions"])));
  out += row("bytes", fmt::format("{:.1f} MB total", d["bytes"]["total"].get<double>() / 1e6));
  const json& s = d["sampling"];
  out += row("probed",
             fmt::format("{} of {} ({}{})", text(s["probed"]), text(s["of"]), text(s["method"]),
                         s["seed"].is_null() ? "" : ", seed " + text(s["seed"])));
  const json& im = d["images"];
  out += row("image formats", counts(im["formats"]));
  out += row("image width", spread(im["width"], " px"));
  out += row("image height", spread(im["height"], " px"));
  std::string hist;
  for (const auto& b : im["megapixels_histogram"]) {
    hist += fmt::format("{}{}-{} MP: {}", hist.empty() ? "" : ", ", text(b["min_megapixels"]),
                        b["max_megapixels"].is_null() ? "" : text(b["max_megapixels"]),
                        text(b["count"]));
  }
  out += row("image MP hist", hist);
  const json& v = d["videos"];
  out += row("video codecs", counts(v["codecs"]));
  out += row("video duration", spread(v["duration_s"], " s"));
  out += row("video frames", spread(v["frames"]));
  out += row("video fps", counts(v["fps_counts"]));
  out += row("video res", counts(v["resolutions"]));
  out += row("caption bytes", spread(d["captions"]["bytes"]));
  out += row("caption words", spread(d["captions"]["words"]));
  if (d["errors"]["count"] != 0) {
    out += row("probe errors", fmt::format("{} (first: {})", text(d["errors"]["count"]),
                                           text(d["errors"]["first"][0]["message"])));
  }
  return out;
}

}  // namespace

std::string format_inventory(const json& inv) {
  std::string out = provenance_section(inv);
  out += software_section(inv["software"]);
  out += hardware_section(inv["hardware"]);
  out += storage_section(inv["storage"]);
  out += network_section(inv["network"]);
  out += data_section(inv);
  return out;
}

}  // namespace mmprof::report
