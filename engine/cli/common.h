#pragma once
// What every command shares: loading the blueprint with its diagnostics
// printed, and the "plinth COMMAND: message" error line.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/cli/command.h"
#include "engine/core/diagnostic.h"
#include "engine/run/blueprint.h"

namespace plinth::cli {

using run::Checked;
using run::Loaded;
using run::load_catalog;

/// Loads PATH... (files or directories) and runs the domain rules, the
/// providers resolved through provider_factory().
Checked check_blueprint(const std::vector<std::string>& paths);

/// check_blueprint, printing every diagnostic (and the error count) to
/// io.err; nullopt when there was any error.
std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io);

/// load_blueprint for commands that write reports (audit, plan --report):
/// when the blueprint is invalid, `report` is called with what was found
/// (before returning nullopt), so CI still gets a report.
std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io,
                                     const std::function<void(const Checked&)>& report);

/// Prints diagnostics (errors and warnings) to io.err with source excerpts.
void print_diagnostics(const Diagnostics& ds, Io& io);

/// Prints "plinth CMD: message" to io.err and returns kExitFailure.
int fail(Io& io, const std::string& command, const std::string& message);

}  // namespace plinth::cli
