// plinth providers [PATH...]: what providers a blueprint can use (like
// `terraform providers`): built in, declared in the blueprint, or plugins on
// the search path; their versions, where they come from, resource types,
// sections and options.
#include <filesystem>

#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/core/files.h"
#include "engine/core/strings.h"
#include "engine/provider/docs.h"
#include "engine/provider/registry.h"
#include "providers/registry/plugins.h"

namespace plinth::cli {
namespace {

namespace fs = std::filesystem;

/// Rewrites the generated blocks of DIR/resources.md and DIR/providers/NAME.md.
int write_docs(const std::string& dir, Io& io) {
  std::vector<const ProviderSchema*> builtin;
  for (const ProviderSchema* s : schema_registry().providers())
    if (s->source == "built-in") builtin.push_back(s);
  auto update = [&](const std::string& path, const std::string& kind, const std::string& content) -> bool {
    auto page = read_file(path);
    if (!page) {
      fail(io, "providers", page.error().message);
      return false;
    }
    auto next = replace_generated(*page, kind, content);
    if (!next) {
      fail(io, "providers", path + ": " + next.error().message);
      return false;
    }
    if (*next == *page) return true;
    if (auto st = write_file_atomic(path, *next); !st) {
      fail(io, "providers", st.error().message);
      return false;
    }
    std::fprintf(io.out, "updated %s\n", path.c_str());
    return true;
  };
  if (!update(dir + "/resources.md", "resource types", resource_types_markdown(builtin))) return kExitFailure;
  for (const ProviderSchema* s : builtin) {
    const std::string page = dir + "/providers/" + s->name + ".md";
    std::error_code ec;
    if (!fs::exists(page, ec)) continue;  // the logical provider is documented in resources.md
    if (!update(page, "options", options_markdown(*s))) return kExitFailure;
    if (!s->instance_types.empty() && !update(page, "instance types", instance_types_markdown(*s))) return kExitFailure;
  }
  // The editors' JSON Schema: the burst-pool settings the providers declare
  // (the loader checks pools against the same specs) and who serves pools.
  const std::string schema_path = dir + "/plinth-v1.schema.json";
  auto text = read_file(schema_path);
  if (!text) return fail(io, "providers", text.error().message);
  Json schema = Json::parse(*text, nullptr, false);
  if (schema.is_discarded() || !schema.contains("$defs") || !schema["$defs"].contains("burst_pool"))
    return fail(io, "providers", schema_path + ": not the blueprint JSON Schema ($defs.burst_pool is missing)");
  schema["$defs"]["burst_pool_settings"] = settings_json_schema(builtin, "burst_pools");
  Json serving = Json::array();
  for (const ProviderSchema* s : builtin)
    for (const auto& sec : s->sections)
      if (sec.section == "burst_pools") serving.push_back(s->name);
  schema["$defs"]["burst_pool"]["properties"]["provider"]["examples"] = serving;
  const std::string next = schema.dump(2, ' ', false) + "\n";
  if (next != *text) {
    if (auto st = write_file_atomic(schema_path, next); !st) return fail(io, "providers", st.error().message);
    std::fprintf(io.out, "updated %s\n", schema_path.c_str());
  }
  return kExitSuccess;
}

int run_providers(const Args& args, Io& io) {
  if (auto dir = args.get("write-docs")) return write_docs(*dir, io);

  // Terraform users reach for `providers lock`: there is no lock file here, the
  // blueprint's sha256 pins are the lock.
  if (!args.positional.empty() && args.positional.front() == "lock") {
    std::error_code ec;
    if (!fs::exists("lock", ec))
      return fail(io, "providers",
                  "'lock' is not a subcommand: plinth has no lock file; a plugin is pinned where it is declared, "
                  "providers.NAME.sha256 in the blueprint (sha256sum the file you reviewed; docs/plugins.md), and the "
                  "built-in providers are part of the plinth binary");
  }
  // The blueprint (when given) declares plugins and names providers; load it
  // so they are started and their schemas registered.
  std::vector<bp::ProviderDecl> declared;
  std::set<std::string> used;
  if (!args.positional.empty()) {
    auto loaded = load_blueprint(args.positional, io);
    if (!loaded) return kExitFailure;
    declared = loaded->blueprint.providers;
    for (const auto& p : loaded->blueprint.node_pools) used.insert(p.provider);
    for (const auto& p : loaded->blueprint.burst_pools) used.insert(p.provider);
  }
  // Plugins on the search path are listed too (started for their schema).
  std::map<std::string, std::string> broken;
  for (const auto& [name, path] : installed_plugins())
    if (!schema_registry().provider(name))
      if (auto st = provider_factory().resolve(name, nullptr); !st) broken[name] = st.error().message;

  const auto schemas = schema_registry().providers();
  if (args.flag("json")) {
    Json out = Json::array();
    for (const ProviderSchema* s : schemas) {
      Json j = *s;
      j["options"] = s->all_options();
      j["used_by_blueprint"] = used.count(s->name) > 0;
      out.push_back(std::move(j));
    }
    Json doc = {{"providers", std::move(out)}, {"plugin_path", plugin_search_path()}};
    Json errors = Json::object();
    for (const auto& [name, why] : broken) errors[name] = why;
    doc["plugin_errors"] = errors;
    std::fprintf(io.out, "%s\n", doc.dump(2).c_str());
    return broken.empty() ? kExitSuccess : kExitFailure;
  }

  std::fprintf(io.out, "Providers%s:\n", args.positional.empty() ? "" : " (* = used by the blueprint)");
  for (const ProviderSchema* s : schemas) {
    std::fprintf(io.out, "\n%s %s %s  [%s]\n", used.count(s->name) ? "*" : " ", s->name.c_str(), s->version.c_str(),
                 s->source == "built-in" ? "built-in" : ("plugin " + s->source).c_str());
    if (!s->description.empty()) std::fprintf(io.out, "    %s\n", s->description.c_str());
    std::vector<std::string> types, sections;
    for (const auto& t : s->resource_types) types.push_back(t.type);
    for (const auto& sec : s->sections) sections.push_back(sec.section + (sec.is_default ? " (default)" : ""));
    std::fprintf(io.out, "    resource types: %s\n", join(types, ", ").c_str());
    if (!sections.empty()) std::fprintf(io.out, "    serves:         %s\n", join(sections, ", ").c_str());
    std::vector<std::string> own;
    for (const auto& o : s->options) {
      std::string text = o.name + " (" + to_string(o.type) + (o.secret ? ", secret" : "") +
                         (o.default_value.empty() ? "" : ", default " + o.default_value) + ")";
      if (!o.env.empty()) text += " [" + join(o.env, ", ") + "]";
      own.push_back(text);
    }
    if (!own.empty()) std::fprintf(io.out, "    options:        %s\n", join(own, "\n                    ").c_str());
    std::fprintf(io.out, "    common options: concurrency, rate, burst, retry_attempts, retry_base_ms, retry_max_ms,\n"
                         "                    read/create/update/delete_deadline (set as %sKEY or --provider-option %s.KEY=V)\n",
                 option_env_prefix(s->name).c_str(), s->name.c_str());
    if (!s->docs.empty()) std::fprintf(io.out, "    docs:           %s\n", s->docs.c_str());
  }
  for (const auto& [name, why] : broken) std::fprintf(io.out, "\n! %s: %s\n", name.c_str(), why.c_str());
  std::fprintf(io.out, "\nPlugin search path: %s\n", join(plugin_search_path(), ":").c_str());
  return broken.empty() ? kExitSuccess : kExitFailure;
}

const Register providers_command({
    "providers",
    "plinth providers [PATH...] [--json]",
    "List the providers available: built in, declared by the blueprint, and plugins.",
    "Lists every provider a blueprint can use: the built-in ones, the plugins it declares\n"
    "under providers: (exec, pinned by sha256) and the plugins found as\n"
    "plinth-provider-NAME on the plugin search path (PLINTH_PLUGIN_PATH, then\n"
    "~/.plinth/plugins, then lib/plinth/plugins beside the plinth binary). For each:\n"
    "its version, where it comes from, its resource types, the blueprint sections it\n"
    "serves and its options (with the environment variables they are read from). With\n"
    "PATH..., the providers the blueprint uses are marked '*'. --json prints the full\n"
    "schemas (docs/plugins.md describes the format). Exit 1 when a plugin on the path\n"
    "cannot be started.",
    {
        {"json", "", "Print the providers' schemas as JSON."},
        {"write-docs", "DIR",
         "For contributors: rewrite the generated tables of DIR/resources.md and DIR/providers/*.md\n"
         "(resource types, options, instance types) and the burst-pool settings of\n"
         "DIR/plinth-v1.schema.json."},
    },
    run_providers,
    70,
});

}  // namespace
}  // namespace plinth::cli
