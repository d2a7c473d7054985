#pragma once
// The walk of a dataset folder: every regular file under the root, with its path relative to the
// root and its size, and every entry that is not walked, with the reason. Nothing under the root
// stops the walk or goes unmentioned:
//  - a symbolic link is followed when it resolves inside the root (a file or a directory), and
//    the file keeps the link's own path as its name (the key is where the user put it, never
//    where it points); a link resolving outside the root, a broken link and a link loop (ELOOP,
//    or a directory link leading back to a directory being walked) are listed, not followed;
//  - a subdirectory that cannot be listed (permissions, I/O error) is listed by its own path and
//    the rest of the folder is walked;
//  - fifos, sockets and devices are listed.
// Only the root itself failing to list is an error (InputError naming it).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "mmprof/dataset.hpp"

namespace mmprof {

struct FoundFile {
  std::string rel;  // relative to the root, '/'-separated; a link's own path
  uint64_t size = 0;
};

struct FolderWalk {
  std::vector<FoundFile> files;      // in walk order (callers sort)
  std::vector<IgnoredFile> skipped;  // entries not walked, with the reason
};

// How the walk lists one directory: the real std::filesystem::directory_iterator, or a test's
// stand-in that fails for chosen directories. Calls `entry` per entry; returns the error that
// stopped the listing (at its start or part way), or none.
using ListDirectory = std::function<std::error_code(
    const std::filesystem::path& dir,
    const std::function<void(const std::filesystem::directory_entry&)>& entry)>;

std::error_code list_directory(
    const std::filesystem::path& dir,
    const std::function<void(const std::filesystem::directory_entry&)>& entry);

// Throws InputError naming `root` when the root itself cannot be listed.
FolderWalk walk_folder(const std::filesystem::path& root,
                       const ListDirectory& list = list_directory);

}  // namespace mmprof
