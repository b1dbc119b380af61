#pragma once
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.h"

namespace plinth::cli {

/// Exit codes, following `terraform plan -detailed-exitcode` (ninja's exit_status.h idea).
enum ExitStatus : int {
  kExitSuccess = 0,  ///< success; for plan: no changes
  kExitFailure = 1,  ///< error, invalid input, or a mandatory policy failure
  kExitChanges = 2,  ///< plan --detailed-exitcode: there are changes
};

struct FlagSpec {
  std::string name;        ///< without dashes: "state", "detailed-exitcode"
  std::string value_name;  ///< "" for a boolean flag ("--x", "--x=true|false")
  std::string help;
  bool repeatable = false;
  std::vector<std::string> choices;  ///< the values it takes, when it is a fixed set (shell completion)
};

/// Parsed command line of one command. Flags may be written `--flag`,
/// `-flag`, `--flag=value` or `--flag value` (the Terraform habit).
class Args {
 public:
  std::vector<std::string> positional;
  bool has(const std::string& flag) const { return values_.count(flag) > 0; }
  /// A boolean flag: absent -> def; "--x" -> true; "--x=false" -> false.
  bool flag(const std::string& name, bool def = false) const;
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& def) const;
  std::vector<std::string> all(const std::string& name) const;
  void set(const std::string& name, const std::string& value) { values_[name].push_back(value); }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

/// Where a command writes, and whether that is a terminal (colour, prompts).
struct Io {
  FILE* out = stdout;
  FILE* err = stderr;
  bool out_tty = false;
  bool err_tty = false;
  bool in_tty = false;
  bool color = false;  ///< colour on stdout (TTY and no NO_COLOR)
  bool group = true;   ///< plans grouped by pool and action (false: --no-group)
};

using RunFn = int (*)(const Args& args, Io& io);

/// One subcommand (ninja's Tool table). Each engine/cli/<command>.cpp
/// registers itself with a static `Register` object.
struct Command {
  std::string name;
  std::string usage;    ///< "plinth plan PATH... [flags]"
  std::string summary;  ///< one line for `plinth help`
  std::string help;     ///< paragraphs for `plinth help NAME`
  std::vector<FlagSpec> flags;
  RunFn run = nullptr;
  int order = 100;  ///< position in `plinth help`
  std::vector<std::string> subcommands;  ///< "state list|show|...": the first argument's words (shell completion)
};

/// All registered commands, sorted by `order` then name.
std::vector<const Command*> commands();
const Command* find_command(const std::string& name);

struct Register {
  explicit Register(Command c);
};

/// Parses argv (after the command name) against `cmd.flags`. Flags common to
/// every command (--help, --no-color, --chdir) are added automatically.
Result<Args> parse_args(const Command& cmd, const std::vector<std::string>& argv);

/// The flags every command accepts (--help, --no-color), after its own.
const std::vector<FlagSpec>& common_flags();

/// The text of `plinth help NAME`.
std::string command_help(const Command& cmd);

}  // namespace plinth::cli
