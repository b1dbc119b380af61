// plinth plan PATH...: what apply would change, resource by resource.
//
// The command is a fixed sequence of steps, each a library call; later
// features slot in between them without reshaping the command:
//   1. load      blueprint files -> validated Blueprint (diagnostics printed)
//   2. expand    Blueprint -> desired resources
//   3. state     lock the state backend, load the prior resources
//   3b. refresh  read them through their providers (unless --refresh=false)
//   4. diff      desired vs prior -> Plan
//      (steps 1-4 are run::plan in engine/run/plan.h, shared with apply and destroy)
//   4b. policies run::run_policies, then run::check_inventory
//   5. output    text or --json to stdout
//   5b. reports  --report FORMAT:FILE, -out PLANFILE [--sign-key], --against REF
//                (extras_after_plan below; docs/audit.md, docs/plan-files.md)
//   6. exit code 0 / 2 (--detailed-exitcode) / 1
#include <filesystem>

#include "engine/audit/compare.h"
#include "engine/audit/git_source.h"
#include "engine/audit/plan_view.h"
#include "engine/audit/provenance.h"
#include "engine/audit/report.h"
#include "engine/blueprint/json.h"
#include "engine/blueprint/loader.h"
#include "engine/cli/common.h"
#include "engine/cli/execute.h"
#include "engine/cli/options.h"
#include "engine/cli/render_events.h"
#include "engine/cli/untrusted.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/plan/format.h"
#include "engine/plan/planfile.h"
#include "engine/policy/waivers.h"
#include "engine/run/plan.h"
#include "engine/run/policy_gate.h"

namespace plinth::cli {
namespace {

using run::Planned;
using run::PolicyOutcome;

/// A view of the plan (docs/plan.md, "Views"): --format markdown|html on
/// stdout, --report plan-markdown:FILE / plan-html:FILE.
struct ViewTarget {
  std::string format;  ///< "markdown" | "html"
  std::string path;    ///< "-": stdout
};

/// The --report specs naming a plan view ("plan-markdown:FILE",
/// "plan-md:FILE", "plan-html:FILE"); the others are audit reports.
std::optional<ViewTarget> view_target(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos || colon + 1 == spec.size()) return std::nullopt;
  std::string format = spec.substr(0, colon);
  if (format == "plan-markdown" || format == "plan-md") return ViewTarget{"markdown", spec.substr(colon + 1)};
  if (format == "plan-html") return ViewTarget{"html", spec.substr(colon + 1)};
  return std::nullopt;
}

std::string render_view(const audit::PlanView& view, const std::string& format) {
  return format == "html" ? audit::plan_html(view) : audit::plan_markdown(view);
}

/// Writes the views to their files (and stdout for "-"); false after an
/// error is printed.
bool write_views(Io& io, const std::vector<ViewTarget>& targets, const audit::PlanView& view) {
  bool ok = true;
  for (const auto& t : targets) {
    std::string text = render_view(view, t.format);
    if (t.path == "-") {
      std::fwrite(text.data(), 1, text.size(), io.out);
      continue;
    }
    if (auto st = write_file_atomic(t.path, text); !st) {
      fail(io, "plan", "cannot write the plan's " + t.format + " view to " + t.path + ": " + st.error().message);
      ok = false;
    } else {
      std::fprintf(io.err, "wrote the plan's %s view to %s\n", t.format.c_str(), t.path.c_str());
    }
  }
  return ok;
}

/// --against REF: the blueprint files as they are at REF, expanded and
/// evaluated like the working tree, and what the change does to resources
/// and verdicts (printed to io.out).
int print_against(const Args& args, Io& io, const Planned& planned, const PolicyOutcome& policies) {
  const std::string ref = *args.get("against");
  std::vector<std::string> paths;
  for (const auto& f : planned.loaded.blueprint.files) paths.push_back(std::filesystem::absolute(f.path).string());
  auto snap = audit::read_at_ref(paths.front(), ref, paths);
  if (!snap) return fail(io, "plan", "--against " + ref + ": " + snap.error().message);
  auto base = bp::load_strings(snap->docs);
  if (!base.ok()) {
    print_diagnostics(base.diagnostics, io);
    return fail(io, "plan", "--against " + ref + ": the blueprint at " + ref + " does not load (errors above)");
  }
  auto base_graph = graph::expand(base.blueprint);
  if (!base_graph) return fail(io, "plan", "--against " + ref + ": " + base_graph.error().message);
  plan::Plan base_plan = plan::diff(base_graph->resources, planned.state_resources());
  policy::Input in;
  in.blueprint = &base.blueprint;
  in.blueprint_json = bp::to_json(base.blueprint);
  in.resources = &base_graph->resources;
  in.plan = &base_plan;
  policy::Options options;
  HumanView view(io, "plan");
  options.limits = run::policy_limits(view);
  policy::Evaluation base_eval = policy::evaluate(run::policy_dirs(policy_options(args)), in, options);
  const std::string bp_dir = run::blueprint_dir(args.positional);
  auto waivers = policy::load_waivers((std::filesystem::path(bp_dir) / "waivers.yaml").string());
  policy::apply_waivers(waivers.waivers, policy::today_utc(), base_eval);
  auto delta = audit::compare_verdicts(base_eval, policies.evaluation);
  std::string text = audit::describe_change(ref, snap->commit, plan::diff(planned.desired->resources, base_graph->resources),
                                            delta);
  for (const auto& a : snap->absent) text += "  (" + a + " does not exist at " + ref + ")\n";
  std::fwrite(text.data(), 1, text.size(), io.out);
  return kExitSuccess;
}

/// --report FORMAT:FILE (repeatable), -out PLANFILE [--sign-key KEY] and
/// the plan's views (--report plan-markdown:FILE, --format markdown on
/// stdout: `views`), which name the saved plan's digest. The views are
/// written also when the policies block the plan (no -out then), so a pull
/// request's comment says why.
int write_outputs(const Args& args, Io& io, const Planned& planned, const PolicyOutcome& policies,
                  std::vector<ViewTarget> views) {
  const auto& bp = planned.loaded.blueprint;
  std::vector<std::string> files;
  for (const auto& f : bp.files) files.push_back(f.path);
  std::vector<std::string> reports;
  for (const auto& spec : args.all("report")) {
    if (auto v = view_target(spec)) views.push_back(*v);
    else reports.push_back(spec);
  }
  audit::PlanView view;
  view.plan = &planned.plan;
  view.evaluation = &policies.evaluation;
  view.drift = &planned.drift;
  view.blueprint_name = bp.metadata.name;
  if (!views.empty())
    if (auto prov = audit::record_provenance(files)) view.provenance = audit::describe(*prov);
  if (!reports.empty()) {
    audit::RunInput in;
    in.blueprint = &bp;
    in.evaluation = &policies.evaluation;
    in.plan = planned.plan.summary();
    in.state_path = planned.state.path;
    in.policy_dirs = run::policy_dirs(policy_options(args));
    in.waivers_path = (std::filesystem::path(run::blueprint_dir(args.positional)) / "waivers.yaml").string();
    in.validation = planned.loaded.diagnostics;
    auto report = audit::collect_report(in);
    if (!report) return fail(io, "plan", report.error().message);
    for (const auto& spec : reports) {
      auto target = audit::parse_report_target(spec);
      if (!target) return fail(io, "plan", target.error().message);
      if (auto st = audit::write_report(*report, target->format, target->path); !st)
        return fail(io, "plan", st.error().message);
      if (target->path != "-")
        std::fprintf(io.err, "wrote %s report to %s\n", target->format.c_str(), target->path.c_str());
    }
  }
  auto out = args.get("out");
  if (out && !policies.blocked) {
    auto prov = audit::record_provenance(files);
    if (!prov) return fail(io, "plan", "git provenance: " + prov.error().message);
    std::vector<std::string> policy_files;
    for (const auto& [path, sha] : policies.evaluation.hashes) policy_files.push_back(path);
    // With no state yet the plan starts a lineage of its own (docs/plan-files.md).
    state::StateDocument bound = planned.state_document();
    if (bound.lineage.empty()) bound = state::new_document();
    auto bindings = plan::make_bindings(
        files, policy_files, {plan::bound_location(planned.state.location), planned.state.existed, bound},
        prov->commit, prov->files_dirty);
    if (!bindings) return fail(io, "plan", bindings.error().message);
    std::optional<plan::PlanKey> key;
    if (auto key_path = args.get("sign-key")) {
      auto k = plan::PlanKey::load(*key_path);
      if (!k) return fail(io, "plan", "--sign-key: " + k.error().message);
      key.emplace(std::move(*k));
    }
    auto pf = plan::make_planfile(planned.plan, std::move(*bindings));
    if (auto st = plan::write_planfile(*out, pf, key ? &*key : nullptr); !st)
      return fail(io, "plan", st.error().message);
    std::fprintf(io.err, "saved the plan to %s%s; apply it with: plinth apply %s\n", out->c_str(),
                 key ? (" (signed, " + key->algorithm() + " key " + key->id() + ")").c_str() : "", out->c_str());
    if (!views.empty()) {
      auto bytes = read_file(*out);
      if (!bytes) return fail(io, "plan", "cannot read back " + *out + ": " + bytes.error().message);
      view.plan_file = *out;
      view.plan_sha256 = sha256_hex(*bytes);
    }
  }
  if (!write_views(io, views, view)) return kExitFailure;
  if (out && policies.blocked)
    return fail(io, "plan", "not writing " + *out + ": the policy check failed (a blocked plan cannot be applied)");
  return kExitSuccess;
}

/// --report FORMAT:FILE for a blueprint that did not load or validate: the
/// reports hold its diagnostics, so CI's always-run upload steps find them.
void write_invalid_reports(const Args& args, Io& io, const Checked& checked) {
  std::vector<ViewTarget> views;
  std::vector<std::string> reports;
  for (const auto& spec : args.all("report")) {
    if (auto v = view_target(spec)) views.push_back(*v);
    else reports.push_back(spec);
  }
  if (auto format = output_format(args); format && (*format == "markdown" || *format == "html"))
    views.push_back({*format, "-"});
  if (!views.empty()) {
    audit::PlanView view;
    view.validation = &checked.diagnostics;
    view.blueprint_name = checked.files.empty() ? "(unreadable)" : checked.files.front().path;
    write_views(io, views, view);
  }
  if (reports.empty()) return;
  audit::RunInput in;
  in.files = checked.files;
  in.validation = checked.diagnostics;
  in.policy_dirs = run::policy_dirs(policy_options(args));
  auto report = audit::collect_report(in);
  if (!report) {
    fail(io, "plan", report.error().message);
    return;
  }
  for (const auto& spec : reports) {
    auto target = audit::parse_report_target(spec);
    if (!target) {
      fail(io, "plan", target.error().message);
      continue;
    }
    if (auto st = audit::write_report(*report, target->format, target->path); !st)
      fail(io, "plan", st.error().message);
    else if (target->path != "-")
      std::fprintf(io.err, "wrote %s report to %s (the blueprint is invalid: no policy was evaluated)\n",
                   target->format.c_str(), target->path.c_str());
  }
}

int run_plan(const Args& args, Io& io) {
  if (args.flag("refresh-only")) return refresh_only(args, io, "plan");
  // 1-4. load, expand, state, refresh, diff (the state lock is released when
  // `planned` dies: plan never writes state)
  auto options = plan_options(args, "plan");
  if (!options) return fail(io, "plan", options.error().message);
  options->share_state = true;  // plan never changes the state it read
  auto format = output_format(args);
  if (!format) return fail(io, "plan", format.error().message);
  HumanView view(io, "plan");
  run::ProviderSet providers(provider_factory(), provider_options(args));
  auto planned = run::plan(*options, providers, view, [&](const Checked& c) { write_invalid_reports(args, io, c); });
  if (!planned) return kExitFailure;
  // On every return: the plan's data goes with the process, the lock is released.
  struct Release {
    Planned& p;
    ~Release() { run::release_at_exit(p); }
  } release{*planned};
  const Loaded* loaded = &planned->loaded;
  const state::StateDocument* prior = &planned->state.doc;
  const std::string& state_path = planned->state.path;
  const plan::Plan& p = planned->plan;
  auto policies = run::run_policies(*loaded, *planned->desired, p, run::policy_dirs(policy_options(args)),
                                    run::blueprint_dir(args.positional), view);
  if (!policies.blocked && !run::check_inventory(planned->inventory, providers, view, "plan")) return kExitFailure;
  if (!policies.blocked && planned->preflight && !run::check_preflight(p, providers, view, "plan"))
    return kExitFailure;

  // 5. output (the views after the plan file, whose digest they name)
  std::vector<ViewTarget> stdout_view;
  if (*format == "markdown" || *format == "html") {
    stdout_view.push_back({*format, "-"});
  } else if (*format == "json") {
    Json files = Json::array();
    for (const auto& f : loaded->blueprint.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}});
    // What the refresh found changed outside Plinth, as `apply --json` reports it (resource_drift).
    Json drift = Json::array();
    for (const auto& d : planned->drift) drift.push_back(drift_json(d, d.gone && !d.reason.empty()));
    Json extra = {{"blueprint", {{"name", loaded->blueprint.metadata.name}, {"files", std::move(files)}}},
                  {"state", {{"path", state_path}, {"lineage", prior->lineage}, {"serial", prior->serial}}},
                  {"resource_drift", std::move(drift)}};
    std::string text = plan::to_json_text(p, extra);
    std::fwrite(text.data(), 1, text.size(), io.out);
  } else {
    std::string text = plan::to_text(p, {io.color, io.group});
    std::fwrite(text.data(), 1, text.size(), io.out);
  }

  // 5b. reports, plan file, --against
  if (args.has("against")) {
    if (int rc = print_against(args, io, *planned, policies); rc != kExitSuccess) return rc;
  }
  if (int rc = write_outputs(args, io, *planned, policies, std::move(stdout_view)); rc != kExitSuccess) return rc;

  // 6. exit code
  if (policies.blocked) return kExitFailure;
  return args.flag("detailed-exitcode") && p.has_changes() ? kExitChanges : kExitSuccess;
}

const Register plan_command({
    "plan",
    "plinth plan PATH... [--state FILE] [--json | --format FORMAT] [--detailed-exitcode] [--lock-timeout D] [-lock=false] "
    "[--report FORMAT:FILE]... [-out PLANFILE [--sign-key KEY]] [--against REF] [-target ADDRESS]... [-destroy] "
    "[--untrusted [--trust FILE]]",
    "Show what apply would create, update, replace or destroy.",
    "Loads and validates the blueprint, expands it into resources, reads the prior state\n"
    "(locked while it is read) and prints each resource's action with attribute-level\n"
    "before -> after. Changing a force-new attribute (instance type, stack, user-data hash,\n"
    "BMC endpoint, ...) plans a replace; removing a pool plans deletes. The state file is\n"
    "--state, else $PLINTH_STATE, else plinth.state.json beside the first blueprint; a\n"
    "missing file means nothing exists yet. Before diffing, every resource in state is read\n"
    "through its provider and drift (changes made outside Plinth) is printed to stderr, the\n"
    "servers the plan creates or keeps are read and checked against their pools, and each\n"
    "provider with changes is asked what apply will need; a server or provider that cannot\n"
    "be read or used is an error (exit 1, no -out file). --refresh=false reads nothing and\n"
    "plans against the state as recorded, e.g. offline (docs/apply.md). Exit codes: 0 no\n"
    "changes (or changes without --detailed-exitcode), 2 changes with --detailed-exitcode, 1 error. The text and JSON\n"
    "formats are documented in docs/plan.md.\n"
    "For a pull request's blueprint, plan with --untrusted (or PLINTH_UNTRUSTED=1) and the\n"
    "operator's --trust FILE: no plugin runs, no credential is read or sent and no endpoint\n"
    "option is taken beyond what the trust file allows, nothing is written to state (not even\n"
    "the lock), and the state must be named by --state or PLINTH_STATE. What the blueprint asks\n"
    "beyond the trust file is refused before any request, with its file:line and what the trust\n"
    "file would need (docs/security.md).",
    {
        {"state", "FILE", "State file to plan against (default: plinth.state.json beside the first blueprint)."},
        {"json", "", "Print the plan as JSON (format in docs/plan.md); the same as --format json."},
        {"format", "FORMAT", "Print the plan as text (default), json, markdown (a summary for a pull-request "
                             "comment) or html (the plan view); docs/plan.md, \"Views\"."},
        {"detailed-exitcode", "", "Exit 2 when the plan has changes, 0 when it has none."},
        {"no-group", "", "Print every changed resource in full instead of one entry per pool and action (docs/plan.md, \"Grouped\")."},
        {"lock-timeout", "D", "How long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
        state_key_flag(),
        {"lock", "", "Lock the state while reading it (default true); -lock=false plans without writing the lock "
                     "file, e.g. from a read-only checkout. Another run may change the state meanwhile."},
        {"policy-dir", "DIR", "Also evaluate the policies in DIR (repeatable; docs/policy-authoring.md).", true},
        {"refresh", "", "Read the resources in state through their providers first (default true; --refresh=false skips it)."},
        provider_option_flag(),
        {"report", "FORMAT:FILE", "Also write an audit report (json, sarif, junit, markdown, html; docs/audit.md) or a "
                                  "view of the plan (plan-markdown, plan-html; docs/plan.md).", true},
        {"out", "PLANFILE", "Save the plan, bound to its inputs, for plinth apply PLANFILE (docs/plan-files.md)."},
        {"sign-key", "KEY", "Sign the saved plan with an Ed25519 private key or HMAC secret file."},
        {"against", "REF", "Also show what the change since git REF does to resources and policy verdicts."},
        {"target", "ADDRESS", "Plan only ADDRESS (or every node of TYPE.POOL) and what it depends on; for "
                              "exceptional situations (docs/plan.md).", true},
        {"replace", "ADDRESS", "Plan to replace ADDRESS (one resource, e.g. a node to reprovision) although nothing "
                               "forces it (repeatable; docs/plan.md).", true},
        {"destroy", "", "Plan to destroy everything in state (save it with -out, apply it like any plan)."},
        {"refresh-only", "", "Only read the resources in state and show what changed outside Plinth; plan no "
                             "change (docs/apply.md, \"Refresh-only\")."},
        untrusted_flags()[0],
        untrusted_flags()[1],
    },
    run_plan,
    20,
});

}  // namespace
}  // namespace plinth::cli
