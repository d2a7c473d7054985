#pragma once
// configs/report/knowledge-base.yaml and configs/report/criteria.yaml as compiled into the binary
// (report/embed_defaults.cmake), so `mmprof report` works from any directory.
namespace mmprof::report {

const char* default_knowledge_base_yaml();
const char* default_criteria_yaml();

}  // namespace mmprof::report
