#pragma once
// Flags -> the operations' typed options (engine/run/options.h), parsed once
// per command; the flags they come from, shared by the commands that take them.
#include <string>
#include <vector>

#include "engine/cli/command.h"
#include "engine/run/factory.h"
#include "engine/run/options.h"
#include "engine/verify/verify.h"

namespace plinth::cli {

/// --state-key-file FILE, for commands that read or write the state.
FlagSpec state_key_flag();
/// --provider-option NAME.KEY=VALUE (repeatable).
FlagSpec provider_option_flag();
/// --format FORMAT (or --json) of plan and show: "text", "json", "markdown"
/// ("md") or "html"; --json with another --format is an error.
Result<std::string> output_format(const Args& args);
/// Where verify's facts come from (verify, audit --verify): --prometheus,
/// --prometheus-ca, --prometheus-token-file, --from.
std::vector<FlagSpec> verify_source_flags();
/// The facts of those flags: --from FILE... (probe output, DCGM scrapes),
/// else Prometheus at --prometheus, PLINTH_PROMETHEUS_URL or the blueprint's
/// monitoring.prometheus_url. A bearer token goes only to the first two.
struct VerifyFacts {
  std::vector<verify::Sample> samples;
  std::string source;  ///< "Prometheus at URL" or the files
};
Result<VerifyFacts> read_verify_facts(const Args& args, const bp::Blueprint& blueprint);
/// Flags shared by apply and destroy.
std::vector<FlagSpec> execute_flags();

/// --state, --state-key-file, --lock-timeout, -lock. A bad --lock-timeout
/// names the state it was for.
Result<run::StateOptions> state_options(const Args& args);
/// --provider-option, --force-conflicts, and the trust file in untrusted mode.
run::ProviderOptions provider_options(const Args& args);
/// --policy-dir; waivers.yaml beside the blueprint PATH...
run::PolicyOptions policy_options(const Args& args);
/// The planning options of `operation` ("plan", "apply", "destroy").
Result<run::PlanOptions> plan_options(const Args& args, const std::string& operation);
/// --parallelism and the rest of apply/destroy (confirm and cancel are the
/// command's to set).
Result<run::ApplyOptions> apply_options(const Args& args, const std::string& operation);

/// The process's provider factory: built-in providers and plugins, with the
/// trust file in untrusted mode.
run::ProviderFactory& provider_factory();

}  // namespace plinth::cli
