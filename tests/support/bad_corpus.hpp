#pragma once
// The bad-input corpus of issue 8, generated from a good dataset: every kind of damage a real
// multimodal corpus holds, each under a key that says what it is, with the stage at which mmprof
// must refuse it. Files go to OUT/files (with a few good samples), tar shards to OUT/shards.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace mmprof::test {

struct BadCorpus {
  std::filesystem::path files;                    // folder layout
  std::filesystem::path shards;                   // tar layout
  std::map<std::string, std::string> files_bad;   // key -> stage ("read", "decode")
  std::map<std::string, std::string> shards_bad;  // key -> stage ("index")
  size_t files_good = 0, shards_good = 0;         // samples that must still be delivered
};

// Builds the corpus under `out` from the generated files folder `good` (which needs at least one
// .jpg, one .png and one .mp4). Deterministic.
BadCorpus make_bad_corpus(const std::filesystem::path& good, const std::filesystem::path& out);

// A copy of a baseline JPEG whose SOF0 header claims width x height (the data is unchanged).
std::vector<uint8_t> jpeg_claiming_size(std::vector<uint8_t> jpeg, uint16_t width, uint16_t height);
// A copy of a PNG whose IHDR chunk CRC is wrong.
std::vector<uint8_t> png_with_bad_crc(std::vector<uint8_t> png);

// One ustar member header (512 bytes) for hand-made tar files: typeflag '0' file, '1' hard link,
// '2' symbolic link. Written here independently of libarchive, so the reader is checked against
// the POSIX format rather than against itself.
std::vector<uint8_t> ustar_header(const std::string& name, uint64_t size, char typeflag = '0',
                                  const std::string& link = "");
// Appends a member (header + data padded to 512) to `tar`.
void append_tar_member(std::vector<uint8_t>& tar, const std::string& name,
                       const std::vector<uint8_t>& data, char typeflag = '0',
                       const std::string& link = "");
// Appends the two zero blocks that end an archive.
void end_tar(std::vector<uint8_t>& tar);

}  // namespace mmprof::test
