// diff(): desired resources against prior state, attribute by attribute.
#include <algorithm>
#include <unordered_map>

#include "engine/graph/expand.h"
#include "engine/plan/plan.h"
#include "engine/provider/registry.h"

namespace plinth::plan {

const char* to_string(Action a) {
  switch (a) {
    case Action::NoOp: return "no-op";
    case Action::Create: return "create";
    case Action::Update: return "update";
    case Action::Replace: return "replace";
    case Action::Delete: return "delete";
  }
  return "unknown";
}

std::vector<std::string> ResourceChange::forced_by() const {
  std::vector<std::string> out;
  for (const auto& c : changes)
    if (c.forces_replacement) out.push_back(c.path);
  return out;
}

Summary Plan::summary() const {
  Summary s;
  for (const auto& c : changes) {
    switch (c.action) {
      case Action::NoOp: ++s.no_op; break;
      case Action::Create: ++s.create; break;
      case Action::Update: ++s.update; break;
      case Action::Replace: ++s.replace; break;
      case Action::Delete: ++s.remove; break;
    }
  }
  return s;
}

namespace {

bool is_hash(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, "_hash") == 0;
}

std::string shown(const Shared<Json>& v, bool sensitive) {
  if (!v) return "(absent)";
  if (sensitive) return "(sensitive)";
  return v->dump();
}

/// ResourceChange::reasons: a hash attribute (user_data_hash) says only that
/// the rendered content changed; the changes of what the resource depends on
/// say why. At most 5 per resource, then how many more.
void explain_hashes(Plan& plan) {
  constexpr size_t kShown = 5;
  std::unordered_map<std::string_view, const ResourceChange*> by_address;
  bool any = false;
  for (const auto& c : plan.changes)
    if ((c.action == Action::Replace || c.action == Action::Update) &&
        std::any_of(c.changes.begin(), c.changes.end(), [](const AttributeChange& a) { return is_hash(a.path); }))
      any = true;
  if (!any) return;
  for (const auto& c : plan.changes)
    if (!c.deposed) by_address.emplace(c.address, &c);
  for (auto& c : plan.changes) {
    if (c.action != Action::Replace && c.action != Action::Update) continue;
    if (!c.after || std::none_of(c.changes.begin(), c.changes.end(), [](const AttributeChange& a) { return is_hash(a.path); }))
      continue;
    std::vector<std::string> reasons;
    size_t more = 0;
    for (const auto& dep : c.after->depends_on) {
      auto it = by_address.find(dep);
      if (it == by_address.end() || it->second->action == Action::NoOp) continue;
      const ResourceChange& d = *it->second;
      if (d.action == Action::Create) {
        if (reasons.size() < kShown) reasons.push_back(d.address + ": new");
        else ++more;
        continue;
      }
      for (const auto& a : d.changes) {
        if (reasons.size() < kShown)
          reasons.push_back(d.address + ": " + a.path + " " + shown(a.before, a.sensitive) + " -> " +
                            shown(a.after, a.sensitive));
        else
          ++more;
      }
    }
    if (more) reasons.push_back("and " + std::to_string(more) + " more change(s) of what it depends on");
    c.reasons = std::move(reasons);
  }
}

/// Walks two attribute objects side by side and records leaf differences.
class AttributeDiff {
 public:
  /// Values are shared with `before` and `after`, whose attributes objects() walks.
  AttributeDiff(const ResourceType* type, std::vector<AttributeChange>& out, const Shared<Resource>& before,
                const Shared<Resource>& after)
      : type_(type), out_(out), before_(before), after_(after) {}

  void objects(const std::string& prefix, const Json* before, const Json* after) {
    static const Json kEmpty = Json::object();
    const Json& b = before && before->is_object() ? *before : kEmpty;
    const Json& a = after && after->is_object() ? *after : kEmpty;
    auto bi = b.begin(), ai = a.begin();
    // Object keys iterate in sorted order, so this is a merge of two sorted lists.
    while (bi != b.end() || ai != a.end()) {
      int cmp = bi == b.end() ? 1 : ai == a.end() ? -1 : bi.key().compare(ai.key());
      const std::string& key = cmp <= 0 ? bi.key() : ai.key();
      std::string path = prefix.empty() ? key : prefix + "." + key;
      value(path, cmp <= 0 ? &bi.value() : nullptr, cmp >= 0 ? &ai.value() : nullptr);
      if (cmp <= 0) ++bi;
      if (cmp >= 0) ++ai;
    }
  }

 private:
  static bool nested(const Json* v) { return v && v->is_object() && !v->empty(); }

  void value(const std::string& path, const Json* before, const Json* after) {
    if (before && after && *before == *after) return;
    bool b_obj_or_absent = !before || before->is_object();
    bool a_obj_or_absent = !after || after->is_object();
    if ((nested(before) || nested(after)) && b_obj_or_absent && a_obj_or_absent) {
      objects(path, before, after);
      return;
    }
    AttributeChange c;
    c.path = path;
    if (before) c.before = before_.part(*before);
    if (after) c.after = after_.part(*after);
    mark(c);
    out_.push_back(std::move(c));
  }

  /// Marks from the most specific spec of the path: "a.b.c", then "a.b", then "a".
  /// force_new comes from that spec; sensitive from any spec on the way up.
  void mark(AttributeChange& c) const {
    if (!type_) return;
    std::string_view p = c.path;
    bool found_force = false;
    while (true) {
      if (const AttributeSpec* s = type_->find(p)) {
        if (!found_force) {
          c.forces_replacement = s->force_new;
          found_force = true;
        }
        c.sensitive = c.sensitive || s->sensitive;
      }
      size_t dot = p.rfind('.');
      if (dot == std::string_view::npos) break;
      p = p.substr(0, dot);
    }
  }

  const ResourceType* type_;
  std::vector<AttributeChange>& out_;
  const Shared<Resource>& before_;
  const Shared<Resource>& after_;
};

/// How many changes a create or delete of `attributes` lists: its leaves,
/// nested objects counted key by key (as AttributeDiff walks them).
size_t leaves(const Json& attributes) {
  if (!attributes.is_object() || attributes.empty()) return 1;
  size_t n = 0;
  for (const auto& v : attributes) n += leaves(v);
  return n;
}

/// diff(); with `owner`, `after` shares the desired resources it owns, and
/// with `prior_owner` `before` the prior ones.
Plan diff_of(const std::vector<Resource>& desired, const std::vector<Resource>& prior,
             const std::vector<Resource>& deposed, const std::shared_ptr<const void>& owner,
             const std::shared_ptr<const void>& prior_owner = nullptr) {
  std::unordered_map<std::string_view, const Resource*> prior_by_address;
  prior_by_address.reserve(prior.size());
  for (const auto& r : prior) prior_by_address.emplace(r.address, &r);

  struct Pair {
    const Resource* desired;
    const Resource* prior;
    const Resource& key() const { return desired ? *desired : *prior; }
  };
  std::vector<Pair> pairs;
  pairs.reserve(desired.size() + prior.size());
  for (const auto& d : desired) {
    auto it = prior_by_address.find(d.address);
    const Resource* p = nullptr;
    if (it != prior_by_address.end()) {
      p = it->second;
      prior_by_address.erase(it);
    }
    pairs.push_back({&d, p});
  }
  for (const auto& p : prior)
    if (prior_by_address.count(p.address)) pairs.push_back({nullptr, &p});
  // Addresses are unique, and the expanded graph is in this order already:
  // a plan without deletes needs no sort.
  auto less = [](const Pair& a, const Pair& b) { return graph::address_less(a.key(), b.key()); };
  if (!std::is_sorted(pairs.begin(), pairs.end(), less)) std::sort(pairs.begin(), pairs.end(), less);

  Plan plan;
  plan.changes.reserve(pairs.size());
  for (const auto& [d, p] : pairs) {
    const Resource& key = d ? *d : *p;
    ResourceChange rc;
    rc.address = key.address;
    rc.type = key.type;
    if (d) rc.after = owner ? Shared<Resource>(std::shared_ptr<const Resource>(owner, d)) : Shared<Resource>(*d);
    if (p)
      rc.before = prior_owner ? Shared<Resource>(std::shared_ptr<const Resource>(prior_owner, p)) : Shared<Resource>(*p);
    if (!d || !p || d->attributes != p->attributes) {
      // The type as the resource's provider declares it; a resource of a
      // provider this run does not know takes the type's marks from whoever
      // declares it.
      const ResourceType* type = find_resource_type(key.type, key.provider);
      if (!type) type = find_resource_type(key.type);
      if (!d || !p) rc.changes.reserve(leaves((d ? d : p)->attributes));
      AttributeDiff(type, rc.changes, rc.before, rc.after)
          .objects("", rc.before ? &rc.before->attributes : nullptr, rc.after ? &rc.after->attributes : nullptr);
    }
    if (d && p && d->provider != p->provider) {
      // Another provider takes the resource over: it must be created there
      // (and let go of by the old one), never updated in place.
      AttributeChange moved;
      moved.path = "provider";
      moved.before = Json(p->provider);
      moved.after = Json(d->provider);
      moved.forces_replacement = true;
      rc.changes.insert(rc.changes.begin(), std::move(moved));
    }
    if (!p) {
      rc.action = Action::Create;
    } else if (!d) {
      rc.action = Action::Delete;
    } else if (rc.changes.empty()) {
      rc.action = Action::NoOp;
    } else {
      bool replace = std::any_of(rc.changes.begin(), rc.changes.end(),
                                 [](const AttributeChange& c) { return c.forces_replacement; });
      rc.action = replace ? Action::Replace : Action::Update;
    }
    if (rc.action == Action::Create || rc.action == Action::Delete)
      for (auto& c : rc.changes) c.forces_replacement = false;
    plan.changes.push_back(std::move(rc));
  }
  for (const auto& old : deposed) {
    ResourceChange c;
    c.address = old.address + " (deposed)";
    c.type = old.type;
    c.action = Action::Delete;
    c.before = old;
    c.deposed = true;
    plan.changes.push_back(std::move(c));
  }
  explain_hashes(plan);
  return plan;
}

}  // namespace

Plan diff(const std::vector<Resource>& desired, const std::vector<Resource>& prior,
          const std::vector<Resource>& deposed) {
  return diff_of(desired, prior, deposed, nullptr);
}

Plan diff_sharing(const std::shared_ptr<const std::vector<Resource>>& desired, const std::vector<Resource>& prior,
                  const std::vector<Resource>& deposed) {
  return diff_of(*desired, prior, deposed, desired);
}

Plan diff_sharing_all(const std::shared_ptr<const std::vector<Resource>>& desired,
                      const std::shared_ptr<const std::vector<Resource>>& prior, const std::vector<Resource>& deposed) {
  return diff_of(*desired, *prior, deposed, desired, prior);
}

}  // namespace plinth::plan
