// libFuzzer target: index.csv of `mmprof shard`, read from a remote dataset (any server's bytes).
// Every input is refused with an InputError naming the file and row, or reads into rows that,
// written and read again, are the same rows; and each row's members are either located or
// rejected with a reason, never dropped.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "data/shard_index.hpp"
#include "mmprof/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto rows = mmprof::parse_shard_index(text, "index.csv");
    if (mmprof::parse_shard_index(mmprof::shard_index_csv(rows), "index.csv") != rows)
      std::abort();  // what mmprof shard writes did not read back as written
    size_t members = 0, expected = 0;
    for (const auto& [shard, scan] : mmprof::shard_members(rows))
      members += scan.members.size() + scan.rejected.size();
    for (const auto& r : rows)
      expected += r.caption_offset ? 2 : 1;
    if (members != expected) std::abort();  // a row dropped without a reason
  } catch (const mmprof::InputError&) {
  }
  return 0;
}
