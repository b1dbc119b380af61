// plinth policy list|test: inspect the policy packs and run their Lua tests.
#include <filesystem>

#include "engine/cli/common.h"
#include "engine/core/files.h"
#include "engine/cli/options.h"
#include "engine/cli/render_events.h"
#include "engine/run/policy_gate.h"
#include "engine/core/strings.h"
#include "engine/policy/listing.h"
#include "engine/policy/policy.h"
#include "engine/policy/testing.h"

namespace plinth::cli {
namespace {

int run_list(const Args& args, Io& io) {
  if (args.positional.size() > 1) return fail(io, "policy list", "unexpected argument '" + args.positional[1] + "'; use --policy-dir DIR to add a directory");
  HumanView view(io, "policy");
  auto set = policy::load_policies(run::policy_dirs(policy_options(args)), run::policy_limits(view));
  print_diagnostics(set.diagnostics, io);
  if (args.flag("markdown")) {
    std::string md = policy::policies_markdown(set.policies);
    std::fwrite(md.data(), 1, md.size(), io.out);
  } else {
    for (const auto& p : set.policies) {
      std::fprintf(io.out, "%-14s %-8s %-9s %s\n", p.id.c_str(), p.severity.c_str(), p.enforcement.c_str(),
                   p.title.c_str());
      std::fprintf(io.out, "%-14s controls: %s\n", "", policy::controls_text(p).c_str());
      std::fprintf(io.out, "%-14s file: %s:%d\n", "", safe_text(p.loc.file).c_str(), p.loc.line);
    }
    std::fprintf(io.out, "%zu policies\n", set.policies.size());
  }
  return has_errors(set.diagnostics) ? kExitFailure : kExitSuccess;
}

int run_test(const Args& args, Io& io) {
  if (args.positional.size() > 2) return fail(io, "policy test", "give at most one directory");
  std::string dir = args.positional.size() == 2 ? args.positional[1] : run::builtin_policy_dir();
  if (!is_directory_path(dir))
    return fail(io, "policy test", "'" + dir + "' is not a directory; pass the folder that holds the *_test.lua files");
  HumanView view(io, "policy");
  auto run = policy::run_policy_tests(dir, plinth::run::policy_limits(view));
  for (const auto& r : run.results) {
    std::fprintf(io.out, "%s %s: %s%s\n", r.passed ? "PASS" : "FAIL", r.loc.str().c_str(), r.name.c_str(),
                 r.passed ? "" : (":\n  " + r.detail).c_str());
  }
  std::fprintf(io.out, "%d passed, %d failed\n", run.passed, run.failed);
  if (run.results.empty()) {
    std::fprintf(io.err, "plinth policy test: no *_test.lua files in %s\n", dir.c_str());
    return kExitFailure;
  }
  return run.failed ? kExitFailure : kExitSuccess;
}

int run_policy(const Args& args, Io& io) {
  std::string sub = args.positional.empty() ? "" : args.positional.front();
  if (sub == "list") return run_list(args, io);
  if (sub == "test") return run_test(args, io);
  return fail(io, "policy",
              sub.empty() ? "missing subcommand; use 'plinth policy list' or 'plinth policy test [DIR]'"
                          : "unknown subcommand '" + sub + "'; use 'list' or 'test'");
}

const Register policy_command({
    "policy",
    "plinth policy list [--policy-dir DIR]... [--markdown] | plinth policy test [DIR]",
    "List the compliance policies or run their Lua unit tests.",
    "list: every policy of the built-in packs (and of each --policy-dir) with its severity,\n"
    "enforcement, the controls it evidences and its file:line; --markdown prints\n"
    "docs/policies.md. test: runs every *_test.lua below DIR (default: the built-in packs),\n"
    "one PASS/FAIL line per test and a summary 'N passed, M failed'; exits 1 when a test\n"
    "fails. The built-in packs are compiled into plinth (their tests too: 'plinth policy\n"
    "test' checks them); $PLINTH_POLICY_DIR (colon-separated) and --policy-dir add packs.\n"
    "Writing policies and tests: docs/policy-authoring.md.",
    {
        {"policy-dir", "DIR", "Also load the policies in DIR (repeatable).", true},
        {"markdown", "", "list: print the Markdown reference (docs/policies.md)."},
    },
    run_policy,
    60,
    {"list", "test"},
});

}  // namespace
}  // namespace plinth::cli
