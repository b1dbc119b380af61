// The providers of a blueprint: their declarations (`providers:`), the keys
// of pools and monitoring that their section does not define (kept as JSON
// until the providers are known), and, once every file is read, each pool's
// provider resolved and those keys checked as the provider's settings.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "engine/blueprint/loader_internal.h"
#include "engine/core/strings.h"
#include "engine/provider/registry.h"

namespace plinth::bp::detail {
namespace {

const Keys kProviderDeclKeys{"exec", "sha256", "options"};

/// A YAML value as JSON: quoted scalars are strings; plain scalars become
/// integers, numbers, booleans or null where they read as such. Records the
/// position of every element in `locs` under `path` ("subnets.0").
Json yaml_to_json(const Ctx& c, const Node& n, const std::string& path, std::map<std::string, SourceLoc>& locs) {
  if (n.line() >= 0) locs[path] = c.loc(n);
  if (n.IsMap()) {
    Json o = Json::object();
    for (const auto& [k, v] : n.pairs()) {
      const std::string child = path + "." + k.Scalar();
      locs[child] = c.loc(v.IsNull() || v.line() < 0 ? k : v);
      o[k.Scalar()] = yaml_to_json(c, v, child, locs);
    }
    return o;
  }
  if (n.IsSequence()) {
    Json a = Json::array();
    size_t i = 0;
    for (const Node& item : n) a.push_back(yaml_to_json(c, item, path + "." + std::to_string(i++), locs));
    return a;
  }
  if (n.IsNull()) return nullptr;
  const std::string& t = n.Scalar();
  if (n.quoted()) return t;
  if (auto i = parse_int(t)) return *i;
  if (auto d = parse_number(t)) return *d;
  if (auto b = parse_bool(t)) return *b;
  if (t == "null" || t == "~") return nullptr;
  return t;
}

/// How a JSON value is described in messages.
std::string describe_json(const Json& v) {
  if (v.is_object()) return "a map";
  if (v.is_array()) return "a list";
  if (v.is_null()) return "nothing (null)";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  return "\"" + (s.size() > 40 ? s.substr(0, 37) + "..." : s) + "\"";
}

}  // namespace

void Loader::load_providers(const Obj& top) {
  const Ctx& c = top.ctx();
  const std::string base_dir = std::filesystem::path(c.file).parent_path().string();
  for (auto& [name, at, v] : named_entries(top, "providers", "provider",
                                           "use lower-case letters, digits, '-' and '_', starting with a letter")) {
    ProviderDecl d;
    d.name = name;
    d.origin.loc = at;
    d.base_dir = base_dir.empty() ? "." : base_dir;
    const std::string label = "provider '" + d.name + "'";
    if (!v.IsNull()) {  // `NAME:` alone declares nothing but the name
      Obj o(c, v, d.origin.loc, label, "", &d.origin, kProviderDeclKeys);
      if (!o.ok()) continue;
      o.check_keys();
      o.str("exec", d.exec);
      if (o.str("sha256", d.sha256)) {
        bool hex = d.sha256.size() == 64 && std::all_of(d.sha256.begin(), d.sha256.end(), [](char ch) {
                     return std::isdigit(static_cast<unsigned char>(ch)) || (ch >= 'a' && ch <= 'f');
                   });
        if (!hex)
          o.invalid(*o.get("sha256"), "'sha256' of " + label + " is not 64 lower-case hex digits",
                    "write the output of: sha256sum PLUGIN | cut -d' ' -f1");
        if (d.exec.empty())
          o.invalid(*o.get("sha256"), "'sha256' of " + label + " pins a plugin, but the provider has no 'exec'",
                    "add exec: PATH of the plugin executable, or remove sha256");
      }
      o.str_map("options", d.options);
    }
    if (providers_.claim(c, d.name, d.origin.loc, "provider")) bp_.providers.push_back(std::move(d));
  }
}

void Loader::keep_extras(const char* section, size_t index, const Obj& o, const std::vector<Obj::Entry>& extras) {
  PendingPool pp;
  pp.section = section;
  pp.index = index;
  pp.label = o.label();
  pp.own = &o.keys();
  pp.at = o.loc();
  const Obj::Entry* pe = o.get("provider");
  pp.provider_at = pe ? pe->value_loc : o.loc();
  for (const auto& e : extras) {
    pp.keys.emplace_back(e.key, e.key_loc);
    pp.values[e.key] = yaml_to_json(o.ctx(), e.value, e.key, pp.locs);
    pp.locs[e.key] = e.value_loc;
  }
  pending_.push_back(std::move(pp));
}

bool Loader::check_setting(const SettingSpec& spec, Json& value, const std::string& path,
                           const std::map<std::string, SourceLoc>& locs, const std::string& label) {
  auto where = [&](const std::string& p) {
    auto it = locs.find(p);
    return it == locs.end() ? SourceLoc{} : it->second;
  };
  auto wrong = [&](const char* type) {
    diags_.push_back({"BP003", Severity::Error,
                      "'" + path + "' in " + label + " must be " + type + ", not " + describe_json(value), where(path),
                      "", type_hint(type)});
    return false;
  };
  switch (spec.type) {
    case ValueType::Any: return true;
    case ValueType::String:
    case ValueType::Duration:
      if (value.is_object() || value.is_array() || value.is_null()) return wrong("a string");
      if (!value.is_string()) value = value.dump();  // a plain 42 where text is expected
      break;
    case ValueType::Bool:
      if (!value.is_boolean()) return wrong("a boolean");
      break;
    case ValueType::Int:
      if (!value.is_number_integer()) return wrong("an integer");
      break;
    case ValueType::Number:
      if (!value.is_number()) return wrong("a number");
      break;
    case ValueType::StringList: {
      if (!value.is_array()) return wrong("a list");
      bool ok = true;
      for (size_t i = 0; i < value.size(); ++i) {
        Json& item = value[i];
        if (item.is_object() || item.is_array() || item.is_null()) {
          diags_.push_back({"BP003", Severity::Error,
                            "'" + path + "[" + std::to_string(i) + "]' in " + label + " must be a string, not " +
                                describe_json(item),
                            where(path + "." + std::to_string(i)), "", type_hint("a string")});
          ok = false;
        } else if (!item.is_string()) {
          item = item.dump();
        }
      }
      return ok;
    }
    case ValueType::Map:
      if (!value.is_object()) return wrong("a map");
      for (auto& [k, v] : value.items())
        if (!v.is_string() && !v.is_object() && !v.is_array() && !v.is_null()) v = v.dump();
      break;
    case ValueType::Object: {
      if (!value.is_object()) return wrong("a map");
      bool ok = true;
      Keys names;
      for (const auto& f : spec.fields) names.push_back(f.name);
      for (auto& [k, v] : value.items()) {
        auto f = std::find_if(spec.fields.begin(), spec.fields.end(),
                              [&k = k](const SettingSpec& x) { return x.name == k; });  // clang 14: no bindings in lambdas
        if (f == spec.fields.end()) {
          diags_.push_back({"BP002", Severity::Error, "unknown key '" + path + "." + k + "' in " + label,
                            where(path + "." + k), "", suggest(k, names)});
          ok = false;
          continue;
        }
        ok = check_setting(*f, v, path + "." + k, locs, label) && ok;
      }
      for (const auto& f : spec.fields)
        if (f.required && !value.contains(f.name)) {
          diags_.push_back({"BP004", Severity::Error, "missing required field '" + path + "." + f.name + "' in " + label,
                            where(path), "", "add '" + f.name + ":' (" + f.description + ")"});
          ok = false;
        }
      return ok;
    }
  }
  if (!spec.allowed.empty() && value.is_string()) {
    const std::string v = value.get<std::string>();
    if (std::find(spec.allowed.begin(), spec.allowed.end(), v) == spec.allowed.end()) {
      diags_.push_back({"BP005", Severity::Error,
                        "invalid " + path + " '" + v + "' in " + label + " (expected one of: " + join(spec.allowed, ", ") +
                            ")",
                        where(path), "", suggest(v, spec.allowed)});
      return false;
    }
  }
  return true;
}

void Loader::check_providers(const LoadOptions& options) {
  SchemaRegistry& registry = schema_registry();
  std::set<std::string> tried;
  auto resolve = [&](const std::string& name, const SourceLoc& at) -> bool {
    if (registry.provider(name)) return true;
    if (tried.count(name)) return false;
    tried.insert(name);
    if (!options.resolve_provider) return false;
    const ProviderDecl* decl = bp_.find_provider(name);
    Status st = options.resolve_provider(name, decl);
    if (!st) {
      diags_.push_back({"BP011", Severity::Error, st.error().message, decl ? decl->origin.loc : at, "",
                        "see docs/plugins.md for where plinth looks for plugins"});
      return false;
    }
    return registry.provider(name) != nullptr;
  };
  for (const ProviderDecl& d : bp_.providers) resolve(d.name, d.origin.loc);

  for (PendingPool& pp : pending_) {
    const bool burst = std::string_view(pp.section) == "burst_pools";
    const bool monitoring = std::string_view(pp.section) == "monitoring";
    std::string& provider = monitoring ? bp_.monitoring->provider
                            : burst    ? bp_.burst_pools[pp.index].provider
                                       : bp_.node_pools[pp.index].provider;
    Json& settings = monitoring ? bp_.monitoring->settings
                     : burst    ? bp_.burst_pools[pp.index].settings
                                : bp_.node_pools[pp.index].settings;
    Origin& origin = monitoring ? bp_.monitoring->origin
                     : burst    ? bp_.burst_pools[pp.index].origin
                                : bp_.node_pools[pp.index].origin;
    const Keys serving = registry.providers_for(pp.section);

    // Keys no provider could explain are reported now, whatever the provider.
    auto report_unknown = [&](const std::vector<SettingSpec>& settings_specs) {
      Keys names = *pp.own;
      for (const auto& st : settings_specs) names.push_back(st.name);
      for (const auto& [key, at] : pp.keys)
        if (std::none_of(settings_specs.begin(), settings_specs.end(),
                         [&key = key](const SettingSpec& x) { return x.name == key; }))
          diags_.push_back({"BP002", Severity::Error, "unknown key '" + key + "' in " + pp.label, at, "",
                            suggest(key, names)});
    };

    if (provider.empty()) {
      provider = registry.default_provider(pp.section);
      if (provider.empty()) {
        if (burst || monitoring) continue;  // reported already / nothing to check
        diags_.push_back({"BP004", Severity::Error, "missing required field 'provider' in " + pp.label, pp.at, "",
                          "no provider serves " + std::string(pp.section) + " by default; name one: " +
                              join(serving, ", ")});
        continue;
      }
    }
    if (!resolve(provider, pp.provider_at)) {
      std::string hint = suggest(provider, serving);
      if (hint.empty()) hint = "providers serving " + std::string(pp.section) + ": " + join(serving, ", ");
      if (!tried.count(provider) || !options.resolve_provider)
        diags_.push_back({"BP005", Severity::Error,
                          "unknown provider '" + provider + "' in " + pp.label + " (expected one of: " +
                              join(serving, ", ") + ")",
                          pp.provider_at, "", hint + "; or install the plugin plinth-provider-" + provider +
                                                  " (docs/plugins.md)"});
      report_unknown({});
      continue;
    }
    const SectionSpec* spec = registry.section(pp.section, provider);
    if (!spec) {
      std::string other = burst ? "node_pools" : "burst_pools";
      const SectionSpec* there = monitoring ? nullptr : registry.section(other, provider);
      diags_.push_back({"BP005", Severity::Error,
                        "provider '" + provider + "' does not serve " + pp.section + " (" + pp.label + ")",
                        pp.provider_at, "",
                        there ? "provider " + provider + " serves " + other + ": move the pool there"
                              : "providers serving " + std::string(pp.section) + ": " + join(serving, ", ")});
      report_unknown({});
      continue;
    }
    report_unknown(spec->settings);
    Json out = Json::object();
    for (const auto& st : spec->settings) {
      if (!pp.values.contains(st.name)) {
        if (st.required)
          diags_.push_back({"BP004", Severity::Error, "missing required field '" + st.name + "' in " + pp.label, pp.at,
                            "", "add '" + st.name + ":' (" + st.description + ")"});
        continue;
      }
      Json v = pp.values[st.name];
      if (check_setting(st, v, st.name, pp.locs, pp.label)) out[st.name] = std::move(v);
    }
    for (const auto& [path, at] : pp.locs) origin.fields[path] = at;
    settings = std::move(out);
  }
}

}  // namespace plinth::bp::detail
