list(APPEND MMPROF_SOURCES
  report/analysis.cpp
  report/compare.cpp
  report/criteria.cpp
  report/csv_table.cpp
  report/facts.cpp
  report/html_writer.cpp
  report/inputs.cpp
  report/json_access.cpp
  report/knowledge_base.cpp
  report/layout.cpp
  report/markdown_writer.cpp
  report/recommend.cpp
  report/report_builder.cpp
  report/series.cpp
  report/svg_chart.cpp
  report/text_escape.cpp
  report/yaml_json.cpp
  ${CMAKE_BINARY_DIR}/generated/mmprof/report_defaults.cpp
)
# The embedded defaults of `mmprof report`: the checked-in YAML files, compiled in.
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/generated/mmprof/report_defaults.cpp
  COMMAND ${CMAKE_COMMAND} -DKB=${PROJECT_SOURCE_DIR}/configs/report/knowledge-base.yaml
          -DCRITERIA=${PROJECT_SOURCE_DIR}/configs/report/criteria.yaml
          -DOUT=${CMAKE_BINARY_DIR}/generated/mmprof/report_defaults.cpp
          -P ${CMAKE_CURRENT_SOURCE_DIR}/report/embed_defaults.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/configs/report/knowledge-base.yaml ${PROJECT_SOURCE_DIR}/configs/report/criteria.yaml
          ${CMAKE_CURRENT_SOURCE_DIR}/report/embed_defaults.cmake
  COMMENT "Embedding configs/report/knowledge-base.yaml and configs/report/criteria.yaml")
