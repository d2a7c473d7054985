#pragma once
// The CSV tables of the run directory (mmprof/run_dir.hpp's rows): their columns, in file order,
// DESIGN.md's first, and their typed reading, row by row.
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/csv_schema.hpp"
#include "rundir/csv_table.hpp"
#include "rundir/json_file.hpp"
#include "util/files.hpp"

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

// Calls fn(row) for each row of the CSV file `file` as a `Row` (one Row, refilled: every column
// the file has is read into each row, those it lacks keep their defaults). Throws InputError
// naming the file when it is missing or a required column is, and the file, row and column when
// a cell does not hold its field's type.
template <class Row, class Fn>
void for_each_row(const std::filesystem::path& file, const Schema<Row>& schema, Fn&& fn) {
  const std::string text = read_input_file(file, "run file", kMaxRunFileBytes);
  CsvReader csv(text, file.string());
  std::vector<std::pair<size_t, const Column<Row>*>> present;
  for (const auto& c : schema) {
    if (const auto i = csv.column(c.name)) {
      present.emplace_back(*i, &c);
    } else if (c.required) {
      csv.require(c.name);  // throws, naming the file and column
    }
  }
  Row row{};
  while (csv.next()) {
    for (const auto& [i, c] : present) {
      try {
        c->read(csv.cell(i), row);
      } catch (const std::invalid_argument&) {
        throw InputError(fmt::format("{} row {} column '{}': '{}' is not a valid value", csv.name(),
                                     csv.row(), c->name, csv.cell(i)));
      }
    }
    fn(std::as_const(row));
  }
}

// Every row of `file` (for_each_row).
template <class Row>
std::vector<Row> read_rows(const std::filesystem::path& file, const Schema<Row>& schema) {
  std::vector<Row> rows;
  for_each_row(file, schema, [&](const Row& r) { rows.push_back(r); });
  return rows;
}

}  // namespace mmprof::rundir
