#include "engine/provider/docs.h"

#include <algorithm>
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
  std::string out = "\n| instance type | GPUs | vCPUs | memory | NVSwitch | Fabric Manager |";
  std::string rule = "\n|---|---|---|---|---|---|";
  for (const auto& f : facts) {
    out += " `" + f + "` |";
    rule += "---|";
  }
  out += rule + "\n";
  std::vector<std::string> sources;
  for (const auto& t : schema.instance_types) {
    out += "| `" + t.name + "` | " + std::to_string(t.gpu_count) + " x " + t.gpu + " | " + std::to_string(t.vcpus) +
           " | " + std::to_string(t.memory_gb) + " | " + (t.nvswitch ? "yes" : "no") + " | " +
           (t.fabric_manager ? "yes" : "no") + " |";
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

}  // namespace plinth
