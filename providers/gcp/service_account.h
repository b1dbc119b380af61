#pragma once
// Google service-account key files (the JSON that "Create key" in the console
// or `gcloud iam service-accounts keys create` writes, and that
// GOOGLE_APPLICATION_CREDENTIALS names) and the JWT bearer assertion made from
// one, as Google's client libraries make it.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"

namespace plinth::gcp {

/// The OAuth scope Plinth asks for: every Google Cloud API the account's IAM
/// roles allow.
inline constexpr const char* kCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform";

/// Google's own token endpoint, for key files that lack token_uri.
inline constexpr const char* kGoogleTokenUri = "https://oauth2.googleapis.com/token";

/// A parsed service-account key. `private_key_pem` is a secret: it is never
/// put in messages, logs, state or plan files.
struct ServiceAccountKey {
  std::string source;          ///< where it came from ("/path/key.json"), for messages
  std::string project_id;      ///< the project the account belongs to
  std::string private_key_id;  ///< the key's id: the JWT header's "kid"
  std::string private_key_pem;
  std::string client_email;  ///< the account: the JWT's "iss"
  std::string client_id;     ///< optional
  std::string token_uri;     ///< where assertions are exchanged for access tokens
  bool operator==(const ServiceAccountKey&) const = default;
};

/// Parses the JSON text of a key file; `source` names it in errors. Requires
/// "type": "service_account" and non-empty string fields project_id,
/// private_key_id, private_key (an unencrypted RSA PEM key, checked by parsing
/// it), client_email (an address) and token_uri (an https URL; http only for
/// loopback hosts). Every error names `source` and the field, says what to do,
/// and never quotes the private key; a JSON syntax error gives
/// source:line:column.
Result<ServiceAccountKey> parse_service_account_key(std::string_view json_text, const std::string& source);

/// Reads `path` (e.g. $GOOGLE_APPLICATION_CREDENTIALS) and parses it.
Result<ServiceAccountKey> load_service_account_key(const std::string& path);

/// The JWT bearer assertion for `key`: header {alg RS256, typ JWT, kid
/// private_key_id}, claims iss=client_email, scope=`scopes` joined by spaces,
/// aud=token_uri, iat=`now`, exp=`now`+`lifetime` (Google accepts at most one
/// hour). Signed with the key's private key.
Result<std::string> make_assertion(const ServiceAccountKey& key, const std::vector<std::string>& scopes,
                                   std::chrono::system_clock::time_point now,
                                   std::chrono::seconds lifetime = std::chrono::seconds(3600));

}  // namespace plinth::gcp
