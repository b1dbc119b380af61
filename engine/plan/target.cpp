#include "engine/plan/target.h"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_map>

#include "engine/core/strings.h"

namespace plinth::plan {

Result<Targeted> restrict_to_targets(const Plan& plan, const std::vector<std::string>& targets) {
  std::unordered_map<std::string, size_t> index;
  std::unordered_map<std::string, std::vector<size_t>> dependents;  // address -> deletes that depended on it
  std::vector<std::string> known;
  for (size_t i = 0; i < plan.changes.size(); ++i) {
    const ResourceChange& c = plan.changes[i];
    index[c.address] = i;
    known.push_back(c.address);
    if (c.action == Action::Delete && c.before)
      for (const auto& d : c.before->depends_on) dependents[d].push_back(i);
  }

  std::set<size_t> selected, chosen;
  for (const auto& t : targets) {
    bool any = false;
    for (size_t i = 0; i < plan.changes.size(); ++i) {
      const ResourceChange& c = plan.changes[i];
      const Resource* r = c.after ? &*c.after : c.before ? &*c.before : nullptr;
      const bool whole = r && r->index >= 0 && t == r->type + "." + r->name;
      if (c.address == t || whole) {
        selected.insert(i);
        any = true;
      }
    }
    if (!any) {
      std::string msg = "-target " + t + " names no resource of the blueprint or the state";
      if (auto m = closest_match(t, known)) msg += "; did you mean '" + *m + "'?";
      else msg += " (plinth plan lists the addresses; a pool's nodes are TYPE.POOL or TYPE.POOL[INDEX])";
      return Error::invalid(msg);
    }
  }
  chosen = selected;

  // Dependencies of what is created or changed; dependents of what is deleted.
  std::deque<size_t> todo(selected.begin(), selected.end());
  while (!todo.empty()) {
    size_t i = todo.front();
    todo.pop_front();
    const ResourceChange& c = plan.changes[i];
    std::vector<size_t> next;
    if (c.action == Action::Delete) {
      if (auto it = dependents.find(c.address); it != dependents.end()) next = it->second;
    } else if (c.after) {
      for (const auto& d : c.after->depends_on)
        if (auto it = index.find(d); it != index.end()) next.push_back(it->second);
    }
    for (size_t n : next)
      if (selected.insert(n).second) todo.push_back(n);
  }

  Targeted out;
  for (size_t i : selected) {
    out.plan.changes.push_back(plan.changes[i]);
    if (!chosen.count(i) && plan.changes[i].action != Action::NoOp) out.added.push_back(plan.changes[i].address);
  }
  std::sort(out.added.begin(), out.added.end());
  out.changes_left_out = plan.summary().changes() - out.plan.summary().changes();
  return out;
}

Status request_replace(Plan& plan, const std::vector<std::string>& addresses) {
  for (const auto& a : addresses) {
    auto it = std::find_if(plan.changes.begin(), plan.changes.end(),
                           [&](const ResourceChange& c) { return c.address == a && !c.deposed; });
    if (it == plan.changes.end()) {
      std::vector<std::string> known;
      bool pool = false;
      for (const auto& c : plan.changes) {
        known.push_back(c.address);
        const Resource* r = c.after ? &*c.after : c.before ? &*c.before : nullptr;
        pool = pool || (r && r->index >= 0 && a == r->type + "." + r->name);
      }
      if (pool)
        return Error::invalid("-replace " + a + " names a whole pool; replace nodes one address at a time (" + a +
                              "[0], ...), so a pool is never reprovisioned by accident");
      std::string msg = "-replace " + a + " names no resource of the blueprint or the state";
      if (auto m = closest_match(a, known)) msg += "; did you mean '" + *m + "'?";
      return Error::invalid(msg);
    }
    switch (it->action) {
      case Action::Create:
        return Error::invalid("-replace " + a + ": the resource is not in the state yet, so the plan creates it; "
                              "there is nothing to replace");
      case Action::Delete:
        return Error::invalid("-replace " + a + ": the blueprint no longer declares it, so the plan deletes it; "
                              "there is nothing to replace it with");
      case Action::NoOp:
      case Action::Update:
        it->action = Action::Replace;
        break;
      case Action::Replace: break;
    }
    it->replace_requested = true;
  }
  return {};
}

}  // namespace plinth::plan
