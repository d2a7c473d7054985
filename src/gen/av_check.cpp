#include "gen/av_check.hpp"

#include "util/error.hpp"

namespace mmprof::gen {

int check_av(int rc, const std::string& what) {
  if (rc >= 0) return rc;
  throw RunError(what + ": " + detail::av_error_string(rc));
}

}  // namespace mmprof::gen
