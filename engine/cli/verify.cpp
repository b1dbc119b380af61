// plinth verify PATH... [--prometheus URL | --from FILE...]: the running nodes against the blueprint.
#include <cstdlib>

#include "engine/audit/report.h"
#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/cli/untrusted.h"
#include "engine/core/duration.h"
#include "engine/core/files.h"
#include "engine/core/strings.h"
#include "engine/render/render.h"
#include "engine/verify/verify.h"

namespace plinth::cli {
namespace {

int run_verify(const Args& args, Io& io) {
  if (args.flag("probe-script")) {
    std::string_view script = render::probe_script();
    std::fwrite(script.data(), 1, script.size(), io.out);
    return kExitSuccess;
  }
  const std::string format = args.get_or("format", "text");
  const auto& fmts = verify::formats();
  if (std::find(fmts.begin(), fmts.end(), format) == fmts.end())
    return fail(io, "verify", "unknown --format '" + format + "'; use one of " + join(fmts, ", "));
  // The same FORMAT:FILE targets as audit and plan --report (json, sarif, junit, markdown, html).
  std::vector<audit::ReportTarget> reports;
  for (const auto& spec : args.all("report")) {
    auto target = audit::parse_report_target(spec);
    if (!target) return fail(io, "verify", target.error().message);
    reports.push_back(*target);
  }
  verify::Options opt;
  opt.pool = args.get_or("pool", "");
  if (auto age = args.get("max-age")) {
    auto d = parse_duration(*age);
    if (!d || d->count() <= 0)
      return fail(io, "verify", "--max-age '" + *age + "' is not a duration such as 30m or 2h");
    opt.max_age_s = std::max<long long>(1, d->count() / 1000);
  }
  if (args.positional.empty())
    return fail(io, "verify", "give the blueprint (files or a directory), e.g. plinth verify blueprints/ --prometheus URL");
  auto loaded = load_blueprint(args.positional, io);
  if (!loaded) return kExitFailure;

  auto facts = read_verify_facts(args, loaded->blueprint);
  if (!facts) return fail(io, "verify", facts.error().message);

  auto outcome = verify::compare(loaded->blueprint, loaded->catalog, facts->samples, opt);
  if (!outcome) return fail(io, "verify", outcome.error().message);
  outcome->source = facts->source;
  const std::string name = loaded->blueprint.metadata.name;
  for (const auto& [f, path] : reports) {
    auto text = verify::render(*outcome, name, f);
    if (!text) return fail(io, "verify", text.error().message);
    if (path == "-") {
      std::fputs(text->c_str(), io.out);
    } else if (auto st = write_file_atomic(path, *text); !st) {
      return fail(io, "verify", "cannot write " + path + ": " + st.error().message);
    }
  }
  auto text = verify::render(*outcome, name, format, format == "text" && io.color);
  if (!text) return fail(io, "verify", text.error().message);
  std::fputs(text->c_str(), io.out);
  return outcome->failed() ? kExitFailure : kExitSuccess;
}

const Register verify_command({
    "verify",
    "plinth verify PATH... [--prometheus URL | --from FILE...] [--pool NAME] [--format FORMAT]\n"
    "       plinth verify --probe-script",
    "Check that the running nodes are what the blueprint declares (driver, GPUs, MIG, Fabric Manager, RDMA, mounts).",
    "Reads what every node reports (the plinth-probe facts each rendered node writes for the\n"
    "node exporter's textfile collector, and the DCGM exporter's series) from Prometheus\n"
    "(two instant queries for the whole fleet, /api/v1/query) or from probe files, and\n"
    "compares each node with its pool: NVIDIA driver, GPU count and model, ECC, MIG layout,\n"
    "NVLinks, nvidia-fabricmanager, RDMA ports and nvidia_peermem, storage tier mounts and\n"
    "their dm-crypt encryption. Declared nodes that do not report and reporting nodes the\n"
    "blueprint does not declare are findings too. Findings carry stable rule IDs (VER001...)\n"
    "and a fix; exit 1 when any is an error. The Prometheus URL is --prometheus, else\n"
    "PLINTH_PROMETHEUS_URL, else the blueprint's monitoring.prometheus_url; a bearer token\n"
    "(--prometheus-token-file) is sent only to the first two. --probe-script prints the probe\n"
    "for nodes Plinth did not provision. See docs/verify.md.",
    [] {
      std::vector<FlagSpec> f = verify_source_flags();  // shared with audit --verify
      f.insert(f.end(), {
        {"pool", "NAME", "Check only this pool."},
        {"format", "FORMAT", "text (default), json, sarif, junit, markdown or html.", false,
         {"text", "json", "sarif", "junit", "markdown", "html"}},
        {"report", "FORMAT:FILE", "Also write FORMAT (json, sarif, junit, markdown, html) to FILE.", true},
        {"max-age", "DURATION", "Facts older than this are stale (VER012); default 1h."},
        {"probe-script", "", "Print the probe script (plinth-probe) and exit."},
        untrusted_flags()[0],
        untrusted_flags()[1],
      });
      return f;
    }(),
    run_verify,
    58,
});


}  // namespace
}  // namespace plinth::cli
