// libFuzzer target: reading summary.json (a run directory may come from anyone: `mmprof report`
// on a colleague's run). Every input must either be refused with an InputError (a figure of the
// wrong type or out of range, named with its key) or read into a Summary whose file, written and
// read again, is the same file: what mmprof writes it reads back unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "mmprof/error.hpp"
#include "mmprof/summary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return 0;
  try {
    const nlohmann::json written = mmprof::to_json(mmprof::summary_from_json(j, "summary.json"));
    const nlohmann::json again =
        mmprof::to_json(mmprof::summary_from_json(written, "summary.json"));
    if (again != written) std::abort();  // a file mmprof wrote did not read back as written
  } catch (const mmprof::InputError&) {
  }
  return 0;
}
