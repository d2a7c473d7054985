#include "env/network.hpp"

#include <time.h>

namespace mmprof::env {
namespace {

using nlohmann::json;

json positive_int(const std::optional<std::string>& s) {
  if (!s || s->empty()) return nullptr;
  try {
    const long v = std::stol(*s);
    return v > 0 ? json(v) : json();
  } catch (const std::exception&) {
    return nullptr;
  }
}

uint64_t grew(uint64_t before, uint64_t after) {
  return after >= before ? after - before : 0;
}

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

json network_interfaces(const procfs::HostFiles& host) {
  json out = json::array();
  for (const auto& name : host.list("/sys/class/net")) {
    const std::string dir = "/sys/class/net/" + name;
    const auto state = host.read_line(dir + "/operstate");
    out.push_back({{"name", name},
                   {"operstate", state ? json(*state) : json()},
                   {"speed_mbps", positive_int(host.read_line(dir + "/speed"))},
                   {"mtu", positive_int(host.read_line(dir + "/mtu"))}});
  }
  return out;
}

NetworkSnapshot network_counters(const procfs::HostFiles& host) {
  NetworkSnapshot s;
  s.t_ns = now_ns();
  if (const auto text = host.read("/proc/net/dev")) {
    s.interfaces = procfs::parse_net_dev(*text);
    s.valid = true;
  }
  return s;
}

json network_delta(const NetworkSnapshot& before, const NetworkSnapshot& after) {
  if (!before.valid || !after.valid) {
    return {{"rx_bytes", nullptr}, {"tx_bytes", nullptr}, {"reason", "/proc/net/dev unreadable"}};
  }
  json per = json::object();
  uint64_t rx = 0, tx = 0;
  for (const auto& [name, a] : after.interfaces) {
    const auto it = before.interfaces.find(name);
    const procfs::NetCounters b =
        it == before.interfaces.end() ? procfs::NetCounters{} : it->second;
    const uint64_t drx = grew(b.rx_bytes, a.rx_bytes), dtx = grew(b.tx_bytes, a.tx_bytes);
    per[name] = {{"rx_bytes", drx}, {"tx_bytes", dtx}};
    if (name != "lo") rx += drx, tx += dtx;
  }
  return {{"rx_bytes", rx},
          {"tx_bytes", tx},
          {"window_s", static_cast<double>(after.t_ns - before.t_ns) / 1e9},
          {"excludes", "lo"},
          {"interfaces", per}};
}

}  // namespace mmprof::env
