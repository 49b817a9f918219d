#pragma once
// The report of `pleshard run` as one list of fields (core/report_fields.hpp), printed as
// text or as one JSON line. docs/report.md documents every key; the schema version changes
// whenever a key is removed or renamed or its meaning changes.

#include <vector>

#include "core/report_fields.hpp"
#include "job/batch_job.hpp"

namespace pleshard {

inline constexpr int k_run_report_schema_version = 1;

// Every key in every report: null where a value does not apply (rates of a run that did
// nothing, step latencies without steps), empty arrays where there are no records.
[[nodiscard]] std::vector<ReportField> run_report_fields(const BatchJobReport& report);

}  // namespace pleshard
