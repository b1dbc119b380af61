// plinth: the command-line front end. Thin on purpose: it picks a command
// from the table (engine/cli/command.h), parses its flags and runs it; every
// stage lives in the engine libraries.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "engine/cli/command.h"
#include "engine/cli/allocator.h"
#include "engine/cli/untrusted.h"
#include "engine/core/log.h"
#include "engine/core/strings.h"
#include "providers/registry/plugins.h"
#include "providers/registry/registry.h"

using namespace plinth::cli;

namespace {

void print_overview(FILE* f) {
  std::fprintf(f,
               "Usage: plinth COMMAND [ARGS] [FLAGS]\n\n"
               "Plinth keeps GPU/ML infrastructure equal to a git-tracked blueprint.\n\nCommands:\n");
  for (const Command* c : commands()) std::fprintf(f, "  %-10s %s\n", c->name.c_str(), c->summary.c_str());
  std::fprintf(f,
               "\nRun 'plinth help COMMAND' (or 'plinth COMMAND --help') for a command's flags.\n"
               "Exit codes: 0 success (plan: no changes), 1 error or mandatory policy failure,\n"
               "2 plan has changes (with --detailed-exitcode).\n");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    plinth::register_builtin_providers();
    std::vector<std::string> rest(argv + 1, argv + argc);
    if (rest.empty()) {
      print_overview(stderr);
      return kExitFailure;
    }
    std::string name = rest.front();
    rest.erase(rest.begin());
    if (name == "--help" || name == "-help" || name == "-h") {
      print_overview(stdout);
      return kExitSuccess;
    }
    if (name == "--version" || name == "-version") name = "version";
    if (name == "help") {
      if (rest.empty()) {
        print_overview(stdout);
        return kExitSuccess;
      }
      name = rest.front();
      rest = {"--help"};
    }
    const Command* cmd = find_command(name);
    if (!cmd) {
      std::vector<std::string> names;
      for (const Command* c : commands()) names.push_back(c->name);
      std::fprintf(stderr, "plinth: unknown command '%s'", plinth::safe_text(name).c_str());
      if (auto m = plinth::closest_match(name, names)) std::fprintf(stderr, "; did you mean '%s'?", m->c_str());
      std::fprintf(stderr, "\nRun 'plinth help' for the list of commands.\n");
      return kExitFailure;
    }
    auto args = parse_args(*cmd, rest);
    if (!args) {
      std::fprintf(stderr, "%s\n", plinth::safe_text(args.error().message).c_str());
      return kExitFailure;
    }
    if (args->flag("help")) {
      std::fputs(command_help(*cmd).c_str(), stdout);
      return kExitSuccess;
    }
    // --log-level, else PLINTH_LOG, else warn (docs/logging.md).
    {
      const char* env = std::getenv("PLINTH_LOG");
      const std::string wanted = args->has("log-level") ? args->get_or("log-level", "") : (env ? env : "");
      if (!wanted.empty()) {
        auto level = plinth::log::parse_level(wanted);
        if (!level) {
          std::fprintf(stderr, "plinth %s: %s '%s' is not a log level; use error, warn, info, debug or trace\n",
                       cmd->name.c_str(), args->has("log-level") ? "--log-level" : "PLINTH_LOG",
                       plinth::safe_text(wanted).c_str());
          return kExitFailure;
        }
        plinth::log::set_level(*level);
      }
    }
    if (plinth::log::enabled(plinth::log::Level::Debug)) {
      plinth::log::write(plinth::log::Level::Debug, "malloc", allocator_description());
    }
    if (auto st = setup_untrusted(cmd->name, *args, args->positional); !st) {
      std::fprintf(stderr, "plinth %s: %s\n", cmd->name.c_str(), plinth::safe_text(st.error().message).c_str());
      return kExitFailure;
    }
    Io io;
    io.out_tty = isatty(STDOUT_FILENO);
    io.err_tty = isatty(STDERR_FILENO);
    io.in_tty = isatty(STDIN_FILENO);
    const char* no_color = std::getenv("NO_COLOR");
    io.color = io.out_tty && !(no_color && *no_color) && !args->flag("no-color");
    io.group = !args->flag("no-group");
    int rc = cmd->run(*args, io);
    plinth::plugins().close_all();
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plinth: internal error: %s\nThis is a bug; please report it with the command line.\n",
                 plinth::safe_text(e.what()).c_str());
    return kExitFailure;
  }
}
