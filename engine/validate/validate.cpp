// The domain rules' entry points: rules(), every area's rules gathered into
// one list sorted by id, and validate(), which runs the Checker's areas in a
// fixed order (checker.h). The rules themselves are in stacks.cpp,
// networks.cpp, platform.cpp (what runs on a GPU), node_pools.cpp,
// burst_pools.cpp and storage.cpp.
#include "engine/validate/validate.h"

#include <algorithm>

#include "engine/provider/registry.h"
#include "engine/validate/checker.h"

namespace plinth::validate {

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> all = [] {
    std::vector<RuleInfo> v = {
        // stacks.cpp
        CUDA001, CUDA002, CUDA005, CUDA007, DRV005, DRV008, IMG001,
        // networks.cpp
        NET001, NET002, NET003, NET004, NET005, NET006, NET009,
        // platform.cpp
        CUDA003, CUDA004, CUDA006, DRV001, DRV002, DRV003, DRV004, GPU010,
        // node_pools.cpp
        BAL001, BAL002, BAL003, DRV006, DRV007, GPU001, IMEX001, GPU003, GPU004, GPU005,
        GPU006, GPU007, GPU008, GPU009, NET007, NET008, STO002,
        // burst_pools.cpp
        BURST001, BURST002, BURST003, BURST004, BURST005, GPU002, IMG002, IMG003,
        // storage.cpp
        STO001, STO003, STO004, STO005, STO006,
    };
    std::sort(v.begin(), v.end(), [](const RuleInfo& a, const RuleInfo& b) { return a.id < b.id; });
    return v;
  }();
  return all;
}

Checker::Checker(const bp::Blueprint& b, const catalog::Catalog& c) : bp_(b), cat_(c) {
  for (const auto& s : bp_.stacks) stacks_[s.name] = &s;
  for (const auto& f : bp_.fabrics) fabrics_[f.name] = &f;
  for (const auto& t : bp_.tiers) tiers_[t.name] = &t;
}

Diagnostics Checker::run() {
  for (const auto& s : bp_.stacks) check_stack(s);
  check_vlans();
  for (const auto& f : bp_.fabrics) check_fabric(f);
  for (const auto& p : bp_.node_pools) check_node_pool(p);
  for (const auto& p : bp_.burst_pools) check_burst_pool(p);
  check_fabric_use();
  check_nfs_use();
  check_lustre_nids();
  return std::move(out_);
}

void Checker::add(const RuleInfo& rule, const SourceLoc& loc, const std::string& address, std::string message,
                  std::string hint) {
  out_.push_back({rule.id, rule.severity, std::move(message), loc, address, std::move(hint)});
}

std::string Checker::pool_address(const char* section, const std::string& provider, const std::string& name) {
  const SectionSpec* spec = schema_registry().section(section, provider);
  return (spec ? spec->resource_type : provider + ".pool") + "." + name;
}

Diagnostics validate(const bp::Blueprint& blueprint, const catalog::Catalog& catalog) {
  return Checker(blueprint, catalog).run();
}

}  // namespace plinth::validate
