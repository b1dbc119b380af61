// The domain rules over a blueprint the loader reported errors in: every
// entity (stack, VLAN, pool, tier, role, ...) that holds a loader error, or
// refers to one that does, is set aside with whatever the rules say of it;
// the rules' diagnostics about the rest are kept. So one run reports a key
// typo in one pool and an unknown GPU in another, and none of the noise a
// half-read entity would cause (a misspelt `gpus_per_node` is not also "0
// GPUs per node").
#include <algorithm>
#include <set>
#include <tuple>

#include "engine/validate/validate.h"

namespace plinth::validate {
namespace {

/// Loader codes that leave the rest of the blueprint as written: a key, a
/// type, a value or a credential form inside one entity. Any other error (a
/// YAML syntax error, a duplicate name, a dangling reference, apiVersion)
/// stops the rules: what the loader read cannot be trusted as a whole.
bool local_code(const std::string& code) {
  static const std::set<std::string> kLocal = {"BP002", "BP003", "BP004", "BP005", "BP008", "BP010", "BP011"};
  return kLocal.count(code) > 0;
}

using Pos = std::tuple<std::string, int, int>;

Pos pos(const SourceLoc& l) { return {l.file, l.line, l.column}; }

struct Entity {
  std::string key;  ///< "kind/name", e.g. "pool/train-a"
  SourceLoc loc;
};

std::vector<Entity> entities(const bp::Blueprint& b) {
  std::vector<Entity> out;
  for (const auto& e : bp::entity_origins(b))
    if (e.origin->loc.known() && e.origin->loc.line > 0) out.push_back({e.kind + "/" + e.name, e.origin->loc});
  std::sort(out.begin(), out.end(), [](const Entity& x, const Entity& y) { return pos(x.loc) < pos(y.loc); });
  return out;
}

/// The entity whose text holds `loc`: the last one that starts at or before
/// it in the same file; nullptr when none does, or when `loc` is a top-level
/// key (column 1), which belongs to no entity.
const Entity* owner(const std::vector<Entity>& list, const SourceLoc& loc) {
  if (!loc.known() || loc.line <= 0 || loc.column <= 1) return nullptr;
  const Entity* found = nullptr;
  for (const auto& e : list) {
    if (e.loc.file != loc.file) continue;
    if (pos(e.loc) > pos(loc)) break;
    found = &e;
  }
  return found;
}

/// Adds to `tainted` each pool and backup that uses a tainted stack, VLAN,
/// fabric or tier.
void spread(const bp::Blueprint& b, std::set<std::string>& tainted) {
  auto bad = [&](const std::string& kind, const std::string& name) {
    return !name.empty() && tainted.count(kind + "/" + name) > 0;
  };
  auto any = [&](const std::string& kind, const std::vector<std::string>& names) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return bad(kind, n); });
  };
  for (const auto& p : b.node_pools)
    if (bad("stack", p.stack) || bad("fabric", p.fabric) || any("vlan", p.networks) || any("tier", p.storage))
      tainted.insert("pool/" + p.name);
  for (const auto& p : b.burst_pools)
    if (bad("stack", p.stack) || any("vlan", p.networks) || any("tier", p.storage) ||
        (p.checkpointing && bad("tier", p.checkpointing->target)))
      tainted.insert("burst/" + p.name);
  for (const auto& k : b.backups)
    if (bad("tier", k.source) || bad("tier", k.target)) tainted.insert("backup/" + k.name);
}

}  // namespace

Diagnostics validate_beside_load_errors(const bp::Blueprint& blueprint, const catalog::Catalog& catalog,
                                        const Diagnostics& load) {
  const auto list = entities(blueprint);
  std::set<std::string> tainted;
  for (const auto& d : load) {
    if (d.severity != Severity::Error) continue;
    if (!local_code(d.code)) return {};
    const Entity* e = owner(list, d.loc);
    if (!e || e->key.rfind("metadata/", 0) == 0) return {};  // outside any entity, or the compliance frameworks
    tainted.insert(e->key);
  }
  spread(blueprint, tainted);
  Diagnostics out;
  for (auto& d : validate(blueprint, catalog)) {
    const Entity* e = owner(list, d.loc);
    if (!e || tainted.count(e->key)) continue;  // about a set-aside entity, or about nothing in particular
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace plinth::validate
