#include "engine/cli/policy_gate.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "engine/blueprint/json.h"
#include "engine/core/embedded.h"
#include "engine/policy/listing.h"
#include "engine/policy/waivers.h"
#include "engine/state/state.h"

namespace fs = std::filesystem;

namespace plinth::cli {

std::string builtin_policy_dir() { return std::string(kBuiltinPolicyDir); }

std::vector<std::string> policy_dirs(const Args& args) {
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
  for (const auto& d : args.all("policy-dir")) dirs.push_back(d);
  return dirs;
}

policy::Limits policy_limits(Io& io) {
  policy::Limits limits;
  if (const char* env = std::getenv("PLINTH_POLICY_TIMEOUT"); env && *env) {
    auto d = state::parse_duration(env);
    if (d && d->count() > 0)
      limits.deadline = *d;
    else
      std::fprintf(io.err, "warning: ignoring PLINTH_POLICY_TIMEOUT='%s': %s; policies keep the %s limit\n", env,
                   d ? "it must be more than 0" : d.error().message.c_str(),
                   policy::duration_text(limits.deadline).c_str());
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

namespace {

std::string describe(const policy::PolicyInfo& p) {
  std::string controls = policy::controls_text(p);
  return "  policy " + p.id + " (" + p.enforcement + ", " + p.severity + "): " + p.title +
         (controls.empty() ? "" : " [" + controls + "]") + "\n";
}

}  // namespace

PolicyOutcome run_policies(const Loaded& loaded, const graph::ResourceGraph& graph, const plan::Plan& plan,
                           const std::vector<std::string>& policy_dirs, const std::string& blueprint_dir, Io& io) {
  policy::Input in;
  in.blueprint = &loaded.blueprint;
  in.blueprint_json = bp::to_json(loaded.blueprint);
  in.resources = &graph.resources;
  in.plan = &plan;
  PolicyOutcome out;
  policy::Options options;
  options.limits = policy_limits(io);
  out.evaluation = policy::evaluate(policy_dirs, in, options);
  policy::Evaluation& eval = out.evaluation;

  auto waivers = policy::load_waivers((fs::path(blueprint_dir) / "waivers.yaml").string());
  eval.diagnostics.insert(eval.diagnostics.end(), waivers.diagnostics.begin(), waivers.diagnostics.end());
  policy::apply_waivers(waivers.waivers, policy::today_utc(), eval);

  bool color = io.err_tty && !std::getenv("NO_COLOR");
  print_diagnostics(eval.diagnostics, io);
  int mandatory = 0, advisory = 0, waived = 0, errors = 0;
  for (const auto& v : eval.verdicts) {
    const policy::PolicyInfo* p = eval.find(v.policy);
    if (!p || v.outcome == policy::Outcome::Pass) continue;
    Diagnostic d{v.policy, Severity::Warning, v.message, v.loc, v.address, ""};
    switch (v.outcome) {
      case policy::Outcome::Fail:
        d.severity = p->mandatory() ? Severity::Error : Severity::Warning;
        (p->mandatory() ? mandatory : advisory)++;
        break;
      case policy::Outcome::Error:
        d.severity = p->mandatory() ? Severity::Error : Severity::Warning;
        d.message = "policy " + v.policy + " could not run: " + v.message;
        d.hint = "fix the policy; a mandatory policy that cannot run blocks like a failure";
        errors++;
        break;
      case policy::Outcome::Waived:
        d.severity = Severity::Info;
        d.message = "waived: " + v.message;
        d.hint = "waiver at " + v.waiver_loc.str() + ": " + v.waiver_justification + " (approved by " +
                 v.waiver_approver + ")";
        waived++;
        break;
      case policy::Outcome::Pass: break;
    }
    std::string text = format_diagnostic(d, color) + describe(*p);
    std::fputs(text.c_str(), io.err);
  }
  out.blocked = eval.blocked();
  std::fprintf(io.err,
               "policy check: %zu policies run, %d mandatory failure(s), %d advisory warning(s), %d waived, %d "
               "error(s)%s\n",
               eval.policies.size(), mandatory, advisory, waived, errors,
               eval.skipped.empty()
                   ? ""
                   : ("; " + std::to_string(eval.skipped.size()) + " not selected by metadata.compliance").c_str());
  // A waiver accepts a policy's failure; it cannot fix a broken pack or
  // waivers file, so it is only offered when a policy failed.
  if (out.blocked && mandatory > 0)
    std::fprintf(io.err,
                 "policy check failed: fix the errors above, or accept a failure with a waiver in %s\n",
                 (fs::path(blueprint_dir) / "waivers.yaml").string().c_str());
  else if (out.blocked)
    std::fprintf(io.err, "policy check failed: fix the errors above (docs/policy-authoring.md)\n");
  return out;
}

}  // namespace plinth::cli
