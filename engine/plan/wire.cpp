// The plan's wire format (plan.h): plan files, the plugin protocol and the
// JSON views are all built from these functions.
#include "engine/plan/plan.h"

namespace plinth::plan {

std::optional<Action> parse_action(std::string_view text) {
  for (Action a : {Action::NoOp, Action::Create, Action::Update, Action::Replace, Action::Delete})
    if (text == to_string(a)) return a;
  return std::nullopt;
}

void to_json(Json& j, const AttributeChange& c) {
  j = {{"path", c.path}, {"forces_replacement", c.forces_replacement}, {"sensitive", c.sensitive}};
  if (c.before) j["before"] = *c.before;
  if (c.after) j["after"] = *c.after;
}

void from_json(const Json& j, AttributeChange& c) {
  c = AttributeChange{};
  c.path = wire::str(j, "path");
  c.forces_replacement = wire::boolean_or(j, "forces_replacement", false);
  c.sensitive = wire::boolean_or(j, "sensitive", false);
  if (j.contains("before")) c.before = j.at("before");
  if (j.contains("after")) c.after = j.at("after");
}

void to_json(Json& j, const ResourceChange& rc) {
  j = {{"address", rc.address}, {"type", rc.type}, {"action", to_string(rc.action)}, {"changes", rc.changes}};
  if (rc.before) j["before"] = *rc.before;
  if (rc.after) j["after"] = *rc.after;
  if (rc.deposed) j["deposed"] = true;
  if (rc.replace_requested) j["replace_requested"] = true;
  if (!rc.reasons.empty()) j["reasons"] = rc.reasons;
}

void from_json(const Json& j, ResourceChange& rc) {
  rc = ResourceChange{};
  rc.address = wire::str(j, "address");
  rc.type = wire::str(j, "type");
  const std::string action = wire::str(j, "action");
  auto a = parse_action(action);
  if (!a) throw WireError("'action' is '" + action + "', not one of no-op, create, update, replace, delete");
  rc.action = *a;
  const Json& changes = wire::array(j, "changes");
  for (size_t i = 0; i < changes.size(); ++i)
    rc.changes.push_back(wire::within("changes[" + std::to_string(i) + "]", [&] { return changes[i].get<AttributeChange>(); }));
  if (j.contains("before")) rc.before = wire::within("before", [&] { return j.at("before").get<Resource>(); });
  if (j.contains("after")) rc.after = wire::within("after", [&] { return j.at("after").get<Resource>(); });
  rc.deposed = j.contains("deposed") && j.at("deposed").is_boolean() && j.at("deposed").get<bool>();
  rc.replace_requested = wire::boolean_or(j, "replace_requested", false);
  if (j.contains("reasons")) {
    const Json& reasons = wire::array(j, "reasons");
    for (size_t i = 0; i < reasons.size(); ++i) {
      if (!reasons[i].is_string()) throw WireError("'reasons[" + std::to_string(i) + "]' is not a string");
      rc.reasons.push_back(reasons[i].get<std::string>());
    }
  }
  if (rc.replace_requested && rc.action != Action::Replace)
    throw WireError("'replace_requested' is set on a change whose action is '" + action + "', not replace");
}

void to_json(Json& j, const Summary& s) {
  j = {{"create", s.create}, {"update", s.update}, {"replace", s.replace}, {"delete", s.remove}, {"no_op", s.no_op}};
}

void from_json(const Json& j, Summary& s) {
  auto count = [&](const char* key) { return static_cast<int>(wire::integer_or(j, key, 0)); };
  s.create = count("create");
  s.update = count("update");
  s.replace = count("replace");
  s.remove = count("delete");
  s.no_op = count("no_op");
}

void to_json(Json& j, const Plan& p) { j = {{"summary", p.summary()}, {"resource_changes", p.changes}}; }

void from_json(const Json& j, Plan& p) {
  p = Plan{};
  const Json& changes = wire::array(j, "resource_changes");
  p.changes.reserve(changes.size());
  for (size_t i = 0; i < changes.size(); ++i)
    p.changes.push_back(
        wire::within("resource_changes[" + std::to_string(i) + "]", [&] { return changes[i].get<ResourceChange>(); }));
}

namespace {

/// from_json(ResourceChange), moving what is large (the resources, the
/// changes' values) out of `j`. The values are taken before from_json reads
/// the rest, leaving nulls (an absent value stays absent), and put back after.
ResourceChange take_resource_change(Json& j) {
  if (!j.is_object()) return j.get<ResourceChange>();  // its error
  Json resources[2];
  const char* keys[2] = {"before", "after"};
  for (int i = 0; i < 2; ++i)
    if (auto it = j.find(keys[i]); it != j.end() && it->is_object()) {
      resources[i] = std::move(*it);
      j.erase(it);
    }
  std::vector<std::pair<Json, Json>> values;
  if (auto it = j.find("changes"); it != j.end() && it->is_array()) {
    values.resize(it->size());
    for (size_t i = 0; i < it->size(); ++i) {
      Json& c = (*it)[i];
      if (!c.is_object()) continue;
      if (auto b = c.find("before"); b != c.end()) values[i].first = std::move(*b);
      if (auto a = c.find("after"); a != c.end()) values[i].second = std::move(*a);
    }
  }
  ResourceChange rc = j.get<ResourceChange>();
  for (size_t i = 0; i < rc.changes.size() && i < values.size(); ++i) {
    if (rc.changes[i].before) rc.changes[i].before = std::move(values[i].first);
    if (rc.changes[i].after) rc.changes[i].after = std::move(values[i].second);
  }
  if (!resources[0].is_null()) rc.before = wire::within("before", [&] { return take_resource(resources[0]); });
  if (!resources[1].is_null()) rc.after = wire::within("after", [&] { return take_resource(resources[1]); });
  return rc;
}

}  // namespace

Plan take_plan(Json& j) {
  Plan p;
  wire::array(j, "resource_changes");  // its error, as from_json's
  Json& changes = j["resource_changes"];
  p.changes.reserve(changes.size());
  for (size_t i = 0; i < changes.size(); ++i)
    p.changes.push_back(
        wire::within("resource_changes[" + std::to_string(i) + "]", [&] { return take_resource_change(changes[i]); }));
  return p;
}

}  // namespace plinth::plan
