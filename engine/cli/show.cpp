// plinth show PLANFILE: what a saved plan holds, for review before `apply`
// (Terraform's `show PLANFILE`). Reads the file only: no blueprint, state,
// provider or git access, so it runs anywhere the file is.
#include "engine/audit/plan_view.h"
#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "engine/plan/format.h"
#include "engine/plan/planfile.h"

namespace plinth::cli {
namespace {

Json bindings_json(const plan::PlanFile& pf, const std::string& path, const std::string& signature) {
  const plan::Bindings& b = pf.bindings;
  return {{"path", path},
          {"created_at", pf.created_at},
          {"signature", signature},
          {"plinth_version", b.plinth_version},
          {"blueprints", b.blueprints},
          {"policies", b.policies},
          {"state", {{"lineage", b.state_lineage}, {"serial", b.state_serial}}},
          {"git", {{"commit", b.git_commit}, {"dirty", b.git_dirty}}}};
}

int run_show(const Args& args, Io& io) {
  if (args.positional.size() != 1)
    return fail(io, "show",
                args.positional.empty()
                    ? "name a saved plan: plinth show PLANFILE (made with plinth plan -out PLANFILE); "
                      "for the state use plinth state list / plinth state show ADDRESS"
                    : "unexpected argument '" + args.positional[1] + "'; plinth show takes one plan file");
  const std::string& path = args.positional.front();
  std::optional<plan::PlanKey> key;
  if (auto key_path = args.get("verify-key")) {
    auto k = plan::PlanKey::load(*key_path);
    if (!k) return fail(io, "show", "--verify-key: " + k.error().message);
    key.emplace(std::move(*k));
  }
  auto pf = plan::read_planfile(path, key ? &*key : nullptr);
  if (!pf) return fail(io, "show", pf.error().message);

  std::string signature = "unsigned";
  if (pf->signature)
    signature = std::string(key ? "signed and verified" : "signed, not verified (pass --verify-key)") + ", " +
                pf->signature->algorithm + " key " + pf->signature->key_id;

  auto parsed = output_format(args);
  if (!parsed) return fail(io, "show", parsed.error().message);
  const std::string& format = *parsed;
  if (format == "markdown" || format == "html") {
    // The file's own digest: the one a pull request's comment names.
    auto bytes = read_file(path);
    if (!bytes) return fail(io, "show", bytes.error().message);
    audit::PlanView view;
    view.plan = &pf->plan;
    view.blueprint_name = pf->bindings.blueprints.empty() ? path : pf->bindings.blueprints.begin()->first;
    const plan::Bindings& b = pf->bindings;
    if (!b.git_commit.empty())
      view.provenance = "git " + b.git_commit.substr(0, 12) + (b.git_dirty ? ", uncommitted changes" : "");
    view.plan_file = path;
    view.plan_sha256 = sha256_hex(*bytes);
    view.plinth_version = b.plinth_version;
    std::string text = format == "html" ? audit::plan_html(view) : audit::plan_markdown(view);
    std::fwrite(text.data(), 1, text.size(), io.out);
    return kExitSuccess;
  }
  if (format == "json") {
    Json extra = {{"plan_file", bindings_json(*pf, path, signature)}};
    std::string text = plan::to_json_text(pf->plan, extra);
    std::fwrite(text.data(), 1, text.size(), io.out);
    return kExitSuccess;
  }
  const plan::Bindings& b = pf->bindings;
  std::string head = "Saved plan " + path + ", made " + pf->created_at + " by plinth " + b.plinth_version + " (" +
                     signature + ")\n";
  for (const auto& [file, sha] : b.blueprints) head += "  blueprint " + file + " (sha256 " + sha.substr(0, 12) + ")\n";
  head += "  " + std::to_string(b.policies.size()) + " policy file(s); state lineage " +
          (b.state_lineage.empty() ? std::string("(none)") : b.state_lineage) + " at serial " +
          std::to_string(b.state_serial) + "; git commit " +
          (b.git_commit.empty() ? std::string("(none)") : b.git_commit.substr(0, 12)) +
          (b.git_dirty ? " with uncommitted changes" : "") + "\n";
  head += "  apply it with: plinth apply " + path + "\n\n";
  std::string text = safe_text(head) + plan::to_text(pf->plan, {io.color, io.group});
  std::fwrite(text.data(), 1, text.size(), io.out);
  return kExitSuccess;
}

const Register show_command({
    "show",
    "plinth show PLANFILE [--json | --format FORMAT] [--verify-key KEY]",
    "Show what a saved plan (plinth plan -out PLANFILE) will do, without applying it.",
    "Prints the plan the file holds, in the same text (or, with --json, the same JSON\n"
    "document) as plinth plan, after what it is bound to: blueprint and policy files, the\n"
    "state's lineage and serial, the git commit, the plinth version and its signature.\n"
    "--format markdown and --format html print the plan's pull-request summary and HTML\n"
    "view (docs/plan.md, \"Views\") naming the file's sha256.\n"
    "Reads only the file: the bindings are checked by plinth apply, not here. With\n"
    "--verify-key the signature is checked too, and a plan that fails it is refused.\n"
    "Exit codes: 0 shown, 1 the file is not a readable plan (or fails --verify-key).",
    {
        {"json", "", "Print the plan as JSON (docs/plan.md), with a plan_file object of its bindings."},
        {"format", "FORMAT", "Print the plan as text (default), json, markdown (a pull-request summary naming the "
                             "file's sha256) or html (the plan view); docs/plan.md, \"Views\"."},
        {"no-group", "", "Print every changed resource in full instead of one entry per pool and action (docs/plan.md, \"Grouped\")."},
        {"verify-key", "KEY", "Refuse the plan unless it is signed by this Ed25519 public key or HMAC secret."},
    },
    run_show,
    22,
});

}  // namespace
}  // namespace plinth::cli
