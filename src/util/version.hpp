#pragma once
// Filled in at build time by cmake/WriteVersion.cmake.
namespace mmprof {
const char* version();
const char* git_commit();
bool git_dirty();
}  // namespace mmprof
