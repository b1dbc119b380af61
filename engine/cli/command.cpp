#include "engine/cli/command.h"

#include <algorithm>

#include "engine/core/strings.h"

namespace plinth::cli {

namespace {
std::vector<Command>& registry() {
  static std::vector<Command> r;
  return r;
}

const FlagSpec* find_flag(const Command& cmd, const std::string& name) {
  for (const auto& f : cmd.flags)
    if (f.name == name) return &f;
  for (const auto& f : common_flags())
    if (f.name == name) return &f;
  return nullptr;
}
}  // namespace

const std::vector<FlagSpec>& common_flags() {
  static const std::vector<FlagSpec> f = {
      {"help", "", "Show this help."},
      {"no-color", "", "Never colour the output (also NO_COLOR=1)."},
      {"log-level", "LEVEL",
       "error, warn (default), info, debug or trace: more lines on stderr, trace with every HTTP request "
       "(secrets redacted; also PLINTH_LOG=LEVEL; docs/logging.md).",
       false,
       {"error", "warn", "info", "debug", "trace"}},
  };
  return f;
}

Register::Register(Command c) { registry().push_back(std::move(c)); }

std::vector<const Command*> commands() {
  std::vector<const Command*> out;
  for (const auto& c : registry()) out.push_back(&c);
  std::sort(out.begin(), out.end(), [](const Command* a, const Command* b) {
    return std::tie(a->order, a->name) < std::tie(b->order, b->name);
  });
  return out;
}

const Command* find_command(const std::string& name) {
  for (const auto& c : registry())
    if (c.name == name) return &c;
  return nullptr;
}

bool Args::flag(const std::string& name, bool def) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return def;
  const std::string& v = it->second.back();
  return !(v == "false" || v == "0" || v == "no" || v == "off");
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string Args::get_or(const std::string& name, const std::string& def) const {
  auto v = get(name);
  return v ? *v : def;
}

std::vector<std::string> Args::all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

Result<Args> parse_args(const Command& cmd, const std::vector<std::string>& argv) {
  Args args;
  bool only_positional = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (only_positional || a.size() < 2 || a[0] != '-') {
      args.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (auto eq = body.find('='); eq != std::string::npos) {
      value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    const FlagSpec* spec = find_flag(cmd, body);
    if (!spec) {
      std::vector<std::string> names;
      for (const auto& f : cmd.flags) names.push_back(f.name);
      for (const auto& f : common_flags()) names.push_back(f.name);
      std::string msg = "plinth " + cmd.name + ": unknown flag '" + a + "'";
      if (auto m = closest_match(body, names)) msg += "; did you mean '--" + *m + "'?";
      msg += " (see 'plinth help " + cmd.name + "')";
      return Error::invalid(msg);
    }
    if (spec->value_name.empty()) {
      args.set(body, value ? *value : "true");
      continue;
    }
    if (!value) {
      if (i + 1 >= argv.size())
        return Error::invalid("plinth " + cmd.name + ": flag '--" + body + "' needs a value (" + spec->value_name + ")");
      value = argv[++i];
    }
    if (!spec->repeatable && args.has(body))
      return Error::invalid("plinth " + cmd.name + ": flag '--" + body + "' given twice");
    args.set(body, *value);
  }
  return args;
}

std::string command_help(const Command& cmd) {
  std::string out = "Usage: " + cmd.usage + "\n\n" + cmd.summary + "\n";
  if (!cmd.help.empty()) out += "\n" + cmd.help + "\n";
  auto print_flags = [&](const std::vector<FlagSpec>& flags) {
    for (const auto& f : flags) {
      std::string left = "  --" + f.name + (f.value_name.empty() ? "" : " " + f.value_name);
      if (left.size() < 30) left.resize(30, ' ');
      else left += "\n" + std::string(30, ' ');
      // Say "(repeatable)" once, whether or not the help text already does.
      const bool says = f.help.find("(repeatable") != std::string::npos;
      out += left + f.help + (f.repeatable && !says ? " (repeatable)" : "") + "\n";
    }
  };
  out += "\nFlags:\n";
  print_flags(cmd.flags);
  print_flags(common_flags());
  return out;
}

}  // namespace plinth::cli
