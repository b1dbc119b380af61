#pragma once
#include <string>

#include "engine/plan/plan.h"

namespace plinth::plan {

/// Version of the `plinth plan --json` document (docs/plan.md). A consumer
/// should check the major number; minor versions only add fields.
inline constexpr const char* kJsonFormatVersion = "1.2";

struct TextOptions {
  bool color = false;   ///< ANSI colours on the action markers
  bool grouped = true;  ///< one entry per pool and action (false: --no-group, one block per resource)
};

/// The human plan, in the Terraform habit: one block per changed resource
/// ("+ ADDR (create)", "~ ADDR (update in place)", "-/+ ADDR (replace,
/// forced by: a, b)", "- ADDR (destroy)") with `path: before -> after` lines,
/// "(sensitive)" in place of sensitive values, no-ops only counted, and the
/// summary line "Plan: N to create, N to update, N to replace, N to destroy."
/// or "No changes. Infrastructure matches the blueprint."
/// Grouped (the default), the members of a pool (resources with an index)
/// that take the same action are one entry when there are two or more:
/// "+ TYPE.POOL[0..19, 21]  21 to create" (the verb, and for replaces what
/// forces them), the reasons once, then per attribute the value they share,
/// or the first and last member's with "(per node)", and for changes
/// "(K of N)" when only some members have it. docs/plan.md, "Grouped".
std::string to_text(const Plan& plan, const TextOptions& options = {});

/// The text plan's marker of an action ("+", "~", "-/+", "-"; " " for a no-op)
/// and its verb ("create", "update in place", "replace", "destroy", "no-op").
const char* action_marker(Action a);
const char* action_verb(Action a);

/// "Plan: 3 to create, 1 to update, 1 to replace, 2 to destroy." or the
/// no-changes sentence.
std::string summary_line(const Plan& plan);

/// The machine-readable plan (format_version, summary, resource_changes);
/// sensitive values are replaced by the string "(sensitive)". The CLI adds
/// "blueprint" and "state" objects; docs/plan.md documents every field.
Json to_json(const Plan& plan);

/// The same document as text, built entry by entry so a 100,000-resource plan
/// never exists as one JSON tree: the top-level fields of to_json plus those of
/// `extra` (an object; the CLI's "blueprint" and "state") one per line, then
/// "resource_changes" with one compact entry per line. Parses to
/// to_json(plan) merged with `extra`.
std::string to_json_text(const Plan& plan, const Json& extra = Json::object());

}  // namespace plinth::plan
