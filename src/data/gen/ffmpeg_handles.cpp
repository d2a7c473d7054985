#include "data/gen/ffmpeg_handles.hpp"

#include "util/error.hpp"

namespace mmprof::gen {

int check_av(int rc, const std::string& what) {
  if (rc >= 0) return rc;
  char message[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(rc, message, sizeof message);
  throw RunError(what + ": " + message);
}

}  // namespace mmprof::gen
