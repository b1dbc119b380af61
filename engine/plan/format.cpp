// Plan output: the human text and the versioned JSON document.
#include "engine/plan/format.h"

#include <algorithm>
#include <charconv>

#include "engine/core/strings.h"
#include "engine/provider/registry.h"

namespace plinth::plan {

namespace {

const char* kReset = "\x1b[0m";

struct Style {
  const char* marker;
  const char* color;
  const char* verb;
};

Style style(Action a) {
  switch (a) {
    case Action::Create: return {"+", "\x1b[32m", "create"};
    case Action::Update: return {"~", "\x1b[33m", "update in place"};
    case Action::Replace: return {"-/+", "\x1b[35m", "replace"};
    case Action::Delete: return {"-", "\x1b[31m", "destroy"};
    case Action::NoOp: break;
  }
  return {" ", "", "no-op"};
}

/// Appends the JSON text of `v`, as v.dump() writes it: integers, booleans
/// and printable ASCII strings without quotes or backslashes directly (most
/// values of a plan), everything else through dump().
void append_json(std::string& out, const Json& v) {
  if (v.is_number_integer()) {
    char buf[24];
    auto [end, ec] = v.is_number_unsigned() ? std::to_chars(buf, buf + sizeof buf, v.get<uint64_t>())
                                             : std::to_chars(buf, buf + sizeof buf, v.get<int64_t>());
    out.append(buf, end);
    return;
  }
  if (v.is_boolean()) {
    out += v.get<bool>() ? "true" : "false";
    return;
  }
  if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    if (std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; })) {
      out += '"';
      out += text;
      out += '"';
      return;
    }
  }
  out += v.dump();
}

void append_value(std::string& out, const Shared<Json>& v, bool sensitive) {
  if (!v) out += "(absent)";
  else if (sensitive) out += "(sensitive)";
  else append_json(out, *v);
}

/// The note of a type that is only recorded in state ("recorded only: no
/// cluster configured"), or "".
std::string recorded_only(const ResourceChange& rc) {
  const Resource* r = rc.after ? &*rc.after : rc.before ? &*rc.before : nullptr;
  const ResourceType* t = find_resource_type(rc.type, r ? r->provider : "");
  return t ? t->recorded_only : "";
}

std::string plural(int n, const char* what) { return std::to_string(n) + " to " + what; }

}  // namespace

std::string summary_line(const Plan& plan) {
  Summary s = plan.summary();
  if (s.changes() == 0) return "No changes. Infrastructure matches the blueprint.";
  return "Plan: " + plural(s.create, "create") + ", " + plural(s.update, "update") + ", " +
         plural(s.replace, "replace") + ", " + plural(s.remove, "destroy") + ".";
}

std::string to_text(const Plan& plan, const TextOptions& options) {
  std::string out;
  if (!plan.has_changes()) return summary_line(plan) + "\n";
  out.reserve(plan.changes.size() * 256);
  out += "Plinth will perform the following actions:\n\n";
  for (const auto& rc : plan.changes) {
    if (rc.action == Action::NoOp) continue;
    Style st = style(rc.action);
    // A type that replaces create-before-destroy shows it as Terraform does.
    const Resource* r = rc.after ? &*rc.after : rc.before ? &*rc.before : nullptr;
    const ResourceType* type = r ? find_resource_type(rc.type, r->provider) : nullptr;
    const bool cbd = rc.action == Action::Replace && type && type->create_before_destroy;
    if (cbd) st = {"+/-", st.color, "replace, create before destroy"};
    out += "  ";
    if (options.color) out += st.color;
    out += st.marker;
    if (options.color) out += kReset;
    out += ' ';
    out += rc.address;
    out += " (";
    out += st.verb;
    if (rc.action == Action::Replace) {
      std::string forced;
      for (const auto& c : rc.changes) {
        if (!c.forces_replacement) continue;
        if (!forced.empty()) forced += ", ";
        forced += safe_text(c.path);  // keys come from the blueprint (bios names)
      }
      if (!forced.empty()) out += ", forced by: " + forced;
      if (rc.replace_requested) out += forced.empty() ? ", as requested with -replace" : "; requested with -replace";
    }
    if (std::string note = recorded_only(rc); !note.empty()) out += "; " + note;
    out += ")\n";
    if (rc.action == Action::Delete) continue;
    for (const auto& why : rc.reasons) out += "      # because " + safe_text(why) + "\n";
    for (const auto& c : rc.changes) {
      out += "      ";
      out += safe_text(c.path);
      out += ": ";
      if (rc.action == Action::Create) {
        append_value(out, c.after, c.sensitive);
      } else {
        append_value(out, c.before, c.sensitive);
        out += " -> ";
        append_value(out, c.after, c.sensitive);
        if (c.forces_replacement) out += "  # forces replacement";
      }
      out += '\n';
    }
  }
  out += '\n';
  out += summary_line(plan);
  out += '\n';
  return out;
}

namespace {

Json change_json(const ResourceChange& rc) {
  const Resource& r = rc.after ? *rc.after : *rc.before;
  Json attrs = Json::array();
  for (const auto& c : rc.changes) {
    auto shown = [&](const Shared<Json>& v) -> Json {
      if (!v) return nullptr;
      return c.sensitive ? Json("(sensitive)") : *v;
    };
    attrs.push_back({{"path", c.path},
                     {"before", shown(c.before)},
                     {"after", shown(c.after)},
                     {"forces_replacement", c.forces_replacement},
                     {"sensitive", c.sensitive}});
  }
  Json entry = {{"address", rc.address},
                {"type", rc.type},
                {"name", r.name},
                {"index", r.index >= 0 ? Json(r.index) : Json(nullptr)},
                {"provider", r.provider},
                {"action", to_string(rc.action)},
                {"forced_by", rc.forced_by()},
                {"changes", std::move(attrs)}};
  if (!rc.reasons.empty()) entry["reasons"] = rc.reasons;
  if (rc.replace_requested) entry["replace_requested"] = true;
  if (rc.after && rc.after->source.known()) entry["source"] = rc.after->source.str();
  return entry;
}

void append_string(std::string& out, const std::string& s) { out += Json(s).dump(); }

/// change_json(rc).dump(), written straight into `out`: the same bytes
/// (keys in the sorted order of a JSON object, nlohmann's escaping of every
/// string and value) without building the object first, which was most of
/// the time of a large plan's --json.
void append_change_json(std::string& out, const ResourceChange& rc) {
  const Resource& r = rc.after ? *rc.after : *rc.before;
  out += "{\"action\":";
  append_string(out, to_string(rc.action));
  out += ",\"address\":";
  append_string(out, rc.address);
  out += ",\"changes\":[";
  bool first = true;
  for (const auto& c : rc.changes) {
    if (!first) out += ',';
    first = false;
    auto shown = [&](const Shared<Json>& v) {
      if (!v) out += "null";
      else if (c.sensitive) out += "\"(sensitive)\"";
      else append_json(out, *v);
    };
    out += "{\"after\":";
    shown(c.after);
    out += ",\"before\":";
    shown(c.before);
    out += ",\"forces_replacement\":";
    out += c.forces_replacement ? "true" : "false";
    out += ",\"path\":";
    append_string(out, c.path);
    out += ",\"sensitive\":";
    out += c.sensitive ? "true" : "false";
    out += '}';
  }
  out += "],\"forced_by\":[";
  first = true;
  for (const auto& path : rc.forced_by()) {
    if (!first) out += ',';
    first = false;
    append_string(out, path);
  }
  out += "],\"index\":";
  out += r.index >= 0 ? std::to_string(r.index) : "null";
  out += ",\"name\":";
  append_string(out, r.name);
  out += ",\"provider\":";
  append_string(out, r.provider);
  if (!rc.reasons.empty()) {
    out += ",\"reasons\":[";
    for (size_t i = 0; i < rc.reasons.size(); ++i) {
      if (i) out += ',';
      append_string(out, rc.reasons[i]);
    }
    out += ']';
  }
  if (rc.replace_requested) out += ",\"replace_requested\":true";
  if (rc.after && rc.after->source.known()) {
    out += ",\"source\":";
    append_string(out, rc.after->source.str());
  }
  out += ",\"type\":";
  append_string(out, rc.type);
  out += '}';
}

Json header_json(const Plan& plan) {
  Summary s = plan.summary();
  Json summary = s;
  summary["has_changes"] = s.changes() > 0;
  return {{"format_version", kJsonFormatVersion}, {"summary", std::move(summary)}};
}

}  // namespace

Json to_json(const Plan& plan) {
  Json doc = header_json(plan);
  Json changes = Json::array();
  changes.get_ref<Json::array_t&>().reserve(plan.changes.size());
  for (const auto& rc : plan.changes) changes.push_back(change_json(rc));
  doc["resource_changes"] = std::move(changes);
  return doc;
}

std::string to_json_text(const Plan& plan, const Json& extra) {
  Json head = header_json(plan);
  for (const auto& [key, value] : extra.items()) head[key] = value;
  std::string out = "{\n";
  out.reserve(plan.changes.size() * 2560);  // a created node is ~2.4 KB of JSON
  for (const auto& [key, value] : head.items()) {
    out += "  ";
    out += Json(key).dump();
    out += ": ";
    out += value.dump();
    out += ",\n";
  }
  out += "  \"resource_changes\": [";
  for (size_t i = 0; i < plan.changes.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    append_change_json(out, plan.changes[i]);
  }
  out += plan.changes.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace plinth::plan
