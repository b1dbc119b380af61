#pragma once
// Internal to engine/state: one saved change as the backends store it
// (docs/state.md, "Change log"): the local file's log lines and PostgreSQL's
// plinth_state_changes rows hold the same text.
#include <string>
#include <string_view>

#include "engine/core/result.h"
#include "engine/state/state.h"

namespace plinth::state {

/// One change-log line: the lower-case hex SHA-256 of the record, a space,
/// the record as compact JSON (lineage, from, serial, put, removed,
/// deposed_added, deposed_dropped; empty lists left out), a newline.
std::string change_line(const StateChanges& c);

/// The change of one line (without its newline), or why it is not one ("it
/// fails its checksum", "its record is malformed: ...").
Result<StateChanges> parse_change_line(std::string_view line);

}  // namespace plinth::state
