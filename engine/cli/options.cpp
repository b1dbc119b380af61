#include "engine/cli/options.h"

#include <cstdlib>

#include "engine/cli/untrusted.h"
#include "engine/core/files.h"
#include "engine/run/policy_gate.h"
#include "engine/state/state.h"
#include "providers/registry/factory.h"

namespace plinth::cli {

FlagSpec state_key_flag() {
  return {"state-key-file", "FILE",
          "Key for encrypted state (64 hex digits or base64 of 32 bytes; default $PLINTH_STATE_KEY, else the file "
          "$PLINTH_STATE_KEY_FILE; docs/state.md)."};
}

std::vector<FlagSpec> verify_source_flags() {
  return {
      {"prometheus", "URL", "The Prometheus server's base URL (https://prometheus.example:9090)."},
      {"prometheus-ca", "FILE", "PEM bundle that verifies the Prometheus server (default: the system store)."},
      {"prometheus-token-file", "FILE", "A bearer token for Prometheus (only with --prometheus or PLINTH_PROMETHEUS_URL)."},
      {"from", "FILE", "Read probe output (and DCGM exporter scrapes) from FILE instead of Prometheus.", true},
  };
}

Result<VerifyFacts> read_verify_facts(const Args& args, const bp::Blueprint& blueprint) {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  VerifyFacts out;
  const auto files = args.all("from");
  if (!files.empty()) {
    if (args.has("prometheus")) return Error::invalid("give --from FILE... or --prometheus URL, not both");
    for (const auto& f : files) {
      auto text = read_file(f);
      if (!text) return Error::invalid("cannot read " + f + ": " + text.error().message);
      auto parsed = verify::parse_text(*text, f);
      if (!parsed) return parsed.error();
      out.samples.insert(out.samples.end(), parsed->begin(), parsed->end());
    }
    out.source = files.size() == 1 ? files.front() : std::to_string(files.size()) + " files (" + files.front() + ", ...)";
    return out;
  }
  verify::PrometheusOptions po;
  po.url = args.get_or("prometheus", env("PLINTH_PROMETHEUS_URL"));
  const bool explicit_url = !po.url.empty();
  if (po.url.empty() && blueprint.monitoring && !blueprint.monitoring->prometheus_url.empty()) {
    // A pull request's blueprint does not choose where the job connects.
    if (untrusted().on)
      return Error::invalid("untrusted mode: the blueprint's monitoring.prometheus_url is not used; give the Prometheus "
                            "server with --prometheus URL or PLINTH_PROMETHEUS_URL");
    po.url = blueprint.monitoring->prometheus_url;
  }
  if (po.url.empty())
    return Error::invalid("no Prometheus to ask: give --prometheus URL (or PLINTH_PROMETHEUS_URL), set "
                          "monitoring.prometheus_url in the blueprint, or read probe files with --from FILE...");
  po.ca_bundle = args.get_or("prometheus-ca", env("PLINTH_PROMETHEUS_CA"));
  if (auto token_file = args.get("prometheus-token-file")) {
    // A token goes only to a URL the operator gave, never to one a blueprint
    // (perhaps a pull request's) names.
    if (!explicit_url)
      return Error::invalid("--prometheus-token-file is sent only to a URL given with --prometheus or "
                            "PLINTH_PROMETHEUS_URL, never to the blueprint's monitoring.prometheus_url");
    auto token = read_file(*token_file);
    if (!token) return Error::invalid("cannot read the token file " + *token_file + ": " + token.error().message);
    po.token = *token;
    while (!po.token.empty() && (po.token.back() == '\n' || po.token.back() == '\r' || po.token.back() == ' '))
      po.token.pop_back();
  }
  auto got = verify::query_prometheus(po);
  if (!got) return got.error();
  out.samples = std::move(*got);
  out.source = "Prometheus at " + po.url;
  return out;
}

FlagSpec provider_option_flag() {
  return {"provider-option", "NAME.KEY=VALUE",
          "Set a provider option, e.g. PROVIDER.ca_bundle=/etc/ssl/my-ca.pem (overrides PLINTH_<NAME>_<KEY>; "
          "'plinth providers' lists every option).",
          true};
}

Result<std::string> output_format(const Args& args) {
  std::string format = args.get("format").value_or(args.flag("json") ? "json" : "text");
  if (format == "md") format = "markdown";
  if (format != "text" && format != "json" && format != "markdown" && format != "html")
    return Error::invalid("--format " + format + ": use text, json, markdown or html");
  if (args.flag("json") && format != "json")
    return Error::invalid("--json and --format " + format + " ask for two outputs; keep one");
  return format;
}

std::vector<FlagSpec> execute_flags() {
  return {
      {"auto-approve", "", "Do not ask for confirmation (required when stdin is not a terminal)."},
      {"parallelism", "N", "Operations in flight at once (default 10)."},
      {"state", "FILE", "State file (default: plinth.state.json beside the first blueprint)."},
      {"lock-timeout", "D", "How long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
      state_key_flag(),
      {"refresh", "", "Read the resources in state through their providers first (default true)."},
      {"policy-dir", "DIR", "Also evaluate the policies in DIR (repeatable).", true},
      provider_option_flag(),
      {"json", "", "Print one JSON object per line (the plan, each operation, the outcome) instead of text; "
                   "needs --auto-approve or a saved plan (docs/apply.md, \"Machine-readable output\")."},
      {"no-group", "", "Print every changed resource in full instead of one entry per pool and action (docs/plan.md, \"Grouped\")."},
  };
}

Result<run::StateOptions> state_options(const Args& args) {
  run::StateOptions s;
  s.location = args.get("state");
  s.key_file = args.get("state-key-file");
  s.lock = args.flag("lock", true);
  auto timeout = state::parse_duration(args.get_or("lock-timeout", "0s"));
  if (!timeout)
    return Error::invalid("state " + state::redact_location(state::resolve_state_path(s.location, args.positional)) +
                          ": --lock-timeout: " + timeout.error().message);
  s.lock_timeout = *timeout;
  return s;
}

run::ProviderOptions provider_options(const Args& args) {
  run::ProviderOptions p;
  p.overrides = args.all("provider-option");
  p.force_conflicts = args.flag("force-conflicts");
  if (untrusted().on) p.untrusted = &untrusted().trust;
  return p;
}

run::PolicyOptions policy_options(const Args& args) {
  return {args.all("policy-dir"), run::blueprint_dir(args.positional)};
}

Result<run::PlanOptions> plan_options(const Args& args, const std::string& operation) {
  run::PlanOptions o;
  o.operation = operation;
  o.paths = args.positional;
  auto state = state_options(args);
  if (!state) return state.error();
  o.state = std::move(*state);
  o.refresh = args.flag("refresh", true);
  o.destroy = operation == "destroy" || args.flag("destroy");
  o.targets = args.all("target");
  o.replace = args.all("replace");
  if (untrusted().on) o.untrusted = &untrusted().trust;
  return o;
}

Result<run::ApplyOptions> apply_options(const Args& args, const std::string& operation) {
  run::ApplyOptions o;
  o.operation = operation;
  const std::string v = args.get_or("parallelism", "10");
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 1 || n > 1000)
    return Error::invalid("--parallelism '" + v + "' must be a whole number from 1 to 1000");
  o.parallelism = static_cast<int>(n);
  o.policies = policy_options(args);
  auto state = state_options(args);
  if (!state) return state.error();
  o.state = std::move(*state);
  if (const char* env = std::getenv("PLINTH_PROGRESS_INTERVAL"); env && *env) {
    auto d = state::parse_duration(env);
    if (!d || d->count() <= 0)
      return Error::invalid("PLINTH_PROGRESS_INTERVAL='" + std::string(env) + "' must be a duration such as 10s or 500ms");
    o.progress_interval = *d;
  }
  return o;
}

run::ProviderFactory& provider_factory() {
  // Made on first use, after main() has read --untrusted.
  static RegistryFactory factory(untrusted().on ? &untrusted().trust : nullptr);
  return factory;
}

}  // namespace plinth::cli
