#include "engine/cli/plugins.h"

#include <cstdio>
#include <filesystem>

#include "engine/provider/registry.h"
#include "providers/plugin/plugin_provider.h"

namespace plinth::cli {

namespace fs = std::filesystem;

bool Plugins::resolve(const std::string& name, const bp::ProviderDecl* declared) {
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
  if (declared && !declared->exec.empty()) {
    fs::path p(declared->exec);
    if (p.is_relative()) p = fs::path(declared->base_dir) / p;
    path = fs::absolute(p).lexically_normal().string();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      return fail("provider '" + name + "': its exec " + path + " does not exist or is not a file");
    if (!declared->sha256.empty()) {
      auto sum = plugin::file_sha256(path);
      if (!sum) return fail("provider '" + name + "': cannot read " + path + " to check its sha256: " + sum.error().message);
      if (*sum != declared->sha256)
        return fail("provider '" + name + "': " + path + " has sha256 " + *sum + ", but the blueprint pins " +
                    declared->sha256 +
                    "; this is not the plugin that was reviewed. Update the pin only after reviewing the new plugin");
    }
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
  auto started = plugin::PluginProvider::start(path, name);
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

Status resolve_for_loader(const std::string& name, const bp::ProviderDecl* declared) {
  if (plugins().resolve(name, declared)) return {};
  return Error::invalid(plugins().why(name));
}

}  // namespace plinth::cli
