// plinth audit PATH...: a compliance report of the blueprint (docs/audit.md).
//
// The same steps as plan (load, expand, state, diff, policies), then the
// report in one format to stdout or --output. The report is written whether
// or not policies fail; the exit code says whether a mandatory one did.
#include <filesystem>

#include "engine/audit/report.h"
#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/cli/render_events.h"
#include "engine/run/policy_gate.h"
#include "engine/run/state_session.h"
#include "engine/graph/expand.h"
#include "engine/state/state.h"

namespace plinth::cli {
namespace {

int run_audit(const Args& args, Io& io) {
  const std::string format = args.get_or("format", "json");
  if (std::find(audit::formats().begin(), audit::formats().end(), format) == audit::formats().end() &&
      format != "md")
    return fail(io, "audit", "--format " + format + ": use one of json, sarif, junit, markdown, html");

  const std::string output = args.get_or("output", "-");
  const std::string fmt = format == "md" ? "markdown" : format;
  // An invalid blueprint still gets its report, with the validation errors
  // as findings: CI uploads it either way (docs/ci.md).
  auto loaded = load_blueprint(args.positional, io, [&](const Checked& c) {
    audit::RunInput in;
    in.files = c.files;
    in.validation = c.diagnostics;
    in.policy_dirs = run::policy_dirs(policy_options(args));
    auto report = audit::collect_report(in);
    if (!report) {
      fail(io, "audit", report.error().message);
      return;
    }
    if (output != "-") std::fflush(io.out);
    if (auto st = audit::write_report(*report, fmt, output); !st) fail(io, "audit", st.error().message);
    else if (output != "-")
      std::fprintf(io.err, "wrote %s report to %s (the blueprint is invalid: no policy was evaluated)\n",
                   format.c_str(), output.c_str());
  });
  if (!loaded) return kExitFailure;
  auto expanded = graph::expand(loaded->blueprint);
  if (!expanded) return fail(io, "audit", expanded.error().message);
  // The plan shares the graph's and the state's resources instead of copying them.
  auto desired = std::make_shared<const graph::ResourceGraph>(std::move(*expanded));

  const std::string state_path = state::resolve_state_path(args.get("state"), args.positional);
  auto state_opts = state_options(args);
  if (!state_opts) return fail(io, "audit", state_opts.error().message);
  auto opened = run::open_state_backend(*state_opts, state_path);
  if (!opened) return fail(io, "audit", opened.error().message);
  auto backend = std::move(*opened);
  auto doc = backend->load();
  if (!doc) return fail(io, "audit", doc.error().message);
  auto prior = std::make_shared<const std::vector<Resource>>(*doc ? std::move((**doc).resources) : std::vector<Resource>{});
  plan::Plan p = plan::diff_sharing_all(std::shared_ptr<const std::vector<Resource>>(desired, &desired->resources), prior);

  const auto dirs = run::policy_dirs(policy_options(args));
  const std::string bp_dir = run::blueprint_dir(args.positional);
  HumanView view(io, "audit");
  auto outcome = run::run_policies(*loaded, *desired, p, dirs, bp_dir, view);

  audit::RunInput in;
  in.blueprint = &loaded->blueprint;
  in.evaluation = &outcome.evaluation;
  in.plan = p.summary();
  in.state_path = state_path;
  in.policy_dirs = dirs;
  in.waivers_path = (std::filesystem::path(bp_dir) / "waivers.yaml").string();
  in.validation = loaded->diagnostics;  // warnings (NET007, ...) are findings too
  auto report = audit::collect_report(in);
  if (!report) return fail(io, "audit", report.error().message);
  if (args.flag("verify")) {
    auto facts = read_verify_facts(args, loaded->blueprint);
    if (!facts) return fail(io, "audit", "--verify: " + facts.error().message);
    auto seen = verify::compare(loaded->blueprint, loaded->catalog, facts->samples, {});
    if (!seen) return fail(io, "audit", "--verify: " + seen.error().message);
    audit::attach_observed(*report, {facts->source, verify::summary(*seen), seen->observations, seen->findings});
  } else if (args.has("from") || args.has("prometheus")) {
    return fail(io, "audit", "--from and --prometheus say where --verify reads the running nodes' facts; add --verify");
  }
  if (auto fw = args.get("framework")) {
    if (auto st = audit::restrict_to_framework(*report, *fw); !st) return fail(io, "audit", st.error().message);
  }

  if (output != "-") std::fflush(io.out);
  if (auto st = audit::write_report(*report, fmt, output); !st)
    return fail(io, "audit", st.error().message);
  if (output != "-") std::fprintf(io.err, "wrote %s report to %s\n", format.c_str(), output.c_str());

  bool blocking = report->framework_filter.empty() ? outcome.blocked : report->mandatory_failures() > 0;
  if (blocking && !args.flag("soft-fail")) return kExitFailure;
  return kExitSuccess;
}

const Register audit_command({
    "audit",
    "plinth audit PATH... [--format json|sarif|junit|markdown|html] [--output FILE] [--framework F] "
    "[--policy-dir DIR]... [--state FILE] [--soft-fail] [--verify [--prometheus URL | --from FILE...]]",
    "Write a compliance report: every policy verdict with controls, resources and file:line.",
    "Loads and validates the blueprint, expands it, plans it against the state (read-only,\n"
    "no lock) and runs the policy packs, then writes a report: JSON (the source of truth,\n"
    "docs/audit-report.schema.json), SARIF 2.1.0 (GitHub code scanning), JUnit XML, Markdown\n"
    "(a pull-request comment) or a self-contained HTML page. --framework hipaa narrows the\n"
    "report to one framework and lists every control of it, covered or not. The report is\n"
    "written either way; the exit code is 1 when a mandatory policy fails or errors (with\n"
    "--framework: one of that framework's), a waiver expired or a pack is broken, unless\n"
    "--soft-fail. --verify adds what the running nodes report (plinth verify: Prometheus or\n"
    "probe files) as observed evidence, with its time, under the controls it supports\n"
    "(encryption at rest, audit logging, configuration). docs/audit.md describes every format.",
    [] {
      std::vector<FlagSpec> f = {
        {"format", "F", "json (default), sarif, junit, markdown or html.", false,
         {"json", "sarif", "junit", "markdown", "html"}},
        {"output", "FILE", "Write the report to FILE instead of stdout."},
        {"framework", "F", "Only this framework's policies, with its full control list (hipaa, soc2, gdpr)."},
        {"state", "FILE", "State file to plan against (default: plinth.state.json beside the first blueprint)."},
        state_key_flag(),
        {"policy-dir", "DIR", "Also evaluate the policies in DIR (repeatable).", true},
        {"soft-fail", "", "Exit 0 even when a mandatory policy fails (the report still says so)."},
        {"verify", "", "Add what the running nodes report (plinth verify) as observed evidence (docs/verify.md)."},
      };
      for (auto& flag : verify_source_flags()) f.push_back(flag);
      return f;
    }(),
    run_audit,
    25,
});

}  // namespace
}  // namespace plinth::cli
