// libFuzzer target: the tar-shard reader (member offsets, unsafe names, links, cut shards).
#include <cstddef>
#include <cstdint>
#include <span>

#include "data/tar_index.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const mmprof::TarScan scan = mmprof::scan_tar_memory(std::span<const uint8_t>(data, size));
  for (const auto& m : scan.members) {
    // Every member the reader accepts lies inside the bytes it read, under a safe name.
    if (m.offset > size || m.size > size - m.offset || mmprof::unsafe_member_name(m.name)) {
      __builtin_trap();
    }
  }
  return 0;
}
