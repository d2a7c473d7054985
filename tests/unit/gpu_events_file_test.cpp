// The GPU events file: round trip, and one clear FILE:LINE error per kind of bad line.
#include "gpu/gpu_events_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "mmprof/error.hpp"
#include "support/test_support.hpp"

namespace mmprof::gpu {
namespace {

GpuEventsFile sample() {
  GpuEventsFile f;
  f.header = {4242, "timestamp_callback", 0, 3, 1, "/opt/cuda/lib64/libcupti.so.13"};
  GpuEvent k;
  k.kind = GpuEventKind::kernel;
  k.start_ns = 1000;
  k.end_ns = 6000;
  k.device = 1;
  k.stream = 7;
  k.correlation = 99;
  k.name = "void gemm<float>(int)";
  GpuEvent c;
  c.kind = GpuEventKind::memcpy;
  c.copy = CopyKind::h2d;
  c.pinned_host = true;
  c.start_ns = 500;
  c.end_ns = 900;
  c.bytes = 1 << 20;
  c.name = "memcpy HtoD";
  f.events = {k, c};
  return f;
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

std::string read_error(const std::filesystem::path& p) {
  try {
    read_gpu_events(p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(GpuEventsFileTest, RoundTripKeepsEveryField) {
  test::TempDir dir;
  const auto path = dir.path() / "events.jsonl";
  write_gpu_events(path, sample());
  EXPECT_TRUE(is_gpu_events_file(path));
  const GpuEventsFile back = read_gpu_events(path);
  EXPECT_EQ(back.header.pid, 4242);
  EXPECT_EQ(back.header.clock_method, "timestamp_callback");
  EXPECT_EQ(back.header.dropped, 3u);
  EXPECT_EQ(back.header.incomplete, 1u);
  EXPECT_EQ(back.header.cupti_library, "/opt/cuda/lib64/libcupti.so.13");
  ASSERT_EQ(back.events.size(), 2u);
  const GpuEvent& k = back.events[0];
  EXPECT_EQ(k.kind, GpuEventKind::kernel);
  EXPECT_EQ(k.copy, CopyKind::none);
  EXPECT_EQ(k.start_ns, 1000);
  EXPECT_EQ(k.end_ns, 6000);
  EXPECT_EQ(k.device, 1u);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.correlation, 99u);
  EXPECT_EQ(k.name, "void gemm<float>(int)");
  const GpuEvent& c = back.events[1];
  EXPECT_EQ(c.kind, GpuEventKind::memcpy);
  EXPECT_EQ(c.copy, CopyKind::h2d);
  EXPECT_TRUE(c.pinned_host);
  EXPECT_EQ(c.bytes, 1u << 20);
}

TEST(GpuEventsFileTest, FormatIsOneHeaderLineAndOneLinePerEvent) {
  const std::string text = format_gpu_events(sample());
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  EXPECT_EQ(text.rfind("{\"", 0), 0u);
  EXPECT_NE(text.find("\"schema\":\"mmprof.gpu_events/1\""), std::string::npos);
  EXPECT_NE(text.find("\"clock\":\"CLOCK_MONOTONIC\""), std::string::npos);
}

TEST(GpuEventsFileTest, InvalidUtf8InANameIsReplacedNotFatal) {
  GpuEventsFile f = sample();
  f.events[0].name = "k\xff";
  test::TempDir dir;
  write_gpu_events(dir.path() / "e.jsonl", f);
  EXPECT_EQ(read_gpu_events(dir.path() / "e.jsonl").events[0].name, "k\xEF\xBF\xBD");
}

TEST(GpuEventsFileTest, BadLinesNameTheFileAndLine) {
  test::TempDir dir;
  const auto path = dir.path() / "e.jsonl";
  const std::string text = format_gpu_events(sample());
  const std::string header = text.substr(0, text.find('\n') + 1);
  const std::string event1 =
      text.substr(header.size(), text.find('\n', header.size()) + 1 - header.size());
  const std::string p = path.string();

  write_text(path, header + event1 + "{not json\n");
  EXPECT_NE(read_error(path).find(p + ":3: not valid JSON"), std::string::npos) << read_error(path);

  std::string bad = event1;
  bad.replace(bad.find("\"kernel\""), 8, "\"kern\"");
  write_text(path, header + bad + event1);
  EXPECT_NE(read_error(path).find(p + ":2: unknown kind \"kern\""), std::string::npos);

  bad = event1;
  bad.replace(bad.find("\"end_ns\":6000"), 13, "\"end_ns\":10");
  write_text(path, header + bad + event1);
  EXPECT_NE(read_error(path).find(p + ":2: end_ns 10 is before start_ns 1000"), std::string::npos);

  bad = event1;
  bad.replace(bad.find("\"stream\":7"), 10, "\"stream\":\"7\"");
  write_text(path, header + event1 + bad);
  EXPECT_NE(read_error(path).find(p + ":3: key \"stream\" has the wrong type"), std::string::npos);

  write_text(path, header + event1);
  EXPECT_NE(read_error(path).find("header promises 2 events but the file holds 1"),
            std::string::npos);

  std::string other = header;
  other.replace(other.find("gpu_events/1"), 12, "gpu_events/9");
  write_text(path, other);
  EXPECT_FALSE(is_gpu_events_file(path));
  EXPECT_NE(read_error(path).find(p + ":1: schema \"mmprof.gpu_events/9\""), std::string::npos);

  write_text(path, "");
  EXPECT_NE(read_error(path).find("empty GPU events file"), std::string::npos);
  EXPECT_NE(read_error(dir.path() / "missing").find("cannot open GPU events file"),
            std::string::npos);
}

}  // namespace
}  // namespace mmprof::gpu
