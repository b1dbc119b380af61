#pragma once
// Credential helpers the operator configured (AWS credential_process, a
// kubeconfig's exec plugin): run without a shell, read what they print, and
// stopped with their children when they take too long. What they print on
// stdout is a secret: it never goes into an error.
#include <string>
#include <utility>
#include <vector>

#include "engine/core/deadline.h"
#include "engine/core/result.h"

namespace plinth {

/// Runs `argv` (argv[0] searched on PATH unless it holds a '/') without a
/// shell, with stdin from /dev/null, Plinth's environment plus `extra_env`
/// (which wins), in a process group of its own, and returns its stdout. A
/// failure to start (ENOENT: "not found"), a non-zero exit (with the first
/// line of its stderr, control characters replaced) or the deadline passing
/// (the group is killed) is an error that starts with `what`.
Result<std::string> run_helper(const std::vector<std::string>& argv,
                               const std::vector<std::pair<std::string, std::string>>& extra_env,
                               const Deadline& deadline, const std::string& what);

}  // namespace plinth
