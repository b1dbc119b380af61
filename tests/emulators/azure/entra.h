#pragma once
// The Microsoft Entra side of azure-emulator: OpenID discovery, instance
// discovery, signing keys and the OAuth 2.0 v2.0 token endpoint for the
// client-credentials grant (client secret or certificate assertion), with
// Entra's AADSTS error answers. It also verifies the bearer tokens that the
// Resource Manager side receives.
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/emulators/azure/crypto.h"
#include "tests/emulators/azure/http.h"
#include "tests/emulators/azure/options.h"

namespace plinth::azure_emulator {

/// What Resource Manager learns from an Authorization header.
struct TokenCheck {
  bool ok = false;
  std::string code;         ///< ARM error code when !ok, e.g. ExpiredAuthenticationToken
  std::string message;      ///< ARM error message
  std::string description;  ///< error_description of the WWW-Authenticate challenge
  std::string tenant;
  std::string app_id;
  std::string object_id;
  bool reader = false;
  std::string token_id;  ///< the token's uti
};

class Entra {
 public:
  /// `client_certificate` is the certificate registered for options.apps[0]
  /// when --client-certificate is on (else null).
  Entra(const Options& options, std::shared_ptr<const KeyPair> signing_key,
        std::shared_ptr<const KeyPair> client_certificate);

  /// True for the paths Entra serves (/{tenant}/..., /common/discovery/...);
  /// Resource Manager owns /subscriptions, /tenants, /providers, /metadata.
  static bool owns(const std::string& path);

  /// Answers one Entra request.
  Response handle(const Request& r);

  /// Verifies `authorization` (the header value) as ARM does: RS256 signature
  /// by this emulator, not expired, audience one of --resource.
  TokenCheck check(const std::string& authorization) const;

  /// Issues a token for `client_id` and `resource` that expires `lifetime_s`
  /// from now (negative: already expired), bypassing the credential check.
  /// nullopt when the app is unknown. For /__emulator/token.
  std::optional<std::string> issue(const std::string& client_id, const std::string& resource, int lifetime_s);

  /// A managed identity token (IMDS, App Service): for `client_id` ("" = --client-id), `resource`, the
  /// configured lifetime. The answer in the endpoint's JSON shape, with the uti in token_id.
  Response managed_identity(const std::string& client_id, const std::string& resource, bool app_service);

  /// The emulator's own https://127.0.0.1:PORT, for instance discovery
  /// answers (MSAL drops the port from the endpoint it asks about).
  void set_self_base(const std::string& base) { self_base_ = base; }

  const std::string& tenant() const { return tenant_; }
  /// Registered apps without secrets, and token counters, for /__emulator/state.
  json describe() const;

 private:
  struct App {
    std::string client_id;
    std::string secret;
    std::string object_id;
    std::string thumbprint;  ///< raw SHA-1 of the registered certificate ("" for none)
    bool reader = false;
    std::vector<std::pair<std::string, std::string>> federated;  ///< (issuer, subject)
  };

  Response openid_configuration(const Request& r, const std::string& tenant);
  Response instance_discovery(const Request& r);
  Response keys();
  Response token(const Request& r, const std::string& tenant);
  /// Entra's error JSON: {"error", "error_description" with trace/correlation ids, "error_codes", ...}.
  Response error(const Request& r, int status, const std::string& error, int code, const std::string& text);
  /// "" when the client assertion proves `app`, else the AADSTS error text (with its code in `code`).
  std::string check_assertion(const Request& r, const App& app, const std::string& tenant,
                              const std::string& assertion_type, const std::string& assertion, int& code, int& status);
  /// "" when `assertion` is an OIDC token of one of the app's federated credentials, else the AADSTS text.
  std::string check_federated(const App& app, const std::string& assertion, int& code);
  /// A signed access token; its uti goes to `uti` when given.
  std::string mint(const App& app, const std::string& resource, int lifetime_s, bool certificate,
                   std::string* uti_out = nullptr);
  const App* find_app(const std::string& client_id) const;
  bool known_resource(const std::string& resource) const;

  std::string tenant_;
  std::vector<App> apps_;
  std::vector<std::string> resources_;
  int lifetime_s_;
  std::shared_ptr<const KeyPair> signing_;
  std::shared_ptr<const KeyPair> client_cert_;
  std::string self_base_;

  mutable std::mutex mu_;
  std::mt19937_64 rng_;
  int tokens_issued_ = 0;
  int token_failures_ = 0;
};

}  // namespace plinth::azure_emulator
