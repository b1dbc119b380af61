#pragma once
// Untrusted mode's checks of what the operator gave (docs/security.md): a
// plan of a pull request's blueprint runs with the fleet's credentials in its
// environment, so the trust file and the state must come from outside the
// checkout the pull request controls, and the blueprint may not reach out of
// it through a symbolic link. The CLI reads the flags; this decides.
#include <optional>
#include <string>
#include <vector>

#include "engine/blueprint/trust.h"
#include "engine/core/result.h"

namespace plinth::run {

/// Whether `command` may run in untrusted mode: only commands that read
/// (plan, validate, show, graph, render, rules, catalog, version,
/// providers, policy, audit, help, completion).
bool runs_untrusted(const std::string& command);

/// Checks an untrusted run of `command` on the blueprint `paths` (the
/// working directory when none) and loads the operator's trust file
/// (`trust`: "" for none, then nothing is allowed). Refused: a command that
/// writes (runs_untrusted), a trust file inside the checkout of a blueprint,
/// a plan without `state` named by the operator or with a state file inside
/// the checkout, and a blueprint file that is a symbolic link out of its
/// directory. Each error says what to do.
Result<bp::TrustFile> check_untrusted(const std::string& command, const std::string& trust,
                                      const std::optional<std::string>& state, const std::vector<std::string>& paths);

}  // namespace plinth::run
