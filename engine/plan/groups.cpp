#include "engine/plan/groups.h"

#include <algorithm>
#include <map>

#include "engine/core/strings.h"

namespace plinth::plan {
namespace {

const Resource* resource_of(const ResourceChange& rc) {
  return rc.after ? &*rc.after : rc.before ? &*rc.before : nullptr;
}

bool same(const Shared<Json>& a, const Shared<Json>& b) { return (!a && !b) || (a && b && *a == *b); }

}  // namespace

bool Group::pooled() const {
  const Resource* r = resource_of(first());
  return r && r->index >= 0 && !first().deposed;
}

std::string Group::name() const {
  if (!pooled()) return first().address;
  const Resource* r = resource_of(first());
  return r->type + "." + r->name;
}

std::string Group::indexes() const {
  if (!pooled()) return "";
  std::vector<int> ix;
  ix.reserve(members.size());
  for (const auto* rc : members) ix.push_back(resource_of(*rc)->index);
  return index_ranges(ix);
}

std::vector<Group> group_changes(const Plan& plan) {
  std::vector<Group> entries;
  std::map<std::string, size_t> group_of;  // "TYPE.NAME action" -> entry
  for (const auto& rc : plan.changes) {
    if (rc.action == Action::NoOp) continue;
    const Resource* r = resource_of(rc);
    if (!r || r->index < 0 || rc.deposed) {
      entries.push_back({{&rc}});
      continue;
    }
    const std::string key = r->type + "." + r->name + " " + to_string(rc.action);
    auto [it, fresh] = group_of.emplace(key, entries.size());
    if (fresh) entries.emplace_back();
    entries[it->second].members.push_back(&rc);
  }
  return entries;
}

std::vector<AttributeLine> attribute_lines(const Group& group) {
  std::map<std::string, AttributeLine> by_path;
  for (const auto* rc : group.members)
    for (const auto& c : rc->changes) {
      auto& line = by_path[c.path];
      if (!line.first) {
        line.path = c.path;
        line.first = &c;
      } else {
        line.shared = line.shared && same(c.before, line.first->before) && same(c.after, line.first->after);
      }
      line.last = &c;
      ++line.count;
    }
  std::vector<AttributeLine> out;
  out.reserve(by_path.size());
  for (auto& [path, line] : by_path) out.push_back(std::move(line));
  return out;
}

std::string change_text(Action action, const AttributeChange& c) {
  auto value = [&](const Shared<Json>& v) -> std::string {
    if (!v) return "(absent)";
    if (c.sensitive) return "(sensitive)";
    return v->dump();
  };
  if (action == Action::Create) return value(c.after);
  return value(c.before) + " -> " + value(c.after);
}

std::string line_text(const Group& group, const AttributeLine& a) {
  const size_t n = group.members.size();
  std::string line = change_text(group.action(), *a.first);
  if (!a.shared) {
    line += " ... " + change_text(group.action(), *a.last) + "  (per node";
    if (a.count < n) line += ", " + std::to_string(a.count) + " of " + std::to_string(n);
    line += ")";
  } else if (a.count < n) {
    line += "  (" + std::to_string(a.count) + " of " + std::to_string(n) + ")";
  }
  if (group.action() != Action::Create && a.first->forces_replacement) line += "  # forces replacement";
  return line;
}

std::vector<std::string> group_reasons(const Group& group) {
  std::vector<std::string> out;
  for (const auto* rc : group.members)
    for (const auto& why : rc->reasons)
      if (std::find(out.begin(), out.end(), why) == out.end()) out.push_back(why);
  return out;
}

std::vector<std::string> forced_paths(const Group& group, bool* requested) {
  std::vector<std::string> forced;
  bool asked = false;
  for (const auto* rc : group.members) {
    asked = asked || rc->replace_requested;
    for (const auto& c : rc->changes)
      if (c.forces_replacement && std::find(forced.begin(), forced.end(), c.path) == forced.end())
        forced.push_back(c.path);
  }
  if (requested) *requested = asked;
  return forced;
}

}  // namespace plinth::plan
