#include "engine/cli/options.h"

#include <cstdlib>

#include "engine/cli/untrusted.h"
#include "engine/run/policy_gate.h"
#include "engine/state/state.h"
#include "providers/registry/factory.h"

namespace plinth::cli {

FlagSpec state_key_flag() {
  return {"state-key-file", "FILE",
          "Key for encrypted state (64 hex digits or base64 of 32 bytes; default $PLINTH_STATE_KEY, else the file "
          "$PLINTH_STATE_KEY_FILE; docs/state.md)."};
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
