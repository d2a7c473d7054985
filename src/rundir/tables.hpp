#pragma once
// The CSV tables of the run directory (mmprof/run_dir.hpp's rows): their columns, in file order,
// DESIGN.md's first, and the typed reading of a parsed table.
#include <fmt/format.h>

#include <string>

#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/csv_schema.hpp"
#include "rundir/csv_table.hpp"

namespace mmprof::rundir {

const Schema<StepRow>& steps_schema();
// Those and then `rank`: steps.csv of a user's own job (a torchrun job's holds every rank's
// steps), and the reader's schema for every run (a column a file lacks is left empty).
const Schema<StepRow>& steps_schema_with_rank();
// stages.csv of mmprof's own loader: the common columns, then what the worker's probe found
// (format, source_width_px, source_height_px).
const Schema<StageRow>& stages_schema();
// The common columns and then `getitem_ms`: stages.csv of a user's own job (the external hook),
// whose rows have no probe.
const Schema<StageRow>& stages_schema_with_getitem();
// Every column: the reader's schema for every run (a column a file lacks is left empty).
const Schema<StageRow>& stages_read_schema();
const Schema<ResourceRow>& resources_schema();
const Schema<HostRow>& host_schema();
const Schema<DigestRow>& digests_schema();

// The rows of `table` as `Row`s. Throws InputError naming the file when a required column is
// missing, and the file, row and column when a cell does not hold its field's type.
template <class Row>
std::vector<Row> read_rows(const CsvTable& table, const Schema<Row>& schema) {
  std::vector<std::pair<size_t, const Column<Row>*>> present;
  for (const auto& c : schema) {
    if (const auto i = table.column(c.name)) {
      present.emplace_back(*i, &c);
    } else if (c.required) {
      table.require(c.name);  // throws, naming the file and column
    }
  }
  std::vector<Row> rows(table.size());
  for (size_t r = 0; r < table.size(); ++r) {
    for (const auto& [i, c] : present) {
      try {
        c->read(table.row(r)[i], rows[r]);
      } catch (const std::invalid_argument&) {
        throw InputError(fmt::format("{} row {} column '{}': '{}' is not a valid value",
                                     table.name(), r + 2, c->name, table.row(r)[i]));
      }
    }
  }
  return rows;
}

}  // namespace mmprof::rundir
