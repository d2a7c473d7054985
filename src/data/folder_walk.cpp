#include "data/folder_walk.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include "util/error.hpp"

namespace mmprof {
namespace fs = std::filesystem;

namespace {

// Deeper than this (only reachable through links into other directories of the root) is not
// walked: a guard against link structures that multiply paths without ever looping.
constexpr int kMaxDepth = 64;

bool inside(const fs::path& path, const fs::path& root) {
  auto [r, p] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return r == root.end();
}

std::string joined(const std::string& dir, const fs::path& name) {
  return dir.empty() ? name.string() : dir + "/" + name.string();
}

class Walker {
 public:
  Walker(const fs::path& root, const ListDirectory& list) : list_(list) {
    std::error_code ec;
    root_ = fs::canonical(root, ec);
    if (ec) root_ = fs::absolute(root).lexically_normal();
  }

  FolderWalk walk(const fs::path& root) {
    stack_.push_back(root_);
    if (const std::error_code ec = list_(root, [&](const auto& e) { visit(e, "", 1); })) {
      throw InputError(fmt::format("cannot list dataset {}: {}", root.string(), ec.message()));
    }
    return std::move(out_);
  }

 private:
  void skip(std::string rel, std::string reason) {
    out_.skipped.push_back({std::move(rel), std::move(reason)});
  }

  // Walks directory `dir` (canonical path `real`), named `rel` under the root.
  void descend(const fs::path& dir, const fs::path& real, const std::string& rel, int depth) {
    if (depth > kMaxDepth) {
      skip(rel + "/", fmt::format("directory nested deeper than {} levels (through symbolic "
                                  "links), not walked",
                                  kMaxDepth));
      return;
    }
    stack_.push_back(real);
    const std::error_code ec = list_(dir, [&](const auto& e) { visit(e, rel, depth + 1); });
    stack_.pop_back();
    if (ec) {
      skip(rel + "/", fmt::format("directory cannot be read ({}): none of its files are in the "
                                  "dataset, the rest of the folder is",
                                  ec.message()));
    }
  }

  void visit(const fs::directory_entry& e, const std::string& dir_rel, int depth) {
    const std::string rel = joined(dir_rel, e.path().filename());
    std::error_code ec;
    const fs::file_status st = e.symlink_status(ec);
    if (ec) {
      skip(rel, fmt::format("cannot be examined: {}", ec.message()));
    } else if (fs::is_symlink(st)) {
      follow(e.path(), rel, depth);
    } else if (fs::is_directory(st)) {
      descend(e.path(), stack_.back() / e.path().filename(), rel, depth);
    } else if (fs::is_regular_file(st)) {
      const uint64_t size = e.file_size(ec);
      if (ec) {
        skip(rel, fmt::format("cannot be examined: {}", ec.message()));
      } else {
        out_.files.push_back({rel, size});
      }
    } else {
      skip(rel, "not a regular file (a fifo, a socket or a device)");
    }
  }

  // A symbolic link. A link to a file is followed wherever it points (a folder of links into a
  // shared store is a common dataset layout; torchvision's ImageFolder reads through them too)
  // and keyed by the link's own path. A link to a directory is walked only inside the root: a
  // walk into an arbitrary outside tree (a link to /) is unbounded. The rest is listed.
  void follow(const fs::path& link, const std::string& rel, int depth) {
    std::error_code ec;
    const fs::path text = fs::read_symlink(link, ec);
    const std::string shown = ec ? std::string("?") : text.string();
    const fs::path target = fs::canonical(link, ec);
    if (ec) {
      const bool loop = ec == std::errc::too_many_symbolic_link_levels;
      skip(rel,
           loop ? fmt::format("symbolic link loop ('{}': {}), not followed", shown, ec.message())
                : fmt::format("broken symbolic link to '{}' ({}), not followed", shown,
                              ec.message()));
      return;
    }
    const fs::file_status st = fs::status(target, ec);
    if (fs::is_directory(st) && !inside(target, root_)) {
      skip(rel, fmt::format("symbolic link to '{}' is a directory outside the dataset ({}), not "
                            "walked",
                            shown, target.string()));
    } else if (fs::is_directory(st)) {
      if (std::find(stack_.begin(), stack_.end(), target) != stack_.end()) {
        skip(rel, fmt::format("symbolic link to '{}' is a directory loop (it leads back to a "
                              "directory that contains it), not followed",
                              shown));
        return;
      }
      descend(target, target, rel, depth);
    } else if (fs::is_regular_file(st)) {
      const uint64_t size = fs::file_size(target, ec);
      if (ec) {
        skip(rel, fmt::format("cannot be examined: {}", ec.message()));
      } else {
        out_.files.push_back({rel, size});
      }
    } else {
      skip(rel,
           fmt::format("symbolic link to '{}', which is not a regular file or a directory", shown));
    }
  }

  const ListDirectory& list_;
  fs::path root_;                // canonical
  std::vector<fs::path> stack_;  // canonical directories being walked: a link to one loops
  FolderWalk out_;
};

}  // namespace

std::error_code list_directory(const fs::path& dir,
                               const std::function<void(const fs::directory_entry&)>& entry) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    entry(*it);
  return ec;
}

FolderWalk walk_folder(const fs::path& root, const ListDirectory& list) {
  return Walker(root, list).walk(root);
}

}  // namespace mmprof
