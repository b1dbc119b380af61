#pragma once
// Internal to engine/state: one saved change as the backends store it
// (docs/state.md, "Change log"): the local file's log lines and PostgreSQL's
// plinth_state_changes rows hold the same text.
#include <string>
#include <string_view>
#include <vector>

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

/// Refuses `c` (Conflict, "state was changed by another run: ...; nothing
/// was written") unless it continues the stored state `source` of
/// `lineage` at `serial`. `noun` is what --state points at ("file", "state").
Status check_continues(const std::string& source, const char* noun, const std::string& lineage, uint64_t serial,
                       const StateChanges& c);

/// The stored changes that continue a document, collected in order and then
/// applied to it (a backend's load).
class ChangeChain {
 public:
  explicit ChangeChain(const StateDocument& doc) : lineage_(doc.lineage), serial_(doc.serial) {}
  /// Takes `c` when it continues the chain. One at or below the chain's
  /// serial, or of another lineage, was folded already and is skipped. One
  /// that skips serials is an error: "continues serial X, but the state is
  /// at serial Y".
  Status add(StateChanges c);
  /// Applies what was taken to `doc` (the document the chain started from).
  void apply_to(StateDocument& doc) { apply_changes(doc, records_); }

 private:
  std::string lineage_;
  uint64_t serial_;
  std::vector<StateChanges> records_;
};

}  // namespace plinth::state
