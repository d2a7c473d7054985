// libFuzzer target: configuration parsing. The first line is a --set override, the rest a YAML
// file; every outcome must be a resolved Config or a UsageError (exit 2), never anything else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "mmprof/config.hpp"
#include "mmprof/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  try {
    nlohmann::json tree = mmprof::parse_config_yaml(
        newline == std::string::npos ? "" : input.substr(newline + 1), "fuzz.yaml");
    mmprof::apply_override(tree, input.substr(0, newline));
    (void)mmprof::resolve_config(tree);
  } catch (const mmprof::UsageError&) {
  } catch (const mmprof::UnavailableError&) {  // a GPU step without a GPU: a valid refusal
  }
  return 0;
}
