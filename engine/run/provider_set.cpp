#include "engine/run/provider_set.h"

#include "engine/core/strings.h"

namespace plinth::run {

Result<ProviderConfig> provider_config(const ProviderSchema& schema, const ProviderOptions& options,
                                       const std::vector<bp::ProviderDecl>& declarations) {
  std::vector<OptionInput> from_blueprint;
  for (const auto& d : declarations) {
    if (d.name != schema.name) continue;
    for (const auto& [key, value] : d.options) {
      const std::string at = d.origin.at("options." + key).str();
      // Under --untrusted the blueprint is the pull request's: it may not
      // say where requests and credentials go (docs/security.md).
      if (auto spec = schema.option(key); spec && spec->operator_only && options.untrusted)
        return Error::invalid(at + ": untrusted plan: the blueprint sets providers." + schema.name + ".options." +
                              key + ", which says where requests and credentials go; under --untrusted it comes only "
                              "from the environment, --provider-option or the trust file (providers: {" +
                              schema.name + ": {" + key + ": ...}})");
      from_blueprint.push_back({key, value, "blueprint " + at});
    }
  }
  if (options.untrusted)
    if (auto it = options.untrusted->options.find(schema.name); it != options.untrusted->options.end())
      for (const auto& [key, value] : it->second)
        from_blueprint.push_back({key, value, "trust file " + options.untrusted->path});
  std::vector<std::string> flags = options.overrides;
  // apply --force-conflicts: every provider that tracks field ownership
  // (declares the option force_conflicts) takes over fields others own.
  if (options.force_conflicts && schema.option("force_conflicts"))
    flags.push_back(schema.name + ".force_conflicts=true");
  return parse_provider_config(schema, process_environment(), from_blueprint, flags);
}

ProviderSet::~ProviderSet() {
  for (auto& [name, p] : providers_) p->close();
}

Status ProviderSet::open(const std::set<std::string>& names) {
  for (const auto& name : names) {
    if (providers_.count(name)) continue;
    if (auto st = factory_.resolve(name, nullptr); !st) return Error::invalid("provider " + name + ": " + st.error().message);
    const ProviderSchema* schema = factory_.schema(name);
    if (!schema) return Error::invalid("provider " + name + ": unknown provider");
    auto made = factory_.make(name);
    if (!made) return Error::invalid("provider " + name + ": " + made.error().message);
    std::unique_ptr<Provider> p = std::move(*made);
    auto config = provider_config(*schema, options_, declarations_);
    if (!config) {
      p->close();
      return config.error();
    }
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
  for (const auto& f : options_.overrides) {
    const std::string name = f.substr(0, f.find('.'));
    if (factory_.schema(name) || factory_.resolve(name, nullptr)) {
      names.insert(name);
      continue;
    }
    std::vector<std::string> known;
    for (const ProviderSchema* s : factory_.schemas()) known.push_back(s->name);
    std::string msg = "--provider-option " + f.substr(0, f.find('=')) + ": there is no provider '" + name + "'";
    if (auto hint = closest_match(name, known)) msg += "; did you mean '" + *hint + "'?";
    else msg += " (plinth providers lists them)";
    return Error::invalid(msg);
  }
  for (const auto& name : names)
    if (const ProviderSchema* schema = factory_.schema(name))
      if (auto config = provider_config(*schema, options_, declarations_); !config) return config.error();
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

std::set<std::string> providers_of(const std::vector<Resource>& desired, const std::vector<Resource>& state) {
  std::set<std::string> names;
  for (const auto* list : {&desired, &state})
    for (const auto& r : *list) names.insert(r.provider);
  return names;
}

}  // namespace plinth::run
