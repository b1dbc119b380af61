// plinth rules [--markdown]: the domain rules validate runs.
#include "engine/cli/common.h"
#include "engine/validate/validate.h"

namespace plinth::cli {
namespace {

int run_rules(const Args& args, Io& io) {
  if (!args.positional.empty()) return fail(io, "rules", "unexpected argument '" + args.positional.front() + "'");
  if (args.flag("markdown")) {
    std::string md = validate::rules_markdown();
    std::fwrite(md.data(), 1, md.size(), io.out);
    return kExitSuccess;
  }
  for (const auto& r : validate::rules())
    std::fprintf(io.out, "%-9s %-8s %s\n", r.id.c_str(), to_string(r.severity), r.title.c_str());
  std::fprintf(io.out, "%zu rules; details: plinth rules --markdown, or docs/rules.md\n", validate::rules().size());
  return kExitSuccess;
}

const Register rules_command({
    "rules",
    "plinth rules [--markdown]",
    "List the GPU/ML domain rules that validate runs.",
    "One line per rule: its stable ID, severity and what it checks. --markdown prints the\n"
    "full reference (what triggers each rule, why, with sources, and how to fix it), which\n"
    "is docs/rules.md.",
    {
        {"markdown", "", "Print the Markdown reference (docs/rules.md)."},
    },
    run_rules,
    65,
});

}  // namespace
}  // namespace plinth::cli
