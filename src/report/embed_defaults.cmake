# Writes OUT, a C++ file returning the text of KB and CRITERIA (cmake -P script).
file(READ ${KB} kb)
file(READ ${CRITERIA} criteria)
file(WRITE ${OUT}.tmp "// Generated from configs/ by src/report/embed_defaults.cmake; do not edit.
#include \"report/defaults.hpp\"
namespace mmprof::report {
const char* default_knowledge_base_yaml() {
  return R\"mmprof_yaml(${kb})mmprof_yaml\";
}
const char* default_criteria_yaml() {
  return R\"mmprof_yaml(${criteria})mmprof_yaml\";
}
}  // namespace mmprof::report
")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
