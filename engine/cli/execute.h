#pragma once
// The front end of apply and destroy once planned: the question on a
// terminal, SIGINT/SIGTERM turned into cancellation, run::apply, the exit code.
#include <string>

#include "engine/cli/command.h"
#include "engine/run/apply.h"

namespace plinth::cli {

/// Runs run::apply on `planned` with `options`, asking "Only 'yes' will be
/// accepted" on a terminal unless --auto-approve, with SIGINT/SIGTERM
/// handlers installed for the operation: the first SIGINT stops starting
/// operations, a second one (or SIGTERM) cancels those in flight. Returns 0
/// only when every change succeeded.
int execute(const Args& args, Io& io, run::ApplyOptions options, run::Planned& planned, run::ProviderSet& providers,
            run::Events& events);

/// apply PATH... and destroy PATH...: the options from the flags, run::plan
/// (the whole state deleted for "destroy"), then execute() with the view
/// --json asks for.
int plan_and_execute(const Args& args, Io& io, const std::string& operation);

/// refresh, plan -refresh-only and apply -refresh-only (`command`): reads
/// every resource in state through its provider and reports the drift; plan
/// records nothing, apply records it after the question (unless
/// --auto-approve), refresh records it at once.
int refresh_only(const Args& args, Io& io, const std::string& command);

/// "Only 'yes' will be accepted" on the terminal; true for "yes".
bool confirm(Io& io, const std::string& operation);

}  // namespace plinth::cli
