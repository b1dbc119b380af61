#include "engine/provider/options.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "engine/core/duration.h"
#include "engine/core/strings.h"

extern char** environ;

namespace plinth {

bool ProviderConfig::is_set(const std::string& option) const {
  auto it = origins.find(option);
  return it != origins.end() && it->second != "default";
}

std::string ProviderConfig::str(const std::string& option) const {
  auto it = values.find(option);
  return it != values.end() && it->is_string() ? it->get<std::string>() : "";
}

bool ProviderConfig::flag(const std::string& option) const {
  auto it = values.find(option);
  return it != values.end() && it->is_boolean() && it->get<bool>();
}

int64_t ProviderConfig::integer(const std::string& option) const {
  auto it = values.find(option);
  return it != values.end() && it->is_number() ? it->get<int64_t>() : 0;
}

double ProviderConfig::number(const std::string& option) const {
  auto it = values.find(option);
  return it != values.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::chrono::milliseconds ProviderConfig::duration(const std::string& option) const {
  return std::chrono::milliseconds(integer(option));
}

std::vector<std::string> ProviderConfig::list(const std::string& option) const {
  std::vector<std::string> out;
  auto it = values.find(option);
  if (it == values.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string option_env_prefix(const std::string& name) {
  std::string prefix = "PLINTH_";
  for (char ch : name) prefix += ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return prefix + "_";
}

std::string option_var(const std::string& name, const std::string& option) {
  std::string var = option_env_prefix(name);
  for (char ch : option) var += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return var;
}

std::vector<std::string> process_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

namespace {

/// `text` as a value of `spec`'s type, or an error naming the option.
Result<Json> typed(const std::string& provider, const OptionSpec& spec, const std::string& text,
                   const std::string& origin) {
  auto bad = [&](const std::string& expected) {
    return Error::invalid("provider " + provider + " option " + spec.name + " = '" + text + "' (" + origin +
                          ") is not " + expected);
  };
  Json v;
  switch (spec.type) {
    case ValueType::Any:
    case ValueType::String: v = text; break;
    case ValueType::Bool: {
      std::string t;
      for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (t == "true" || t == "1" || t == "yes" || t == "on") v = true;
      else if (t == "false" || t == "0" || t == "no" || t == "off" || t.empty()) v = false;
      else return bad("a bool (true or false)");
      break;
    }
    case ValueType::Int: {
      int64_t n = 0;
      std::string t = trim(text);
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
      if (t.empty() || ec != std::errc() || p != t.data() + t.size() || n < 0)
        return bad("an integer (a whole number >= 0)");
      v = n;
      break;
    }
    case ValueType::Number: {
      double n = 0;
      std::string t = trim(text);
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
      if (t.empty() || ec != std::errc() || p != t.data() + t.size() || !std::isfinite(n) || n < 0)
        return bad("a number >= 0");
      v = n;
      break;
    }
    case ValueType::Duration: {
      auto d = parse_duration(trim(text));
      if (!d) return bad("a duration (500ms, 30s, 2m, 1h or 1m30s)");
      v = static_cast<int64_t>(d->count());
      break;
    }
    case ValueType::StringList: {
      Json list = Json::array();
      size_t start = 0;
      while (start <= text.size()) {
        size_t comma = text.find(',', start);
        std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!item.empty()) list.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      v = std::move(list);
      break;
    }
    case ValueType::Map:
    case ValueType::Object: {
      // KEY=VALUE,KEY=VALUE
      Json map = Json::object();
      size_t start = 0;
      while (start < text.size()) {
        size_t comma = text.find(',', start);
        std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!item.empty()) {
          auto eq = item.find('=');
          if (eq == std::string::npos || eq == 0) return bad("a map written KEY=VALUE,KEY=VALUE");
          map[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      v = std::move(map);
      break;
    }
  }
  if (!spec.allowed.empty() && v.is_string()) {
    const std::string s = v.get<std::string>();
    bool ok = false;
    for (const auto& a : spec.allowed) ok = ok || a == s;
    if (!ok) {
      std::string msg = "provider " + provider + " option " + spec.name + " = '" + text + "' (" + origin +
                        ") is not one of " + join(spec.allowed, ", ");
      if (auto hint = closest_match(s, spec.allowed)) msg += "; did you mean '" + *hint + "'?";
      return Error::invalid(msg);
    }
  }
  return v;
}

Error unknown_option(const ProviderSchema& schema, const std::string& key, const std::string& origin) {
  std::vector<std::string> names;
  for (const auto& o : schema.all_options()) names.push_back(o.name);
  std::string msg = "provider " + schema.name + " has no option '" + key + "' (" + origin + ")";
  if (auto hint = closest_match(key, names)) msg += "; did you mean '" + *hint + "'?";
  else msg += "; its options are " + join(names, ", ");
  if (!schema.docs.empty()) msg += " (" + schema.docs + ")";
  return Error::invalid(msg);
}

}  // namespace

Result<ProviderConfig> parse_provider_config(const ProviderSchema& schema, const std::vector<std::string>& environment,
                                             const std::vector<OptionInput>& blueprint,
                                             const std::vector<std::string>& flags) {
  ProviderConfig c;
  c.name = schema.name;
  const std::vector<OptionSpec> options = schema.all_options();
  auto find = [&](const std::string& key) -> const OptionSpec* {
    for (const auto& o : options)
      if (o.name == key) return &o;
    return nullptr;
  };
  auto set = [&](const OptionSpec& spec, const std::string& text, const std::string& origin) -> Status {
    auto v = typed(schema.name, spec, text, origin);
    if (!v) return v.error();
    c.values[spec.name] = std::move(*v);
    c.origins[spec.name] = origin;
    return {};
  };
  std::map<std::string, std::string> env;
  for (const auto& e : environment) {
    auto eq = e.find('=');
    if (eq != std::string::npos && eq > 0) env.emplace(e.substr(0, eq), e.substr(eq + 1));
  }

  // 1. defaults
  for (const auto& o : options)
    if (!o.default_value.empty())
      if (auto st = set(o, o.default_value, "default"); !st) return st.error();
  // 2. the vendor's own variables
  for (const auto& o : options)
    for (const auto& var : o.env)
      if (auto it = env.find(var); it != env.end()) {
        if (auto st = set(o, it->second, "environment " + var); !st) return st.error();
        break;
      }
  // 3. the blueprint
  for (const auto& in : blueprint) {
    const OptionSpec* o = find(in.key);
    if (!o) return unknown_option(schema, in.key, in.origin);
    if (o->secret) {
      const std::string var = option_var(schema.name, in.key);
      return Error::invalid("provider " + schema.name + " option " + in.key + " (" + in.origin +
                            ") is a secret and must not be written in a blueprint; set " +
                            (o->env.empty() ? var : join(o->env, " or ") + " or " + var) + " instead");
    }
    if (auto st = set(*o, in.value, in.origin); !st) return st.error();
  }
  // 4. PLINTH_<NAME>_<KEY>
  const std::string prefix = option_env_prefix(schema.name);
  for (const auto& [var, value] : env) {
    if (var.size() <= prefix.size() || var.compare(0, prefix.size(), prefix) != 0) continue;
    std::string key;
    for (char ch : var.substr(prefix.size())) key += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const OptionSpec* o = find(key);
    if (!o) return unknown_option(schema, key, "environment variable " + var);
    if (auto st = set(*o, value, "environment " + var); !st) return st.error();
  }
  // 5. --provider-option NAME.KEY=VALUE
  for (const auto& f : flags) {
    auto eq = f.find('=');
    auto dot = f.find('.');
    if (dot == std::string::npos || eq == std::string::npos || dot == 0 || eq < dot + 2)
      return Error::invalid("--provider-option '" + f +
                            "' is not NAME.KEY=VALUE (for example PROVIDER.timeout_ms=5000; plinth providers lists every option)");
    if (f.substr(0, dot) != schema.name) continue;
    const std::string key = f.substr(dot + 1, eq - dot - 1);
    const OptionSpec* o = find(key);
    if (!o) return unknown_option(schema, key, "--provider-option " + f.substr(0, eq));
    if (auto st = set(*o, f.substr(eq + 1), "--provider-option"); !st) return st.error();
  }
  return c;
}

Json redacted_options(const ProviderSchema& schema, const ProviderConfig& config) {
  Json out = Json::object();
  for (const auto& [key, value] : config.values.items()) {
    auto o = schema.option(key);
    out[key] = o && o->secret ? Json("(secret)") : value;
  }
  return out;
}

}  // namespace plinth
