#pragma once
// Untrusted mode (--untrusted, PLINTH_UNTRUSTED=1; docs/security.md): how a
// plan of a pull request's blueprint runs with the fleet's credentials in its
// environment, yet runs no code, reads no secret and sends none beyond what
// the operator's trust file allows, and writes no state.
#include <string>
#include <vector>

#include "engine/blueprint/trust.h"
#include "engine/cli/command.h"
#include "engine/core/result.h"

namespace plinth::cli {

struct Untrusted {
  bool on = false;
  bp::TrustFile trust;  ///< empty (path "") when no trust file was given: nothing is allowed
};

/// The settings of this run (off until setup_untrusted turns them on).
const Untrusted& untrusted();

/// Reads --untrusted / PLINTH_UNTRUSTED=1 and --trust FILE / PLINTH_TRUST_FILE
/// for `command`. In untrusted mode: a command that writes state or runs
/// operations is refused; the trust file is loaded, and refused when it lies
/// in the working directory or beside a blueprint (a pull request could edit
/// it there); the state must be named by --state or PLINTH_STATE (the
/// default sits in the checkout); blueprint files must not be symbolic links
/// out of their directory. `paths` are the blueprint paths given.
Status setup_untrusted(const std::string& command, const Args& args, const std::vector<std::string>& paths);

/// --untrusted and --trust, for the commands that read a blueprint.
std::vector<FlagSpec> untrusted_flags();

}  // namespace plinth::cli
