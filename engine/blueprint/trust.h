#pragma once
// The trust file of an untrusted plan (plinth plan --untrusted, docs/security.md):
// what the operator lets a blueprint from a pull request use. The blueprint and
// the working tree are the pull request's; the trust file, the environment and
// the flags are the operator's. Under --untrusted a plan runs a plugin only when
// the trust file pins it, reads and sends a credential only to the endpoints the
// trust file lists for it, and takes endpoint and authority options only from
// the environment, flags and the trust file.
#include <map>
#include <string>
#include <vector>

#include "engine/core/diagnostic.h"
#include "engine/core/result.h"
#include "engine/provider/resource.h"
#include "engine/provider/schema.h"

namespace plinth::bp {

struct TrustFile {
  /// A credential reference (exactly as a blueprint writes it, env:NAME or
  /// file:PATH) and the endpoints it may be sent to: patterns on the whole
  /// URL where '*' matches any run of characters and '?' any one
  /// ("https://bmc-*.dc1.example"; glob_match in engine/core/strings.h).
  struct Credential {
    std::string ref;
    std::vector<std::string> endpoints;
  };
  /// A plugin that may run, and the SHA-256 its executable must have.
  struct Plugin {
    std::string name;
    std::string sha256;
  };
  std::string path;  ///< where it was read from ("" when no trust file was given)
  std::vector<Credential> credentials;
  std::vector<Plugin> plugins;
  /// Provider options, as --provider-option would set them: name -> key -> value.
  std::map<std::string, std::map<std::string, std::string>> options;

  /// The pin for plugin `name`, or "" when the trust file has none.
  std::string plugin_sha256(const std::string& name) const;
  /// True when `ref` may be sent to `endpoint`.
  bool allows(const std::string& ref, const std::string& endpoint) const;
};

/// Reads a trust file:
///
///     apiVersion: plinth/v1
///     kind: Trust
///     credentials:
///       - {ref: env:LAB_BMC_CREDENTIALS, endpoints: ["https://bmc-*.dc1.example"]}
///     plugins:
///       - {name: promsd, sha256: 64 hex digits}
///     providers:
///       gcp: {endpoint: "https://compute.googleapis.com/compute/v1/"}
///
/// Unknown keys and wrong types are errors naming file:line:column.
Result<TrustFile> load_trust_file(const std::string& path);

/// The untrusted-plan check of the resources a plan would read or create:
/// one error for each credential reference (an attribute whose type marks it
/// `sends_to` an endpoint attribute) that `trust` does not allow for that
/// endpoint, at the resource's blueprint position, saying what the trust
/// file would need. Nothing is read or sent: run it before any provider is
/// opened.
Diagnostics check_untrusted_credentials(const std::vector<Resource>& resources, const TrustFile& trust);

}  // namespace plinth::bp
