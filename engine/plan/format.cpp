// Plan output: the human text and the versioned JSON document.
#include "engine/plan/format.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "engine/core/strings.h"
#include "engine/plan/groups.h"
#include "engine/provider/registry.h"

namespace plinth::plan {

namespace {

const char* kReset = "\x1b[0m";

struct Style {
  const char* marker;
  const char* color;
  const char* verb;
};

const char* color_of(Action a) {
  switch (a) {
    case Action::Create: return "\x1b[32m";
    case Action::Update: return "\x1b[33m";
    case Action::Replace: return "\x1b[35m";
    case Action::Delete: return "\x1b[31m";
    case Action::NoOp: break;
  }
  return "";
}

Style style(Action a) { return {action_marker(a), color_of(a), action_verb(a)}; }

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

const char* action_marker(Action a) {
  switch (a) {
    case Action::Create: return "+";
    case Action::Update: return "~";
    case Action::Replace: return "-/+";
    case Action::Delete: return "-";
    case Action::NoOp: break;
  }
  return " ";
}

const char* action_verb(Action a) {
  switch (a) {
    case Action::Create: return "create";
    case Action::Update: return "update in place";
    case Action::Replace: return "replace";
    case Action::Delete: return "destroy";
    case Action::NoOp: break;
  }
  return "no-op";
}

std::string summary_line(const Plan& plan) {
  Summary s = plan.summary();
  if (s.changes() == 0) return "No changes. Infrastructure matches the blueprint.";
  return "Plan: " + plural(s.create, "create") + ", " + plural(s.update, "update") + ", " +
         plural(s.replace, "replace") + ", " + plural(s.remove, "destroy") + ".";
}

namespace {

/// The action's style, create-before-destroy replaces shown as Terraform does.
Style style_of(const ResourceChange& rc) {
  Style st = style(rc.action);
  const Resource* r = rc.after ? &*rc.after : rc.before ? &*rc.before : nullptr;
  const ResourceType* type = r ? find_resource_type(rc.type, r->provider) : nullptr;
  if (rc.action == Action::Replace && type && type->create_before_destroy)
    st = {"+/-", st.color, "replace, create before destroy"};
  return st;
}

void append_marker(std::string& out, const Style& st, const TextOptions& options) {
  out += "  ";
  if (options.color) out += st.color;
  out += st.marker;
  if (options.color) out += kReset;
  out += ' ';
}

/// ", forced by: a, b" and the -replace note of a replace.
std::string replace_note(const Group& group) {
  bool requested = false;
  std::string out;
  for (const auto& f : forced_paths(group, &requested))
    out += (out.empty() ? ", forced by: " : ", ") + safe_text(f);  // bios names: blueprint
  if (requested) out += out.empty() ? ", as requested with -replace" : "; requested with -replace";
  return out;
}

/// A change's value: `after` for a create, else `before -> after`.
void append_change(std::string& out, Action action, const AttributeChange& c) {
  if (action == Action::Create) {
    append_value(out, c.after, c.sensitive);
    return;
  }
  append_value(out, c.before, c.sensitive);
  out += " -> ";
  append_value(out, c.after, c.sensitive);
}

/// Today's block of one change: its header and one line per attribute.
void append_block(std::string& out, const ResourceChange& rc, const TextOptions& options) {
  const Style st = style_of(rc);
  append_marker(out, st, options);
  out += rc.address;
  out += " (";
  out += st.verb;
  if (rc.action == Action::Replace) out += replace_note(Group{{&rc}});
  if (std::string note = recorded_only(rc); !note.empty()) out += "; " + note;
  out += ")\n";
  if (rc.action == Action::Delete) return;
  for (const auto& why : rc.reasons) out += "      # because " + safe_text(why) + "\n";
  for (const auto& c : rc.changes) {
    out += "      ";
    out += safe_text(c.path);
    out += ": ";
    append_change(out, rc.action, c);
    if (rc.action != Action::Create && c.forces_replacement) out += "  # forces replacement";
    out += '\n';
  }
}

/// The attribute lines of earlier pools, by type and action: a pool whose
/// lines mostly repeat one of them names it and prints only the rest.
using Printed = std::map<std::string, std::vector<std::pair<std::string, std::vector<std::string>>>>;

/// One entry for the members of a pool that take the same action: the
/// indexes, the count, the reasons once, and per attribute its value when
/// the members share it, else the first and last member's ("per node"); for
/// changes, how many members each change touches when not all. When an
/// earlier pool of the same type and action printed all but a few of the
/// same lines, the entry names it and prints only the lines that differ
/// (the earlier pool may itself have been printed that way).
void append_group(std::string& out, const Group& group, const TextOptions& options, Printed& printed) {
  const ResourceChange& first = group.first();
  const Style st = style_of(first);
  append_marker(out, st, options);
  const std::string name = group.name();
  out += name + group.indexes() + "  " + std::to_string(group.members.size()) + " to " + st.verb;
  if (first.action == Action::Replace) out += replace_note(group);
  if (std::string note = recorded_only(first); !note.empty()) out += "; " + note;
  if (first.action == Action::Delete) {
    out += '\n';
    return;
  }
  std::vector<std::string> lines;  // reasons, then one line per attribute in path order
  for (const auto& why : group_reasons(group)) lines.push_back("      # because " + safe_text(why) + "\n");
  for (const auto& a : attribute_lines(group))
    lines.push_back("      " + safe_text(a.path) + ": " + line_text(group, a) + "\n");
  // The earlier pool sharing the most lines (among the last 256, to bound the
  // work), when it leaves at most a third to print.
  auto& earlier = printed[first.type + " " + to_string(first.action)];
  const std::pair<std::string, std::vector<std::string>>* best = nullptr;
  std::vector<std::string> rest;
  for (size_t k = earlier.size() > 256 ? earlier.size() - 256 : 0; k < earlier.size(); ++k) {
    const auto& e = earlier[k];
    if (e.second.size() != lines.size()) continue;
    std::vector<std::string> differ;
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i] != e.second[i]) differ.push_back(lines[i]);
    if (!best || differ.size() < rest.size()) {
      best = &e;
      rest = std::move(differ);
    }
  }
  if (best && rest.size() * 3 <= lines.size()) {
    out += ", attributes as " + best->first + (rest.empty() ? "" : " except:") + "\n";
    for (const auto& line : rest) out += line;
  } else {
    out += '\n';
    for (const auto& line : lines) out += line;
  }
  earlier.emplace_back(name, std::move(lines));
}

}  // namespace

std::string to_text(const Plan& plan, const TextOptions& options) {
  std::string out;
  if (!plan.has_changes()) return summary_line(plan) + "\n";
  out += "Plinth will perform the following actions:\n\n";
  if (!options.grouped) {
    out.reserve(plan.changes.size() * 256);
    for (const auto& rc : plan.changes)
      if (rc.action != Action::NoOp) append_block(out, rc, options);
  } else {
    Printed printed;
    for (const auto& g : group_changes(plan)) {
      if (g.members.size() == 1) append_block(out, g.first(), options);
      else append_group(out, g, options, printed);
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
