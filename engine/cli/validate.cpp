// plinth validate PATH...: load strictly and run the domain rules.
#include <nlohmann/json.hpp>

#include "engine/cli/common.h"
#include "engine/cli/untrusted.h"

namespace plinth::cli {
namespace {

/// Version of the `plinth validate --json` document (docs/rules.md).
constexpr const char* kValidateJsonVersion = "1.0";

nlohmann::json diagnostic_json(const Diagnostic& d) {
  nlohmann::json loc = nullptr;
  if (d.loc.known()) loc = {{"file", d.loc.file}, {"line", d.loc.line}, {"column", d.loc.column}};
  return {{"code", d.code},        {"severity", to_string(d.severity)}, {"message", d.message},
          {"hint", d.hint},        {"address", d.address},              {"location", loc}};
}

/// --json: one document on stdout whatever the outcome; the exit code says
/// whether the blueprint is valid.
int validate_json(const Args& args, Io& io) {
  Checked c = check_blueprint(args.positional);
  if (!c.fatal.empty()) return fail(io, "validate", c.fatal);
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : c.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}});
  nlohmann::json diags = nlohmann::json::array();
  for (const auto& d : c.diagnostics) diags.push_back(diagnostic_json(d));
  nlohmann::json bp = {{"files", files}};
  if (c.loaded) {
    bp["name"] = c.loaded->blueprint.metadata.name;
    bp["node_pools"] = c.loaded->blueprint.node_pools.size();
    bp["burst_pools"] = c.loaded->blueprint.burst_pools.size();
  }
  nlohmann::json j = {{"format_version", kValidateJsonVersion},
                      {"valid", c.loaded.has_value()},
                      {"blueprint", bp},
                      {"summary",
                       {{"errors", count(c.diagnostics, Severity::Error)},
                        {"warnings", count(c.diagnostics, Severity::Warning)},
                        {"infos", count(c.diagnostics, Severity::Info)}}},
                      {"diagnostics", diags}};
  std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::fwrite(text.data(), 1, text.size(), io.out);
  return c.loaded ? kExitSuccess : kExitFailure;
}

int run_validate(const Args& args, Io& io) {
  if (args.flag("json")) return validate_json(args, io);
  auto loaded = load_blueprint(args.positional, io);
  if (!loaded) return kExitFailure;
  size_t warnings = count(loaded->diagnostics, Severity::Warning);
  std::fprintf(io.out, "%s is valid: %zu node pool(s), %zu burst pool(s), %zu warning(s).\n",
               loaded->blueprint.metadata.name.empty() ? "blueprint" : loaded->blueprint.metadata.name.c_str(),
               loaded->blueprint.node_pools.size(), loaded->blueprint.burst_pools.size(), warnings);
  return kExitSuccess;
}

const Register validate_command({
    "validate",
    "plinth validate PATH... [--json]",
    "Check blueprints: strict schema, references and GPU/ML domain rules.",
    "PATH is a blueprint file or a directory of *.yaml files; several are merged into one\n"
    "blueprint. Every error is printed with file:line:column and a hint; warnings do not\n"
    "fail the run. Rule IDs are listed in docs/rules.md. --json prints one JSON document\n"
    "(format in docs/rules.md) with every diagnostic instead, valid or not.\n"
    "Exit codes: 0 valid (warnings allowed), 1 invalid.",
    {
        {"json", "", "Print the result as JSON (docs/rules.md, \"validate --json\")."},
        untrusted_flags()[0],
        untrusted_flags()[1],
    },
    run_validate,
    10,
});

}  // namespace
}  // namespace plinth::cli
