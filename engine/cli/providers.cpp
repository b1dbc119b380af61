#include "engine/cli/providers.h"

#include "engine/cli/plugins.h"
#include "engine/cli/untrusted.h"
#include "engine/core/strings.h"
#include "engine/provider/registry.h"
#include "providers/registry/registry.h"

namespace plinth::cli {

FlagSpec provider_option_flag() {
  return {"provider-option", "NAME.KEY=VALUE",
          "Set a provider option, e.g. PROVIDER.ca_bundle=/etc/ssl/my-ca.pem (overrides PLINTH_<NAME>_<KEY>; "
          "'plinth providers' lists every option).",
          true};
}

Result<ProviderConfig> provider_config(const ProviderSchema& schema, const Args& args,
                                       const std::vector<bp::ProviderDecl>& declarations) {
  std::vector<OptionInput> from_blueprint;
  for (const auto& d : declarations) {
    if (d.name != schema.name) continue;
    for (const auto& [key, value] : d.options) {
      const std::string at = d.origin.at("options." + key).str();
      // Under --untrusted the blueprint is the pull request's: it may not
      // say where requests and credentials go (docs/security.md).
      if (auto spec = schema.option(key); spec && spec->operator_only && untrusted().on)
        return Error::invalid(at + ": untrusted plan: the blueprint sets providers." + schema.name + ".options." +
                              key + ", which says where requests and credentials go; under --untrusted it comes only "
                              "from the environment, --provider-option or the trust file (providers: {" +
                              schema.name + ": {" + key + ": ...}})");
      from_blueprint.push_back({key, value, "blueprint " + at});
    }
  }
  if (untrusted().on)
    if (auto it = untrusted().trust.options.find(schema.name); it != untrusted().trust.options.end())
      for (const auto& [key, value] : it->second)
        from_blueprint.push_back({key, value, "trust file " + untrusted().trust.path});
  std::vector<std::string> flags = args.all("provider-option");
  // apply --force-conflicts: every provider that tracks field ownership
  // (declares the option force_conflicts) takes over fields others own.
  if (args.flag("force-conflicts") && schema.option("force_conflicts"))
    flags.push_back(schema.name + ".force_conflicts=true");
  return parse_provider_config(schema, process_environment(), from_blueprint, flags);
}

ProviderSet::~ProviderSet() {
  for (auto& [name, p] : providers_) p->close();
}

Status ProviderSet::open(const std::set<std::string>& names) {
  for (const auto& name : names) {
    if (providers_.count(name)) continue;
    const ProviderSchema* schema = schema_registry().provider(name);
    if (!schema && !plugins().resolve(name, nullptr))
      return Error::invalid("provider " + name + ": " + plugins().why(name));
    schema = schema_registry().provider(name);
    if (!schema) return Error::invalid("provider " + name + ": unknown provider");
    std::unique_ptr<Provider> p;
    if (schema->source == "built-in") {
      auto made = make_builtin_provider(name);
      if (!made) return Error::invalid("provider " + name + ": " + made.error().message);
      p = std::move(*made);
    } else {
      auto made = plugins().take(name);
      if (!made) return Error::invalid("provider " + name + ": " + made.error().message);
      p = std::move(*made);
    }
    auto config = provider_config(*schema, args_, declarations_);
    if (!config) return config.error();
    if (auto st = p->configure(*config); !st) {
      p->close();
      return Error::invalid("provider " + name + ": " + st.error().message);
    }
    limits_[name] = apply::limits_from(*config);
    if (binding_) p->bind(*binding_);
    providers_[name] = std::move(p);
  }
  return {};
}

void ProviderSet::bind(const StateBinding& binding) {
  if (binding_ && *binding_ == binding) return;
  binding_ = binding;
  for (auto& [name, p] : providers_) p->bind(binding);
}

Status ProviderSet::check_options(const std::set<std::string>& used) const {
  std::set<std::string> names = used;
  for (const auto& f : args_.all("provider-option")) {
    const std::string name = f.substr(0, f.find('.'));
    if (schema_registry().provider(name) || plugins().resolve(name, nullptr)) {
      names.insert(name);
      continue;
    }
    std::vector<std::string> known;
    for (const ProviderSchema* s : schema_registry().providers()) known.push_back(s->name);
    std::string msg = "--provider-option " + f.substr(0, f.find('=')) + ": there is no provider '" + name + "'";
    if (auto hint = closest_match(name, known)) msg += "; did you mean '" + *hint + "'?";
    else msg += " (plinth providers lists them)";
    return Error::invalid(msg);
  }
  for (const auto& name : names)
    if (const ProviderSchema* schema = schema_registry().provider(name))
      if (auto config = provider_config(*schema, args_, declarations_); !config) return config.error();
  return {};
}

Provider* ProviderSet::get(const std::string& name) const {
  auto it = providers_.find(name);
  return it == providers_.end() ? nullptr : it->second.get();
}

apply::ProviderLookup ProviderSet::lookup() const {
  return [this](const std::string& name) { return get(name); };
}

apply::LimitsLookup ProviderSet::limits_lookup() const {
  return [this](const std::string& name) {
    auto it = limits_.find(name);
    return it == limits_.end() ? apply::ProviderLimits{} : it->second;
  };
}

}  // namespace plinth::cli
