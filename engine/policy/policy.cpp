#include "engine/policy/policy.h"

#include <algorithm>
#include <set>

#include "engine/policy/isolation.h"
#include "engine/policy/runtime.h"

namespace plinth::policy {

PolicySet load_policies(const std::vector<std::string>& dirs, const Limits& limits) {
  RemoteRuntime rt(limits, nullptr);
  for (const auto& d : dirs) rt.load_settings(d);
  rt.load_dirs(dirs);
  return {rt.infos(), rt.files(), rt.hashes(), rt.diagnostics()};
}

std::vector<std::string> framework_names(const std::vector<PolicyInfo>& policies) {
  std::set<std::string> names;
  for (const auto& p : policies)
    for (const auto& [fw, ids] : p.controls) names.insert(fw);
  return {names.begin(), names.end()};
}

bool pack_applies(const std::string& pack, const std::vector<std::string>& frameworks,
                  const std::vector<std::string>& compliance) {
  if (std::find(frameworks.begin(), frameworks.end(), pack) == frameworks.end()) return true;
  return std::find(compliance.begin(), compliance.end(), pack) != compliance.end();
}

const PolicyInfo* Evaluation::find(const std::string& id) const {
  for (const auto& p : policies)
    if (p.id == id) return &p;
  return nullptr;
}

bool Evaluation::blocked() const {
  if (has_errors(diagnostics)) return true;
  for (const auto& v : verdicts) {
    if (v.outcome != Outcome::Fail && v.outcome != Outcome::Error) continue;
    const PolicyInfo* p = find(v.policy);
    if (p && p->mandatory()) return true;
  }
  return false;
}

Evaluation evaluate(const std::vector<std::string>& dirs, const Input& input, const Options& options) {
  RemoteRuntime rt(options.limits, &input);
  for (const auto& d : dirs) rt.load_settings(d);
  rt.load_dirs(dirs);
  Evaluation eval;
  eval.hashes = rt.hashes();
  const auto& all = rt.infos();
  auto frameworks = framework_names(all);
  std::vector<std::string> compliance;
  if (input.blueprint) compliance = input.blueprint->metadata.compliance;
  for (size_t i = 0; i < all.size(); ++i) {
    const PolicyInfo& info = all[i];
    if (!options.all_packs && !pack_applies(info.pack, frameworks, compliance)) {
      eval.skipped.push_back(info);
      continue;
    }
    eval.policies.push_back(info);
    auto vs = rt.run(i);
    eval.verdicts.insert(eval.verdicts.end(), vs.begin(), vs.end());
  }
  eval.diagnostics = rt.diagnostics();  // with any file that stopped loading after a sandbox restart
  return eval;
}

}  // namespace plinth::policy
