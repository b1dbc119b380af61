#include "engine/run/policy_gate.h"

#include <cstdlib>
#include <filesystem>

#include "engine/blueprint/json.h"
#include "engine/core/embedded.h"
#include "engine/policy/waivers.h"
#include "engine/state/state.h"

namespace fs = std::filesystem;

namespace plinth::run {

std::string builtin_policy_dir() { return std::string(kBuiltinPolicyDir); }

std::vector<std::string> policy_dirs(const PolicyOptions& options) {
  std::vector<std::string> dirs = {builtin_policy_dir()};
  if (const char* env = std::getenv("PLINTH_POLICY_DIR"); env && *env) {
    std::string list = env;
    for (size_t start = 0; start <= list.size();) {
      size_t colon = list.find(':', start);
      if (colon == std::string::npos) colon = list.size();
      if (colon > start) dirs.push_back(list.substr(start, colon - start));
      start = colon + 1;
    }
  }
  for (const auto& d : options.extra_dirs) dirs.push_back(d);
  return dirs;
}

policy::Limits policy_limits(Events& events) {
  policy::Limits limits;
  if (const char* env = std::getenv("PLINTH_POLICY_TIMEOUT"); env && *env) {
    auto d = state::parse_duration(env);
    if (d && d->count() > 0)
      limits.deadline = *d;
    else
      events.warning("warning: ignoring PLINTH_POLICY_TIMEOUT='" + std::string(env) + "': " +
                     (d ? std::string("it must be more than 0") : d.error().message) + "; policies keep the " +
                     policy::duration_text(limits.deadline) + " limit");
  }
  return limits;
}

std::string blueprint_dir(const std::vector<std::string>& paths) {
  if (paths.empty()) return ".";
  std::error_code ec;
  if (fs::is_directory(paths.front(), ec)) return paths.front();
  fs::path parent = fs::path(paths.front()).parent_path();
  return parent.empty() ? "." : parent.string();
}

PolicyOutcome run_policies(const Loaded& loaded, const graph::ResourceGraph& graph, const plan::Plan& plan,
                           const std::vector<std::string>& policy_dirs, const std::string& blueprint_dir,
                           Events& events) {
  policy::Input in;
  in.blueprint = &loaded.blueprint;
  in.blueprint_json = bp::to_json(loaded.blueprint);
  in.resources = &graph.resources;
  in.plan = &plan;
  PolicyOutcome out;
  policy::Options options;
  options.limits = policy_limits(events);
  out.evaluation = policy::evaluate(policy_dirs, in, options);
  policy::Evaluation& eval = out.evaluation;

  const std::string waivers_path = (fs::path(blueprint_dir) / "waivers.yaml").string();
  auto waivers = policy::load_waivers(waivers_path);
  eval.diagnostics.insert(eval.diagnostics.end(), waivers.diagnostics.begin(), waivers.diagnostics.end());
  policy::apply_waivers(waivers.waivers, policy::today_utc(), eval);

  PolicyChecked checked;
  checked.evaluation = &eval;
  checked.waivers_path = waivers_path;
  for (const auto& v : eval.verdicts) {
    const policy::PolicyInfo* p = eval.find(v.policy);
    if (!p) continue;
    switch (v.outcome) {
      case policy::Outcome::Fail: (p->mandatory() ? checked.mandatory : checked.advisory)++; break;
      case policy::Outcome::Error: checked.errors++; break;
      case policy::Outcome::Waived: checked.waived++; break;
      case policy::Outcome::Pass:
      case policy::Outcome::NotApplicable: break;
    }
  }
  out.blocked = checked.blocked = eval.blocked();
  events.policy_checked(checked);
  return out;
}

}  // namespace plinth::run
