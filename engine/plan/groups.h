#pragma once
// The plan seen pool by pool: the members of a pool (resources with an
// index) that take the same action, and what their attribute changes share.
// The grouped text plan, the Markdown summary and the HTML plan view are
// built from these (docs/plan.md, "Grouped").
#include <string>
#include <vector>

#include "engine/plan/plan.h"

namespace plinth::plan {

/// The changes of one entry: the members of one pool taking one action (in
/// index order), or a single resource (no index, or deposed).
struct Group {
  std::vector<const ResourceChange*> members;
  const ResourceChange& first() const { return *members.front(); }
  Action action() const { return first().action; }
  /// "TYPE.POOL" for pool members, the address for a single resource.
  std::string name() const;
  /// Whether this is pool members (even one) rather than a single resource.
  bool pooled() const;
  /// The members' indexes, as "[0..19, 21]" (empty for a single resource).
  std::string indexes() const;
};

/// The plan's changed resources (no-ops left out) in entries, in the order
/// the first member of each appears in the plan.
std::vector<Group> group_changes(const Plan& plan);

/// One attribute path across a group: the first and last member's change of
/// it, how many members change it, and whether they all change it the same.
struct AttributeLine {
  std::string path;
  const AttributeChange* first = nullptr;
  const AttributeChange* last = nullptr;
  size_t count = 0;
  bool shared = true;
};

/// The group's attribute paths in path order.
std::vector<AttributeLine> attribute_lines(const Group& group);

/// A change's value as the text plan prints it: `after` for a create, else
/// `before -> after`; values as JSON, "(sensitive)" and "(absent)".
std::string change_text(Action action, const AttributeChange& change);

/// An attribute line's value as the grouped text plan prints it: the shared
/// change, or the first and last member's with "(per node[, K of N])", or
/// the shared change with "(K of N)", and "# forces replacement".
std::string line_text(const Group& group, const AttributeLine& line);

/// The group's reasons (ResourceChange::reasons), each once, first seen first.
std::vector<std::string> group_reasons(const Group& group);

/// The paths forcing a group's replace, each once, and whether any member
/// was asked to be replaced with -replace.
std::vector<std::string> forced_paths(const Group& group, bool* requested = nullptr);

}  // namespace plinth::plan
