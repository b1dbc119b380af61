#include "tests/emulators/kubernetes/managed_fields.h"

#include <algorithm>
#include <map>

namespace plinth::kube_emulator {
namespace {

const std::set<std::string> kTrackedMetadata = {"labels", "annotations", "finalizers", "ownerReferences"};

struct Node {
  bool owned = false;
  std::map<std::string, Node> kids;
};

json node_to_json(const Node& n) {
  json j = json::object();
  for (const auto& [k, kid] : n.kids) j["f:" + k] = node_to_json(kid);
  if (n.owned && !n.kids.empty()) j["."] = json::object();
  return j;
}

void read_node(const json& j, FieldPath& path, FieldSet& out) {
  if (!j.is_object()) return;
  for (const auto& [k, v] : j.items()) {
    if (k == ".") {
      if (!path.empty()) out.insert(path);
    } else if (k.rfind("f:", 0) == 0) {
      path.push_back(k.substr(2));
      if (v.is_object() && v.empty())
        out.insert(path);
      else
        read_node(v, path, out);
      path.pop_back();
    } else if (!path.empty()) {
      out.insert(path);  // k:, v:, i: members of a list: the emulator owns lists whole
    }
  }
}

/// Adds `path` (when tracked; a top-level object never) and, for an object,
/// everything below it.
void mark_all(const json& v, FieldPath& path, FieldSet& out, const Tracking& t) {
  if (t.tracked(path) && !(path.size() == 1 && v.is_object())) out.insert(path);
  if (!v.is_object()) return;
  for (const auto& [k, kid] : v.items()) {
    path.push_back(k);
    mark_all(kid, path, out, t);
    path.pop_back();
  }
}

void walk(const json* a, const json* b, FieldPath& path, Change& out, const Tracking& t) {
  if (a && b && a->is_object() && b->is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a->items()) keys.insert(k);
    for (const auto& [k, v] : b->items()) keys.insert(k);
    for (const auto& k : keys) {
      if (path.empty() && !t.tracked({k})) continue;
      auto ia = a->find(k);
      auto ib = b->find(k);
      path.push_back(k);
      walk(ia == a->end() ? nullptr : &*ia, ib == b->end() ? nullptr : &*ib, path, out, t);
      path.pop_back();
    }
    return;
  }
  if (a && b && *a == *b) return;
  if (a) mark_all(*a, path, out.removed, t);
  if (b) mark_all(*b, path, out.changed, t);
}

/// The tracked part of an apply configuration.
json strip(const json& config, const Tracking& t) {
  json out = json::object();
  if (!config.is_object()) return out;
  for (const auto& [k, v] : config.items()) {
    if (k == "metadata" && v.is_object()) {
      json m = json::object();
      for (const auto& [mk, mv] : v.items())
        if (kTrackedMetadata.count(mk)) m[mk] = mv;
      if (!m.empty()) out[k] = m;
    } else if (t.tracked({k})) {
      out[k] = v;
    }
  }
  return out;
}

void merge_into(json& target, const json& patch) {
  for (const auto& [k, v] : patch.items()) {
    auto it = target.find(k);
    if (v.is_object() && it != target.end() && it->is_object())
      merge_into(*it, v);
    else
      target[k] = v;
  }
}

void collect_leaves(const json& v, FieldPath& path, FieldSet& out, const Tracking& t) {
  if (v.is_object() && !v.empty()) {
    for (const auto& [k, kid] : v.items()) {
      path.push_back(k);
      collect_leaves(kid, path, out, t);
      path.pop_back();
    }
    return;
  }
  if (!path.empty() && t.tracked(path)) out.insert(path);
}

bool is_prefix(const FieldPath& prefix, const FieldPath& p) {
  return prefix.size() <= p.size() && std::equal(prefix.begin(), prefix.end(), p.begin());
}

bool owns_at_or_below(const FieldSet& set, const FieldPath& p) {
  for (auto it = set.lower_bound(p); it != set.end() && is_prefix(p, *it); ++it) return true;
  return false;
}

json* find_path(json& obj, const FieldPath& p) {
  json* cur = &obj;
  for (const auto& k : p) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

std::string label(const ManagedEntry& e) {
  std::string q = "\"" + e.manager + "\"";
  return e.operation == "Update" ? q + " using " + e.api_version : q;
}

void drop_empty(std::vector<ManagedEntry>& entries) {
  entries.erase(std::remove_if(entries.begin(), entries.end(), [](const ManagedEntry& e) { return e.fields.empty(); }),
                entries.end());
}

}  // namespace

bool Tracking::tracked(const FieldPath& p) const {
  if (p.empty()) return false;
  if (p[0] == "apiVersion" || p[0] == "kind") return false;
  if (p[0] == "status" && status_is_subresource) return false;
  if (p[0] == "metadata") return p.size() == 1 || kTrackedMetadata.count(p[1]) > 0;
  return true;
}

std::string path_string(const FieldPath& path) {
  std::string s;
  for (const auto& k : path) s += "." + k;
  return s;
}

json to_fields_v1(const FieldSet& set) {
  Node root;
  for (const auto& p : set) {
    Node* n = &root;
    for (const auto& k : p) n = &n->kids[k];
    n->owned = true;
  }
  return node_to_json(root);
}

FieldSet from_fields_v1(const json& fields) {
  FieldSet out;
  FieldPath path;
  read_node(fields, path, out);
  return out;
}

std::vector<ManagedEntry> read_managed_fields(const json& managed_fields) {
  std::vector<ManagedEntry> out;
  if (!managed_fields.is_array()) return out;
  for (const auto& e : managed_fields) {
    if (!e.is_object()) continue;
    ManagedEntry m;
    m.manager = e.value("manager", "");
    m.operation = e.value("operation", "");
    m.api_version = e.value("apiVersion", "");
    m.time = e.value("time", "");
    if (auto f = e.find("fieldsV1"); f != e.end()) m.fields = from_fields_v1(*f);
    out.push_back(std::move(m));
  }
  return out;
}

json write_managed_fields(const std::vector<ManagedEntry>& entries) {
  json out = json::array();
  for (const auto& e : entries)
    out.push_back({{"manager", e.manager},
                   {"operation", e.operation},
                   {"apiVersion", e.api_version},
                   {"time", e.time},
                   {"fieldsType", "FieldsV1"},
                   {"fieldsV1", to_fields_v1(e.fields)}});
  return out;
}

FieldSet applied_fields(const json& config, const Tracking& tracking) {
  FieldSet out;
  FieldPath path;
  json stripped = strip(config, tracking);
  for (const auto& [k, v] : stripped.items()) {
    path = {k};
    collect_leaves(v, path, out, tracking);
  }
  return out;
}

Change compare(const json& before, const json& after, const Tracking& tracking) {
  Change out;
  FieldPath path;
  static const json empty = json::object();
  walk(before.is_object() ? &before : &empty, after.is_object() ? &after : &empty, path, out, tracking);
  return out;
}

std::string conflict_message(const std::vector<Conflict>& conflicts) {
  if (conflicts.size() == 1)
    return "Apply failed with 1 conflict: conflict with " + conflicts[0].manager + ": " +
           path_string(conflicts[0].path);
  std::map<std::string, std::vector<FieldPath>> by_manager;
  for (const auto& c : conflicts) by_manager[c.manager].push_back(c.path);
  std::string msg = "Apply failed with " + std::to_string(conflicts.size()) + " conflicts: ";
  bool first = true;
  for (const auto& [m, paths] : by_manager) {
    msg += (first ? "" : "\n") + std::string("conflicts with ") + m + ":";
    first = false;
    for (const auto& p : paths) msg += "\n- " + path_string(p);
  }
  return msg;
}

ApplyOutcome server_side_apply(const json& live, const std::vector<ManagedEntry>& managers, const json& config,
                               const std::string& manager, const std::string& api_version, bool force,
                               const std::string& now, const Tracking& tracking) {
  ApplyOutcome out;
  out.managers = managers;
  json base = live.is_object() ? live : json::object();
  json cfg = strip(config, tracking);
  FieldSet applied = applied_fields(config, tracking);
  json merged = base;
  merge_into(merged, cfg);

  Change ch = compare(base, merged, tracking);
  FieldSet touched = ch.changed;
  touched.insert(ch.removed.begin(), ch.removed.end());
  auto is_self = [&](const ManagedEntry& e) { return e.manager == manager && e.operation == "Apply"; };
  for (const auto& e : out.managers) {
    if (is_self(e)) continue;
    for (const auto& p : e.fields)
      if (touched.count(p)) out.conflicts.push_back({label(e), p});
  }
  if (!out.conflicts.empty() && !force) return out;
  if (force) {
    for (auto& e : out.managers)
      if (!is_self(e))
        for (const auto& p : touched) e.fields.erase(p);
    out.conflicts.clear();
  }

  // Fields this manager applied before and leaves out now go, unless someone else owns them.
  auto self = std::find_if(out.managers.begin(), out.managers.end(), is_self);
  if (self != out.managers.end()) {
    for (const auto& p : self->fields) {
      if (applied.count(p)) continue;
      bool shared = std::any_of(out.managers.begin(), out.managers.end(),
                                [&](const ManagedEntry& e) { return !is_self(e) && owns_at_or_below(e.fields, p); });
      if (shared || p.empty()) continue;
      FieldPath parent(p.begin(), p.end() - 1);
      json* holder = parent.empty() ? &merged : find_path(merged, parent);
      if (!holder || !holder->is_object()) continue;
      holder->erase(p.back());
      // Objects left empty go too, unless somebody owns them; top-level ones stay.
      while (parent.size() >= 2) {
        json* node = find_path(merged, parent);
        if (!node || !node->is_object() || !node->empty() || applied.count(parent)) break;
        bool owned = std::any_of(out.managers.begin(), out.managers.end(),
                                 [&](const ManagedEntry& e) { return !is_self(e) && e.fields.count(parent); });
        if (owned) break;
        FieldPath up(parent.begin(), parent.end() - 1);
        find_path(merged, up)->erase(parent.back());
        parent = up;
      }
    }
    self->fields = applied;
    self->time = now;
    self->api_version = api_version;
  } else {
    out.managers.push_back({manager, "Apply", api_version, now, applied});
  }
  drop_empty(out.managers);
  out.object = std::move(merged);
  return out;
}

void record_update(std::vector<ManagedEntry>& managers, const json& before, const json& after,
                   const std::string& manager, const std::string& api_version, const std::string& now,
                   const Tracking& tracking) {
  Change ch = compare(before, after, tracking);
  if (ch.changed.empty() && ch.removed.empty()) return;
  for (auto& e : managers) {
    for (const auto& p : ch.changed) e.fields.erase(p);
    for (const auto& p : ch.removed) e.fields.erase(p);
  }
  auto it = std::find_if(managers.begin(), managers.end(),
                         [&](const ManagedEntry& e) { return e.manager == manager && e.operation == "Update"; });
  if (it == managers.end()) {
    managers.push_back({manager, "Update", api_version, now, {}});
    it = managers.end() - 1;
  }
  it->fields.insert(ch.changed.begin(), ch.changed.end());
  it->time = now;
  it->api_version = api_version;
  drop_empty(managers);
}

}  // namespace plinth::kube_emulator
