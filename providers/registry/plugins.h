#pragma once
// The plugins one run uses: found (declared in the blueprint or on the
// plugin search path), checked against their pinned SHA-256, started and
// handshaken once; their schemas go into the schema registry and their
// processes to the ProviderSet that uses them.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/blueprint/trust.h"
#include "engine/core/result.h"
#include "engine/provider/provider.h"

namespace plinth {

class Plugins {
 public:
  /// Makes provider `name` known, once: a built-in provider needs nothing
  /// (unless `declared` gives it an exec: an error); a declared plugin is
  /// started from its exec (relative to its blueprint's directory) after its
  /// sha256 is checked; an undeclared name is looked up as
  /// plinth-provider-NAME on the plugin search path. True when its schema is
  /// registered; otherwise why(name) says what went wrong. `untrusted`: the
  /// operator's trust file in untrusted mode (a plugin runs only as it pins
  /// it; docs/security.md), null otherwise.
  bool resolve(const std::string& name, const bp::ProviderDecl* declared, const bp::TrustFile* untrusted);
  std::string why(const std::string& name) const;
  /// The running plugin `name` (resolved before), handed over once.
  Result<std::unique_ptr<Provider>> take(const std::string& name);
  /// Closes the plugins nobody took.
  void close_all();

 private:
  std::map<std::string, std::unique_ptr<Provider>> running_;
  std::map<std::string, std::string> errors_;
};

/// The process's plugins: each started once, whichever run uses it.
Plugins& plugins();

/// Where plugins are looked for ($PLINTH_PLUGIN_PATH, then the defaults).
std::vector<std::string> plugin_search_path();

/// Every plinth-provider-NAME on plugin_search_path(): name -> path (the
/// first one found of each name).
std::map<std::string, std::string> installed_plugins();

}  // namespace plinth
