#include "providers/registry/plugins.h"

#include <cstdio>
#include <filesystem>

#include "engine/provider/registry.h"
#include "providers/plugin/plugin_provider.h"

namespace plinth {

namespace fs = std::filesystem;

bool Plugins::resolve(const std::string& name, const bp::ProviderDecl* declared, const bp::TrustFile* untrusted) {
  if (errors_.count(name)) return false;
  const ProviderSchema* known = schema_registry().provider(name);
  if (known && (!declared || declared->exec.empty())) return true;
  auto fail = [&](std::string why) {
    errors_[name] = std::move(why);
    return false;
  };
  if (known && known->source == "built-in")
    return fail("provider '" + name + "' is built into plinth; a plugin may not take its name (rename the plugin)");
  if (known) return true;  // started already

  std::string path;
  plugin::StartOptions start;
  // Under --untrusted a plugin runs only as the operator's trust file pins it.
  const std::string trusted_pin = untrusted ? untrusted->plugin_sha256(name) : "";
  if (untrusted && trusted_pin.empty())
    return fail("provider '" + name + "' is a plugin, and an untrusted plan runs a plugin only when the trust file " +
                (untrusted->path.empty() ? std::string("(none was given: --trust FILE)") : untrusted->path) +
                " pins it: add plugins: [{name: " + name + ", sha256: <sha256 of the reviewed plugin>}]");
  if (declared && !declared->exec.empty()) {
    fs::path p(declared->exec);
    if (p.is_relative()) p = fs::path(declared->base_dir) / p;
    path = fs::absolute(p).lexically_normal().string();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      return fail("provider '" + name + "': its exec " + path + " does not exist or is not a file");
    // A plugin the blueprint names runs only as the file that was reviewed:
    // the blueprint may come from an untrusted branch (docs/security.md).
    if (declared->sha256.empty()) {
      auto sum = plugin::file_sha256(path);
      return fail("provider '" + name + "': its exec " + path + " has no sha256 pin; a plugin declared in the "
                  "blueprint runs only when pinned. Review it, then add 'sha256: " +
                  (sum ? *sum : std::string("<sha256sum of the file>")) + "' beside its exec");
    }
    start.sha256 = declared->sha256;
  } else if (declared && !declared->sha256.empty()) {
    return fail("provider '" + name + "' has a sha256 pin but no exec: say which file the pin is for (exec: PATH); "
                "a pinned plugin is never looked up on PLINTH_PLUGIN_PATH");
  } else {
    auto found = plugin::find_plugin(name);
    if (!found) {
      std::string dirs;
      for (const auto& d : plugin::search_path()) dirs += (dirs.empty() ? "" : ", ") + d;
      return fail("unknown provider '" + name + "': it is not built in and no plugin plinth-provider-" + name +
                  " was found in " + dirs + " (set PLINTH_PLUGIN_PATH, or declare it under providers: with exec)");
    }
    path = *found;
  }
  if (!trusted_pin.empty()) {
    start.sha256 = trusted_pin;
    start.pinned_by = "the trust file " + untrusted->path;
  }
  auto started = plugin::PluginProvider::start(path, name, start);
  if (!started) return fail(started.error().message);
  ProviderSchema schema = (*started)->schema();
  if (auto st = schema_registry().add(schema); !st) {
    (*started)->close();
    return fail(st.error().message);
  }
  running_[name] = std::move(*started);
  return true;
}

std::string Plugins::why(const std::string& name) const {
  auto it = errors_.find(name);
  return it == errors_.end() ? "unknown provider '" + name + "'" : it->second;
}

Result<std::unique_ptr<Provider>> Plugins::take(const std::string& name) {
  auto it = running_.find(name);
  if (it == running_.end()) return Error::invalid(why(name));
  std::unique_ptr<Provider> p = std::move(it->second);
  running_.erase(it);
  return p;
}

void Plugins::close_all() {
  for (auto& [_, p] : running_) p->close();
  running_.clear();
}

Plugins& plugins() {
  static Plugins p;
  return p;
}

std::vector<std::string> plugin_search_path() { return plugin::search_path(); }

std::map<std::string, std::string> installed_plugins() { return plugin::discover_plugins(); }

}  // namespace plinth
