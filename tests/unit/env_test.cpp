// The env layer's pure parts on fixture files (a fake host root under tests/fixtures/env) and
// fabricated inputs: parsers, mount lookup, block-device resolution, network deltas, the data-mix
// sample choice and summary, the storage-probe plan and its cold/warm label.
#include <gtest/gtest.h>

#include <set>

#include "data/data_mix.hpp"
#include "env/cuda_info.hpp"
#include "env/network.hpp"
#include "env/repo_info.hpp"
#include "env/run_provenance.hpp"
#include "env/storage.hpp"
#include "env/storage_probe.hpp"
#include "env/system_info.hpp"
#include "probe/host_files.hpp"
#include "probe/proc_parse.hpp"
#include "support/test_support.hpp"

namespace mmprof::env {
namespace {

using nlohmann::json;

procfs::HostFiles fixture() {
  return procfs::HostFiles(test::source_dir() / "tests/fixtures/env");
}

TEST(EnvParse, CpuinfoModelCountsSocketsAndSimd) {
  const auto info = procfs::parse_cpuinfo(*fixture().read("/proc/cpuinfo"));
  EXPECT_EQ(info.model, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(info.logical_cpus, 4);
  EXPECT_EQ(info.sockets, 2);
  EXPECT_EQ(info.flags_note, "sse4_2 avx avx2 avx512f avx512bw amx_tile");
}

TEST(EnvParse, CpuinfoArmWithoutModelName) {
  const auto info = procfs::parse_cpuinfo("processor\t: 0\nCPU part\t: 0xd0c\n\nprocessor\t: 1\n");
  EXPECT_EQ(info.model, "ARM CPU part 0xd0c");
  EXPECT_EQ(info.logical_cpus, 2);
  EXPECT_EQ(info.sockets, 0);
}

TEST(EnvParse, Meminfo) {
  const auto text = *fixture().read("/proc/meminfo");
  const procfs::MemInfo m = procfs::parse_meminfo(text);
  EXPECT_EQ(m.mem_total_kb, 2113531904);
  EXPECT_EQ(m.mem_available_kb, 2000000000);
  EXPECT_FALSE(m.huge_pages_total.has_value());
}

TEST(EnvParse, OsReleaseQuotesAndComments) {
  const auto kv = procfs::parse_os_release(*fixture().read("/etc/os-release"));
  EXPECT_EQ(kv.at("PRETTY_NAME"), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(kv.at("VERSION_ID"), "12");
  EXPECT_EQ(kv.at("ID"), "debian");
  EXPECT_EQ(distribution(fixture()), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(distribution(procfs::HostFiles("/nonexistent-root")), json());
}

TEST(EnvParse, MountinfoFieldsAndEscapes) {
  const auto mounts = procfs::parse_mountinfo(*fixture().read("/proc/self/mountinfo"));
  ASSERT_EQ(mounts.size(), 7u);
  EXPECT_EQ(mounts[1].mount_point, "/");
  EXPECT_EQ(mounts[1].fs_type, "ext4");
  EXPECT_EQ(mounts[1].source, "/dev/nvme0n1p2");
  EXPECT_EQ(mounts[1].major, 259);
  EXPECT_EQ(mounts[1].minor, 2);
  EXPECT_EQ(mounts[4].mount_point, "/data/my set");
}

TEST(EnvParse, FindMountLongestComponentPrefix) {
  const auto mounts = procfs::parse_mountinfo(*fixture().read("/proc/self/mountinfo"));
  EXPECT_EQ(procfs::find_mount(mounts, "/home/u/data")->mount_point, "/");
  EXPECT_EQ(procfs::find_mount(mounts, "/data")->fs_type, "xfs");
  EXPECT_EQ(procfs::find_mount(mounts, "/data/x/y.tar")->fs_type, "xfs");
  EXPECT_EQ(procfs::find_mount(mounts, "/data2/x")->fs_type, "nfs4");  // not under /data
  EXPECT_EQ(procfs::find_mount(mounts, "/data/my set/a")->fs_type, "tmpfs");
  // Two mounts on one point: the later (stacked on top) wins.
  EXPECT_EQ(procfs::find_mount(mounts, "/mnt/over/f")->fs_type, "tmpfs");
  EXPECT_EQ(procfs::find_mount({}, "/x"), nullptr);
}

TEST(EnvParse, NetDev) {
  const auto c = procfs::parse_net_dev(*fixture().read("/proc/net/dev"));
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c.at("eth0").rx_bytes, 9876543210u);
  EXPECT_EQ(c.at("eth0").rx_packets, 5000000u);
  EXPECT_EQ(c.at("eth0").tx_bytes, 1234567890u);
  EXPECT_EQ(c.at("eth0").tx_packets, 2000000u);
  EXPECT_EQ(c.at("lo").tx_bytes, 123456u);
}

TEST(EnvStorage, PartitionResolvesToItsDisk) {
  const json s = storage_info(fixture(), "/home/u/data");
  EXPECT_EQ(s["mount_point"], "/");
  EXPECT_EQ(s["fs_type"], "ext4");
  EXPECT_EQ(s["block_device"], "nvme0n1p2");
  EXPECT_EQ(s["partition"], true);
  EXPECT_EQ(s["disk"], "nvme0n1");
  EXPECT_EQ(s["rotational"], false);
  EXPECT_EQ(s["model"], "Samsung SSD 980 PRO 1TB");
}

TEST(EnvStorage, WholeDiskRotationalWithoutModel) {
  const json s = storage_info(fixture(), "/data/shards/a.tar");
  EXPECT_EQ(s["block_device"], "sda");
  EXPECT_EQ(s["disk"], "sda");
  EXPECT_EQ(s["partition"], false);
  EXPECT_EQ(s["rotational"], true);
  EXPECT_TRUE(s["model"].is_null());
  EXPECT_TRUE(s.contains("model_reason"));
}

TEST(EnvStorage, NetworkFilesystemHasNoBlockDevice) {
  const json s = storage_info(fixture(), "/data2/x");
  EXPECT_EQ(s["fs_type"], "nfs4");
  EXPECT_EQ(s["source"], "server:/export");
  EXPECT_TRUE(s["block_device"].is_null());
  EXPECT_TRUE(s["rotational"].is_null());
  EXPECT_NE(s["device_reason"].get<std::string>().find("nfs4"), std::string::npos);
}

TEST(EnvNetwork, InterfacesFromSysfs) {
  const json i = network_interfaces(fixture());
  ASSERT_EQ(i.size(), 3u);
  EXPECT_EQ(i[0]["name"], "eth0");
  EXPECT_EQ(i[0]["operstate"], "up");
  EXPECT_EQ(i[0]["speed_mbps"], 25000);
  EXPECT_EQ(i[0]["mtu"], 9000);
  EXPECT_EQ(i[1]["name"], "eth1");
  EXPECT_TRUE(i[1]["speed_mbps"].is_null());  // -1: link down
  EXPECT_EQ(i[2]["name"], "lo");
  EXPECT_TRUE(i[2]["speed_mbps"].is_null());  // no speed file
  EXPECT_EQ(i[2]["mtu"], 65536);
}

TEST(EnvNetwork, DeltaExcludesLoopbackAndBackwardsCounters) {
  NetworkSnapshot a = network_counters(fixture());
  ASSERT_TRUE(a.valid);
  NetworkSnapshot b = a;
  b.t_ns = a.t_ns + 2'000'000'000;
  b.interfaces["eth0"].rx_bytes += 1000;
  b.interfaces["eth0"].tx_bytes += 10;
  b.interfaces["lo"].rx_bytes += 5000;
  b.interfaces["eth1"].rx_bytes = 0;
  b.interfaces["ib0"] = {300, 1, 7, 1};  // appeared during the run
  const json d = network_delta(a, b);
  EXPECT_EQ(d["rx_bytes"], 1300);
  EXPECT_EQ(d["tx_bytes"], 17);
  EXPECT_DOUBLE_EQ(d["window_s"].get<double>(), 2.0);
  EXPECT_EQ(d["interfaces"]["lo"]["rx_bytes"], 5000);
  b.interfaces["eth0"].rx_bytes = 0;  // re-created interface: counted as 0, not wrapped
  EXPECT_EQ(network_delta(a, b)["interfaces"]["eth0"]["rx_bytes"], 0);
  EXPECT_TRUE(network_delta(NetworkSnapshot{}, b)["rx_bytes"].is_null());
}

TEST(EnvHardware, ProcfsPartFromFixtures) {
  const json h = procfs_hardware(fixture());
  EXPECT_EQ(h["cpu"]["model"], "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(h["cpu"]["logical_cpus"], 4);
  EXPECT_EQ(h["memory"]["total_mib"], 2113531904ull / 1024);
}

TEST(EnvHardware, GpuPciLinkFromSysfs) {
  const json p = pci_link(fixture(), "0000:17:00.0");
  EXPECT_EQ(p["link_speed"], "16.0 GT/s PCIe");
  EXPECT_EQ(p["link_width"], 16);
  EXPECT_EQ(p["max_link_speed"], "32.0 GT/s PCIe");
  EXPECT_EQ(p["numa_node"], 1);
  EXPECT_TRUE(pci_link(fixture(), "0000:99:00.0")["link_speed"].is_null());
}

TEST(EnvProvenance, LoaderEnvironmentFilter) {
  EXPECT_TRUE(affects_loader("OMP_NUM_THREADS"));
  EXPECT_TRUE(affects_loader("MALLOC_ARENA_MAX"));
  EXPECT_TRUE(affects_loader("PYTORCH_CUDA_ALLOC_CONF"));
  EXPECT_TRUE(affects_loader("MMPROF_TORCH_PLUGIN"));
  EXPECT_TRUE(affects_loader("LOCAL_RANK"));
  EXPECT_FALSE(affects_loader("HOME"));
  EXPECT_FALSE(affects_loader("RANKING"));
  std::string a = "OMP_NUM_THREADS=4", b = "HOME=/root", c = "LD_PRELOAD=/x/libjemalloc.so",
              d = "TMPDIR=";
  char* envp[] = {a.data(), b.data(), c.data(), d.data(), nullptr};
  const json e = loader_environment(envp);
  EXPECT_EQ(e,
            json({{"OMP_NUM_THREADS", "4"}, {"LD_PRELOAD", "/x/libjemalloc.so"}, {"TMPDIR", ""}}));
}

TEST(EnvRepo, ParseGitLog) {
  const json log = parse_git_log(
      "abc\x1f"
      "2024-05-01T10:00:00+02:00\x1f"
      "Fix: a|b, \"c\"\n"
      "def\x1f"
      "2024-04-30T09:00:00+00:00\x1f\n"
      "garbage line\n");
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["hash"], "abc");
  EXPECT_EQ(log[0]["date"], "2024-05-01T10:00:00+02:00");
  EXPECT_EQ(log[0]["subject"], "Fix: a|b, \"c\"");
  EXPECT_EQ(log[1]["subject"], "");
}

TEST(EnvDataMix, ChoiceIsAllOrASeededDistinctSample) {
  EXPECT_EQ(choose_mix_samples(5, 10, 1), (std::vector<size_t>{0, 1, 2, 3, 4}));
  const auto a = choose_mix_samples(10000, 2000, 7);
  ASSERT_EQ(a.size(), 2000u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::set<size_t>(a.begin(), a.end()).size(), 2000u);
  EXPECT_LT(a.back(), 10000u);
  EXPECT_EQ(a, choose_mix_samples(10000, 2000, 7));
  EXPECT_NE(a, choose_mix_samples(10000, 2000, 8));
  // Uniform: about a fifth of the sample falls in each fifth of the index.
  const auto in_first_fifth = std::count_if(a.begin(), a.end(), [](size_t i) { return i < 2000; });
  EXPECT_NEAR(static_cast<double>(in_first_fifth), 400, 80);
}

TEST(EnvDataMix, WordsAndSummary) {
  EXPECT_EQ(count_words(""), 0u);
  EXPECT_EQ(count_words("  a  photo\tof\na cat "), 5u);
  std::vector<MixRecord> rs(4);
  rs[0] = {"a", Modality::image, true, "", 640, 480, "jpeg", "", 0, 0, 0, true, 10, 2};
  rs[1] = {"b", Modality::image, true, "", 1920, 1080, "png", "", 0, 0, 0, true, 30, 6};
  rs[2] = {"c", Modality::video, true, "", 1280, 720, "h264", "yuv420p", 2.0, 30, 60, false, 0, 0};
  rs[3] = {"d", Modality::image, false, "not a JPEG", 0, 0, "", "", 0, 0, 0, false, 0, 0};
  const json m = summarize_mix(rs);
  EXPECT_EQ(m["images"]["probed"], 2);
  EXPECT_EQ(m["images"]["formats"], json({{"jpeg", 1}, {"png", 1}}));
  EXPECT_EQ(m["images"]["resolutions"], json({{"1920x1080", 1}, {"640x480", 1}}));
  // 0.3072 MP -> [0.25, 0.5); 2.0736 MP -> [2, inf)
  EXPECT_EQ(m["images"]["megapixels_histogram"][2]["count"], 1);
  EXPECT_EQ(m["images"]["megapixels_histogram"][5]["count"], 1);
  EXPECT_EQ(m["videos"]["codecs"], json({{"h264", 1}}));
  EXPECT_EQ(m["videos"]["fps_counts"], json({{"30", 1}}));
  EXPECT_EQ(m["videos"]["frames"]["max"], 60.0);
  EXPECT_EQ(m["captions"]["bytes"]["min"], 10.0);
  EXPECT_EQ(m["captions"]["bytes"]["p50"], 20.0);
  EXPECT_EQ(m["captions"]["words"]["max"], 6.0);
  EXPECT_EQ(m["errors"]["count"], 1);
  EXPECT_EQ(m["errors"]["first"][0]["key"], "d");
}

TEST(EnvStorageProbe, PlanIsBoundedAlignedAndProportional) {
  StorageProbeLimits l;
  l.sequential_bytes = 3 << 20;
  l.block_bytes = 1 << 20;
  l.random_ops = 10000;
  const std::vector<ProbeFile> files = {{"a", 2500000}, {"b", 100}, {"c", 7500000}};
  const auto plan = plan_storage_probe(files, l);
  uint64_t seq = 0;
  for (const auto& op : plan.sequential)
    seq += op.bytes;
  EXPECT_EQ(seq, 3u << 20);
  EXPECT_EQ(plan.sequential[0].file, 0u);
  EXPECT_EQ(plan.sequential[2].bytes, 2500000u - (2u << 20));  // the tail of file a
  EXPECT_EQ(plan.sequential.back().file, 2u);
  // 610 + 0 + 1831 whole blocks: all of them, once each, in random order.
  ASSERT_EQ(plan.random.size(), 610u + 1831u);
  std::set<std::pair<size_t, uint64_t>> blocks;
  int in_c = 0;
  for (const auto& op : plan.random) {
    EXPECT_EQ(op.offset % kRandomReadBytes, 0u);
    EXPECT_LE(op.offset + op.bytes, files[op.file].size);
    EXPECT_NE(op.file, 1u);  // smaller than one block
    in_c += op.file == 2;
    blocks.insert({op.file, op.offset});
  }
  EXPECT_EQ(blocks.size(), plan.random.size());  // no block twice: a repeat is a cache hit
  EXPECT_EQ(in_c, 1831);
  l.random_ops = 500;  // fewer ops than blocks: spread in proportion to size
  const auto few = plan_storage_probe(files, l).random;
  ASSERT_EQ(few.size(), 500u);
  const auto few_c =
      std::count_if(few.begin(), few.end(), [](const ReadOp& o) { return o.file == 2; });
  EXPECT_NEAR(static_cast<double>(few_c) / 500.0, 0.75, 0.06);
  EXPECT_TRUE(plan_storage_probe({{"tiny", 10}}, l).random.empty());
}

TEST(EnvStorageProbe, SummaryRatesAndColdLabel) {
  PatternResult seq{256, 256u << 20, 2.0, 0.01, false};
  PatternResult rnd{5000, 5000u * 4096, 0.5, 0.6, true};
  const json s = storage_probe_summary(seq, rnd, "fadvise", "note", 3);
  EXPECT_DOUBLE_EQ(s["sequential"]["mb_per_s"].get<double>(), (256.0 * 1048576) / 1e6 / 2.0);
  EXPECT_EQ(s["sequential"]["cache"], "cold");
  EXPECT_DOUBLE_EQ(s["random_4k"]["iops"].get<double>(), 10000.0);
  EXPECT_EQ(s["random_4k"]["cache"], "warm");
  EXPECT_EQ(s["random_4k"]["stopped_by"], "time limit");
  EXPECT_TRUE(storage_probe_summary({}, {}, "none", "", 0)["sequential"]["mb_per_s"].is_null());
  EXPECT_FALSE(s.contains("random_4k_qd"));  // queue depth 1: the pass is not run
  PatternResult qd{5000, 5000u * 4096, 0.1, 0.0, false};
  const json q = storage_probe_summary(seq, rnd, "fadvise", "note", 3, &qd, 16);
  EXPECT_DOUBLE_EQ(q["random_4k_qd"]["iops"].get<double>(), 50000.0);
  EXPECT_EQ(q["random_4k_qd"]["queue_depth"], 16);
  EXPECT_EQ(q["random_4k_qd"]["cache"], "cold");
}

}  // namespace
}  // namespace mmprof::env
