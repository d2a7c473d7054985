#pragma once
// FFmpeg error checking for the generator's encoders (the handles are in util/av_handles.hpp).
#include <string>

#include "decode/av_handles.hpp"

namespace mmprof::gen {

// Throws RunError("<what>: <FFmpeg's message>") when `rc` < 0; returns rc otherwise.
int check_av(int rc, const std::string& what);

}  // namespace mmprof::gen
