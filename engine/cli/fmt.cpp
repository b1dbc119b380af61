// plinth fmt PATH... [--check]: rewrite blueprint files in the canonical
// layout (engine/blueprint/canonical.h), comments kept.
#include "engine/blueprint/canonical.h"
#include "engine/blueprint/loader.h"
#include "engine/cli/common.h"
#include "engine/core/files.h"
#include "engine/core/strings.h"

namespace plinth::cli {
namespace {

int run_fmt(const Args& args, Io& io) {
  if (args.positional.empty())
    return fail(io, "fmt", "no blueprint given; pass blueprint files or directories (e.g. plinth fmt blueprints/)");
  Diagnostics diags;
  const auto files = bp::collect_blueprint_files(args.positional, diags);
  if (has_errors(diags)) {
    print_diagnostics(diags, io);
    return kExitFailure;
  }
  const bool check = args.flag("check");
  int changed = 0, failed = 0;
  for (const auto& f : files) {
    auto text = read_file(f);
    if (!text) {
      std::fprintf(io.err, "plinth fmt: %s\n", safe_text(text.error().message).c_str());
      ++failed;
      continue;
    }
    auto out = bp::canonical_text(*text, f);
    if (!out) {
      std::fprintf(io.err, "plinth fmt: %s\n", safe_text(out.error().message).c_str());
      ++failed;
      continue;
    }
    if (*out == *text) continue;
    ++changed;
    if (check) {
      std::fprintf(io.out, "%s\n", safe_text(f).c_str());
      continue;
    }
    if (auto st = write_file_atomic(f, *out); !st) {
      std::fprintf(io.err, "plinth fmt: %s\n", safe_text(st.error().message).c_str());
      ++failed;
      continue;
    }
    std::fprintf(io.out, "%s\n", safe_text(f).c_str());
  }
  if (check && changed)
    std::fprintf(io.err, "plinth fmt: %d file(s) above are not in the canonical layout; run plinth fmt %s\n", changed,
                 safe_text(join(args.positional, " ")).c_str());
  return failed || (check && changed) ? kExitFailure : kExitSuccess;
}

const Register fmt_command({
    "fmt",
    "plinth fmt PATH... [--check]",
    "Rewrite blueprint files in the canonical layout, comments kept.",
    "PATH is a blueprint file or a directory of *.yaml files. Each file gets \\n line ends, no\n"
    "trailing blanks, no runs of blank lines, one newline at the end, and its top-level\n"
    "sections in the order docs/blueprint.md lists them, each with the comments above it;\n"
    "indentation, quoting, styles and the order of keys inside a section stay as written\n"
    "(docs/blueprint.md, \"Formatting\"). The rewritten file holds the same YAML data, which\n"
    "is checked before it is written. The files changed are printed, one per line.\n"
    "--check writes nothing, prints the files that are not canonical and exits 1 if any is,\n"
    "for CI and pre-commit hooks. Exit codes: 0 done (or all canonical), 1 otherwise.",
    {
        {"check", "", "Write nothing; list the files that are not canonical and exit 1 if there are any."},
    },
    run_fmt,
    15,
});

}  // namespace
}  // namespace plinth::cli
