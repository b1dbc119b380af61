#include "engine/cli/providers.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "providers/registry/registry.h"

extern char** environ;

namespace plinth::cli {

FlagSpec provider_option_flag() {
  return {"provider-option", "NAME.KEY=VALUE",
          "Set a provider option, e.g. baremetal.ca_bundle=/etc/plinth/bmc-ca.pem (overrides "
          "PLINTH_<NAME>_<KEY>).",
          true};
}

Result<ProviderConfig> provider_config(const std::string& name, const Args& args) {
  ProviderConfig c;
  c.name = name;
  std::string prefix = "PLINTH_";
  for (char ch : name) prefix += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  prefix += '_';
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos || kv.substr(0, prefix.size()) != prefix || eq <= prefix.size()) continue;
    std::string key(kv.substr(prefix.size(), eq - prefix.size()));
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    c.options[key] = std::string(kv.substr(eq + 1));
  }
  for (const auto& opt : args.all("provider-option")) {
    auto dot = opt.find('.');
    auto eq = opt.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot == 0 || eq < dot + 2)
      return Error::invalid("--provider-option '" + opt +
                            "' is not NAME.KEY=VALUE (for example baremetal.ca_bundle=/etc/plinth/bmc-ca.pem)");
    if (opt.substr(0, dot) != name) continue;
    c.options[opt.substr(dot + 1, eq - dot - 1)] = opt.substr(eq + 1);
  }
  return c;
}

Result<apply::ProviderLimits> provider_limits(const ProviderConfig& config) {
  apply::ProviderLimits l;
  auto number = [&](const char* key, double& out, double min) -> Status {
    auto it = config.options.find(key);
    if (it == config.options.end()) return {};
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0' || v < min)
      return Error::invalid("provider " + config.name + " option " + key + "='" + it->second +
                            "' is not a number >= " + std::to_string(static_cast<int>(min)));
    out = v;
    return {};
  };
  double concurrency = 0;
  if (auto s = number("concurrency", concurrency, 0); !s) return s.error();
  if (auto s = number("rate", l.rate_per_second, 0); !s) return s.error();
  if (auto s = number("burst", l.burst, 1); !s) return s.error();
  l.concurrency = static_cast<int>(concurrency);
  return l;
}

Status ProviderSet::open(const std::set<std::string>& names) {
  for (const auto& name : names) {
    if (name == "plinth" || providers_.count(name)) continue;
    auto config = provider_config(name, args_);
    if (!config) return config.error();
    auto limits = provider_limits(*config);
    if (!limits) return limits.error();
    auto p = make_provider(*config);
    if (!p) return Error::invalid("provider " + name + ": " + p.error().message);
    providers_[name] = std::move(*p);
    limits_[name] = *limits;
  }
  return {};
}

Provider* ProviderSet::get(const std::string& name) const {
  auto it = providers_.find(name);
  return it == providers_.end() ? nullptr : it->second.get();
}

apply::ProviderLookup ProviderSet::lookup() const {
  return [this](const std::string& name) { return get(name); };
}

}  // namespace plinth::cli
