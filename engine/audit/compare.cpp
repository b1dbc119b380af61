#include "engine/audit/compare.h"

#include <algorithm>
#include <map>
#include <utility>

namespace plinth::audit {
namespace {

using Key = std::pair<std::string, std::string>;

bool failing(policy::Outcome o) { return o == policy::Outcome::Fail || o == policy::Outcome::Error; }

/// The worst verdict per (policy, address): failing beats waived beats pass.
std::map<Key, const policy::Verdict*> index(const policy::Evaluation& e) {
  auto rank = [](policy::Outcome o) { return failing(o) ? 0 : o == policy::Outcome::Waived ? 1 : 2; };
  std::map<Key, const policy::Verdict*> out;
  for (const auto& v : e.verdicts) {
    auto& slot = out[{v.policy, v.address}];
    if (!slot || rank(v.outcome) < rank(slot->outcome)) slot = &v;
  }
  return out;
}

}  // namespace

VerdictDelta compare_verdicts(const policy::Evaluation& base, const policy::Evaluation& head) {
  auto b = index(base), h = index(head);
  VerdictDelta d;
  for (const auto& [key, v] : h) {
    if (!failing(v->outcome)) continue;
    auto it = b.find(key);
    if (it != b.end() && failing(it->second->outcome)) continue;
    d.added.push_back({key.first, key.second, it == b.end() ? "absent" : policy::to_string(it->second->outcome),
                       policy::to_string(v->outcome), v->message});
  }
  for (const auto& [key, v] : b) {
    if (!failing(v->outcome)) continue;
    auto it = h.find(key);
    if (it != h.end() && failing(it->second->outcome)) continue;
    d.fixed.push_back({key.first, key.second, policy::to_string(v->outcome),
                       it == h.end() ? "absent" : policy::to_string(it->second->outcome), v->message});
  }
  return d;
}

std::string describe_change(const std::string& ref, const std::string& commit, const plan::Plan& resources,
                            const VerdictDelta& delta) {
  int added = 0, changed = 0, removed = 0;
  std::string lines;
  for (const auto& c : resources.changes) {
    switch (c.action) {
      case plan::Action::NoOp: continue;
      case plan::Action::Create:
        added++;
        lines += "  + " + c.address + "\n";
        break;
      case plan::Action::Delete:
        removed++;
        lines += "  - " + c.address + "\n";
        break;
      case plan::Action::Update:
      case plan::Action::Replace: {
        changed++;
        std::string paths;
        for (const auto& a : c.changes) paths += (paths.empty() ? "" : ", ") + a.path;
        lines += "  ~ " + c.address + " (" + paths + ")\n";
        break;
      }
    }
  }
  std::string out = "Compared with " + ref + " (" + commit.substr(0, 12) + "): " + std::to_string(added) +
                    " resource(s) added, " + std::to_string(changed) + " changed, " + std::to_string(removed) +
                    " removed.\n" + lines;
  out += "Policy verdicts: this change adds " + std::to_string(delta.added.size()) + " failure(s), fixes " +
         std::to_string(delta.fixed.size()) + ".\n";
  for (const auto& c : delta.added)
    out += "  + " + c.policy + " " + (c.address.empty() ? "(blueprint)" : c.address) + ": " + c.message + "\n";
  for (const auto& c : delta.fixed)
    out += "  - " + c.policy + " " + (c.address.empty() ? "(blueprint)" : c.address) + ": was " + c.before +
           (c.after == "absent" ? " (no longer evaluated)" : ", now " + c.after) + "\n";
  return out;
}

}  // namespace plinth::audit
