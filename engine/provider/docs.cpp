#include "engine/provider/docs.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "engine/core/strings.h"
#include "engine/provider/options.h"

namespace plinth {
namespace {

std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string begin_marker(const std::string& kind) { return "<!-- BEGIN GENERATED: " + kind + " -->"; }
std::string end_marker(const std::string& kind) { return "<!-- END GENERATED: " + kind + " -->"; }

}  // namespace

std::string resource_types_markdown(const std::vector<const ProviderSchema*>& schemas) {
  std::vector<std::pair<const ResourceType*, const ProviderSchema*>> types;
  for (const ProviderSchema* s : schemas)
    for (const auto& t : s->resource_types) types.emplace_back(&t, s);
  std::stable_sort(types.begin(), types.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first->type, a.second->name) < std::tie(b.first->type, b.second->name);
  });
  std::string out;
  for (const auto& [t, s] : types) {
    out += "\n## `" + t->type + "`\n\n";
    out += cell(t->description) + " Provider: `" + s->name + "`";
    std::vector<std::string> served;
    for (const auto& sec : s->sections)
      if (sec.resource_type == t->type) served.push_back("`" + sec.section + "`" + (sec.is_default ? " (default)" : ""));
    if (!served.empty()) out += "; made from " + join(served, ", ");
    out += ".\n\n| attribute | force new | sensitive | type | description |\n|---|---|---|---|---|\n";
    for (const auto& a : t->attributes)
      out += "| `" + a.name + "` | " + (a.force_new ? "yes" : "no") + " | " + (a.sensitive ? "yes" : "no") + " | " +
             to_string(a.type) + " | " + cell(a.description) + " |\n";
  }
  return out;
}

std::string options_markdown(const ProviderSchema& schema) {
  std::string out =
      "\n| option | type | default | environment | meaning |\n|---|---|---|---|---|\n";
  auto row = [&](const OptionSpec& o) {
    std::vector<std::string> env;
    for (const auto& e : o.env) env.push_back("`" + e + "`");
    std::string var = option_var(schema.name, o.name);
    env.push_back("`" + var + "`");
    std::string meaning = cell(o.description);
    if (o.secret) meaning += " **Secret**: never printed or written to state, plans or reports.";
    if (!o.allowed.empty()) meaning += " One of: " + join(o.allowed, ", ") + ".";
    out += "| `" + o.name + "` | " + to_string(o.type) + " | " + (o.default_value.empty() ? "" : "`" + o.default_value + "`") +
           " | " + join(env, ", ") + " | " + meaning + " |\n";
  };
  for (const auto& o : schema.all_options()) row(o);
  return out;
}

std::string instance_types_markdown(const ProviderSchema& schema) {
  if (schema.instance_types.empty()) return "";
  std::vector<std::string> facts;  // the provider's own columns, in first-seen order
  for (const auto& t : schema.instance_types)
    for (const auto& [k, v] : t.facts.items())
      if (std::find(facts.begin(), facts.end(), k) == facts.end()) facts.push_back(k);
  std::string out = "\n| instance type | GPUs | vCPUs | memory | NVSwitch | Fabric Manager | GPU network |";
  std::string rule = "\n|---|---|---|---|---|---|---|";
  for (const auto& f : facts) {
    out += " `" + f + "` |";
    rule += "---|";
  }
  out += rule + "\n";
  std::vector<std::string> sources;
  for (const auto& t : schema.instance_types) {
    out += "| `" + t.name + "` | " + std::to_string(t.gpu_count) + " x " + t.gpu + " | " + std::to_string(t.vcpus) +
           " | " + std::to_string(t.memory_gb) + " | " + (t.nvswitch ? "yes" : "no") + " | " +
           (t.fabric_manager ? "yes" : "no") + " | " +
           (t.gpu_network.empty() ? std::string("-") : t.gpu_network + " x " + std::to_string(t.gpu_nics)) + " |";
    for (const auto& f : facts) out += " " + (t.facts.contains(f) ? t.facts.at(f).dump() : std::string("-")) + " |";
    out += "\n";
    for (const auto& src : t.sources)
      if (std::find(sources.begin(), sources.end(), src) == sources.end()) sources.push_back(src);
  }
  out += "\nSources:\n\n";
  for (const auto& src : sources) out += "- " + cell(src) + "\n";
  return out;
}

Result<std::string> generated_block(const std::string& page, const std::string& kind) {
  const std::string b = begin_marker(kind), e = end_marker(kind);
  auto start = page.find(b);
  auto end = page.find(e);
  if (start == std::string::npos || end == std::string::npos || end < start)
    return Error::invalid("no generated block '" + kind + "' (" + b + " ... " + e + ")");
  start += b.size();
  return page.substr(start, end - start);
}

Result<std::string> replace_generated(const std::string& page, const std::string& kind, const std::string& content) {
  const std::string b = begin_marker(kind), e = end_marker(kind);
  auto start = page.find(b);
  auto end = page.find(e);
  if (start == std::string::npos || end == std::string::npos || end < start)
    return Error::invalid("no generated block '" + kind + "' (" + b + " ... " + e + ")");
  start += b.size();
  std::string body = content;
  if (body.empty() || body.back() != '\n') body += '\n';
  return page.substr(0, start) + body + page.substr(end);
}

namespace {

Json setting_schema(const SettingSpec& s) {
  Json j;
  switch (s.type) {
    case ValueType::Any: j = Json::object(); break;
    case ValueType::String: j = {{"type", "string"}}; break;
    case ValueType::Duration: j = {{"type", "string"}, {"pattern", "^[0-9]+(ms|s|m|h)([0-9]+(ms|s|m|h))*$"}}; break;
    case ValueType::Bool: j = {{"type", "boolean"}}; break;
    case ValueType::Int: j = {{"type", "integer"}}; break;
    case ValueType::Number: j = {{"type", "number"}}; break;
    case ValueType::StringList: j = {{"type", "array"}, {"items", {{"type", "string"}}}}; break;
    case ValueType::Map: j = {{"type", "object"}}; break;
    case ValueType::Object: {
      Json props = Json::object();
      Json required = Json::array();
      for (const auto& f : s.fields) {
        props[f.name] = setting_schema(f);
        if (f.required) required.push_back(f.name);
      }
      j = {{"type", "object"}, {"additionalProperties", false}, {"properties", std::move(props)}};
      if (!required.empty()) j["required"] = std::move(required);
      break;
    }
  }
  if (!s.allowed.empty()) j["enum"] = s.allowed;
  return j;
}

std::string upper_name(const std::string& provider) {
  if (provider == "aws" || provider == "gcp") {
    std::string u = provider;
    for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
  }
  std::string u = provider;
  if (!u.empty()) u[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(u[0])));
  return u;
}

}  // namespace

Json settings_json_schema(const std::vector<const ProviderSchema*>& schemas, const std::string& section) {
  struct Seen {
    std::vector<std::string> who;
    std::vector<Json> shapes;  // distinct schemas, without descriptions
    std::string description;
  };
  std::map<std::string, Seen> all;
  std::vector<const ProviderSchema*> sorted = schemas;
  std::sort(sorted.begin(), sorted.end(),
            [](const ProviderSchema* a, const ProviderSchema* b) { return a->name < b->name; });
  for (const ProviderSchema* p : sorted)
    for (const auto& sec : p->sections) {
      if (sec.section != section) continue;
      for (const auto& s : sec.settings) {
        Seen& seen = all[s.name];
        Json shape = setting_schema(s);
        if (std::find(seen.shapes.begin(), seen.shapes.end(), shape) == seen.shapes.end()) seen.shapes.push_back(shape);
        seen.who.push_back(upper_name(p->name));
        seen.description += (seen.description.empty() ? "" : " ") + upper_name(p->name) + ": " + s.description;
      }
    }
  Json props = Json::object();
  for (auto& [name, seen] : all) {
    Json j = seen.shapes.size() == 1 ? seen.shapes.front() : Json{{"anyOf", seen.shapes}};
    j["description"] = seen.description;
    props[name] = std::move(j);
  }
  return {{"properties", std::move(props)}};
}

}  // namespace plinth
