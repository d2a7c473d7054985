// What the report makes of figures it did not write: a figure of the wrong type is refused with its
// key (never read as "not measured"), a YAML document is bounded before it is walked, and the bad
// samples fact counts samples, not error events.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "config/yaml_file.hpp"
#include "mmprof/error.hpp"
#include "report/analysis.hpp"
#include "report/inputs.hpp"
#include "report/json_access.hpp"
#include "report/yaml_json.hpp"
#include "support/test_support.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

TEST(ReportFigures, AFigureOfTheWrongTypeIsAnErrorNamingItsKeyAndNullIsNotMeasured) {
  const json s = {{"a", {{"n", 2.5}, {"s", "fast"}, {"b", true}, {"z", nullptr}}}};
  EXPECT_EQ(number_at(s, "/a/n"), 2.5);
  EXPECT_EQ(number_at(s, "/a/z"), std::nullopt);
  EXPECT_EQ(number_at(s, "/a/missing"), std::nullopt);
  for (const char* pointer : {"/a/s", "/a/b", "/a"}) {
    try {
      number_at(s, pointer);
      FAIL() << pointer;
    } catch (const FigureTypeError& e) {
      EXPECT_EQ(e.pointer(), pointer);
      EXPECT_NE(std::string(e.what()).find(std::string("key ") + pointer), std::string::npos)
          << e.what();
    }
  }
}

TEST(ReportYaml, AnAliasBombIsRefusedNamingTheDocumentAndRealFilesPass) {
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 7; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k)
      bomb += ", " + prev;
    bomb += "]\n";
  }
  try {
    yaml_to_json(bomb, "--gate bomb.yaml");
    FAIL() << "10^7 nodes were walked";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--gate bomb.yaml expands to more than"),
              std::string::npos)
        << e.what();
  }
  // Aliases within the bound are followed as before.
  const json small = yaml_to_json("a: &a [1, 2]\nb: *a\n", "small.yaml");
  EXPECT_EQ(small["b"], json::array({1, 2}));
  // mmprof's own largest document loads well within it.
  EXPECT_NO_THROW(config::load_yaml_file(test::source_dir() / "configs/report/knowledge-base.yaml",
                                         "knowledge base"));
}

TEST(ReportFacts, BadSamplesAreCountedAsSamplesWithTheirEventsBeside) {
  RunData run = load_run(test::source_dir() / "tests/fixtures/report/run-input-bound");
  // One sample failed in each of three epochs, another once: 4 events over 2 samples.
  run.summary.errors.count = 4;
  run.summary.errors.samples = 2;
  const json facts = analyze_run(run)["facts"];
  const auto f =
      std::find_if(facts.begin(), facts.end(), [](const json& x) { return x["id"] == "errors"; });
  ASSERT_NE(f, facts.end()) << facts.dump(1);
  EXPECT_EQ((*f)["value"], 2);
  EXPECT_EQ((*f)["unit"], "samples");
  EXPECT_EQ((*f)["text"].get<std::string>().rfind(
                "2 bad samples were skipped (4 error events in errors.jsonl)", 0),
            0u)
      << (*f)["text"];
}

}  // namespace
}  // namespace mmprof::report
