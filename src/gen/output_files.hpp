#pragma once
// The generator's file-system edge: directories, plain writes, stale-output cleanup (atomic
// writes are util/files.hpp's).
// Every failure throws InputError naming the path.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mmprof::gen {

// Creates `dir` (and parents) and checks it is writable.
void make_writable_dir(const std::filesystem::path& dir);
void write_file(const std::filesystem::path& path, const void* data, size_t size);
// Removes files in `dir` that a previous generation left (names that match `is_ours`), so a
// smaller re-generation does not leave extra samples or shards behind.
void remove_stale(const std::filesystem::path& dir, bool (*is_ours)(const std::string& name));

bool is_sample_file_name(const std::string& name);  // 000042.jpg, 000042.txt, ...
bool is_shard_file_name(const std::string& name);   // shard-000003.tar

}  // namespace mmprof::gen
