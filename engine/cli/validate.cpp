// plinth validate PATH...: load strictly, run the domain rules, then the
// policy gate on what it can judge without state (the blueprint, planned as
// if nothing existed yet).
#include <nlohmann/json.hpp>

#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/cli/render_events.h"
#include "engine/cli/untrusted.h"
#include "engine/graph/expand.h"
#include "engine/run/policy_gate.h"

namespace plinth::cli {
namespace {

/// Version of the `plinth validate --json` document (docs/rules.md).
constexpr const char* kValidateJsonVersion = "1.0";

nlohmann::json diagnostic_json(const Diagnostic& d) {
  nlohmann::json loc = nullptr;
  if (d.loc.known()) loc = {{"file", d.loc.file}, {"line", d.loc.line}, {"column", d.loc.column}};
  return {{"code", d.code},        {"severity", to_string(d.severity)}, {"message", d.message},
          {"hint", d.hint},        {"address", d.address},              {"location", loc}};
}

/// The policy verdicts as diagnostics: a mandatory failure (or a mandatory
/// policy that could not run) an error, an advisory one a warning, a waived
/// one an info.
Diagnostics verdict_diagnostics(const policy::Evaluation& eval) {
  Diagnostics out = eval.diagnostics;
  for (const auto& v : eval.verdicts) {
    const policy::PolicyInfo* p = eval.find(v.policy);
    if (p && policy::is_finding(v.outcome)) out.push_back(verdict_diagnostic(v, *p));
  }
  return out;
}

/// Collects the policy step's outcome for --json.
class PolicyCollector : public run::Events {
 public:
  void diagnostics(const Diagnostics& ds) override { diags.insert(diags.end(), ds.begin(), ds.end()); }
  void policy_checked(const run::PolicyChecked& c) override {
    auto v = verdict_diagnostics(*c.evaluation);
    diags.insert(diags.end(), v.begin(), v.end());
    policies = c.evaluation->policies.size();
    mandatory = c.mandatory;
  }
  Diagnostics diags;
  size_t policies = 0;
  int mandatory = 0;
};

/// The human view of validate's policy step: silent when every policy passed
/// (the one line on stdout says the blueprint is valid), else as plan shows it.
class QuietWhenClean : public HumanView {
 public:
  using HumanView::HumanView;
  void policy_checked(const run::PolicyChecked& c) override {
    const bool clean = c.mandatory == 0 && c.advisory == 0 && c.waived == 0 && c.errors == 0 && !c.blocked &&
                       c.evaluation->diagnostics.empty();
    if (!clean) HumanView::policy_checked(c);
  }
};

/// The policy gate over a blueprint that validated: it is expanded and
/// planned against an empty state, so every policy that reads the blueprint
/// or the resources judges it as plan would (the ones that look at changes
/// see every resource created). True when it blocks.
bool policy_gate(const Args& args, const Loaded& loaded, run::Events& events) {
  auto expanded = graph::expand(loaded.blueprint);
  if (!expanded) {
    events.error(expanded.error().message);
    return true;
  }
  // The plan's resources are the graph's, shared, not copied.
  auto desired = std::make_shared<const graph::ResourceGraph>(std::move(*expanded));
  static const std::vector<Resource> kNothing;
  plan::Plan p = plan::diff_sharing(std::shared_ptr<const std::vector<Resource>>(desired, &desired->resources), kNothing);
  return run::run_policies(loaded, *desired, p, run::policy_dirs(policy_options(args)),
                           run::blueprint_dir(args.positional), events)
      .blocked;
}

/// --json: one document on stdout whatever the outcome; the exit code says
/// whether the blueprint is valid.
int validate_json(const Args& args, Io& io) {
  Checked c = check_blueprint(args.positional);
  if (!c.fatal.empty()) return fail(io, "validate", c.fatal);
  bool blocked = false;
  nlohmann::json policies = nullptr;
  if (c.loaded && !args.flag("no-policies")) {
    PolicyCollector collect;
    blocked = policy_gate(args, *c.loaded, collect);
    c.diagnostics.insert(c.diagnostics.end(), collect.diags.begin(), collect.diags.end());
    policies = {{"run", collect.policies}, {"mandatory_failures", collect.mandatory}, {"blocked", blocked}};
  }
  const bool valid = c.loaded.has_value() && !blocked;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : c.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}});
  nlohmann::json diags = nlohmann::json::array();
  for (const auto& d : c.diagnostics) diags.push_back(diagnostic_json(d));
  nlohmann::json bp = {{"files", files}};
  if (c.loaded) {
    bp["name"] = c.loaded->blueprint.metadata.name;
    bp["node_pools"] = c.loaded->blueprint.node_pools.size();
    bp["burst_pools"] = c.loaded->blueprint.burst_pools.size();
  }
  nlohmann::json j = {{"format_version", kValidateJsonVersion},
                      {"valid", valid},
                      {"blueprint", bp},
                      {"policies", policies},
                      {"summary",
                       {{"errors", count(c.diagnostics, Severity::Error)},
                        {"warnings", count(c.diagnostics, Severity::Warning)},
                        {"infos", count(c.diagnostics, Severity::Info)}}},
                      {"diagnostics", diags}};
  std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::fwrite(text.data(), 1, text.size(), io.out);
  return valid ? kExitSuccess : kExitFailure;
}

int run_validate(const Args& args, Io& io) {
  if (args.flag("json")) return validate_json(args, io);
  auto loaded = load_blueprint(args.positional, io);
  if (!loaded) return kExitFailure;
  const std::string name = loaded->blueprint.metadata.name.empty() ? "blueprint" : loaded->blueprint.metadata.name;
  if (!args.flag("no-policies")) {
    QuietWhenClean view(io, "validate");
    if (policy_gate(args, *loaded, view)) {
      std::fprintf(io.err, "%s is invalid: the policy gate above blocks it (plinth plan would stop here); "
                   "--no-policies checks the schema and the domain rules only.\n", name.c_str());
      return kExitFailure;
    }
  }
  size_t warnings = count(loaded->diagnostics, Severity::Warning);
  std::fprintf(io.out, "%s is valid: %zu node pool(s), %zu burst pool(s), %zu warning(s).\n", name.c_str(),
               loaded->blueprint.node_pools.size(), loaded->blueprint.burst_pools.size(), warnings);
  return kExitSuccess;
}

const Register validate_command({
    "validate",
    "plinth validate PATH... [--json] [--no-policies] [--policy-dir DIR]...",
    "Check blueprints: strict schema, references, GPU/ML domain rules and the policy gate.",
    "PATH is a blueprint file or a directory of *.yaml files; several are merged into one\n"
    "blueprint. Every error is printed with file:line:column and a hint (the loader's and\n"
    "the domain rules' together); warnings do not fail the run. Rule IDs are listed in\n"
    "docs/rules.md. A blueprint that passes them then goes through the policy gate as plan\n"
    "would run it, planned against an empty state (no state, no provider call): a\n"
    "mandatory policy that fails makes it invalid, unless --no-policies. --json prints one\n"
    "JSON document (format in docs/rules.md) with every diagnostic and verdict instead.\n"
    "Exit codes: 0 valid (warnings allowed), 1 invalid.",
    {
        {"json", "", "Print the result as JSON (docs/rules.md, \"validate --json\")."},
        {"no-policies", "", "Check the schema and the domain rules only, not the policy packs."},
        {"policy-dir", "DIR", "Also evaluate the policies in DIR (repeatable; docs/policy-authoring.md).", true},
        untrusted_flags()[0],
        untrusted_flags()[1],
    },
    run_validate,
    10,
});

}  // namespace
}  // namespace plinth::cli
