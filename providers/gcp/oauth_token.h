#pragma once
// The OAuth 2.0 token exchange of Google's JWT bearer grant (RFC 7523 §2.1):
// what is POSTed to a key file's token_uri and what comes back.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "engine/core/result.h"

namespace plinth::gcp {

inline constexpr const char* kJwtBearerGrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The application/x-www-form-urlencoded body that exchanges `assertion`:
/// grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=...
std::string token_request_body(std::string_view assertion);

/// An access token from the token endpoint. `access_token` is a secret: it is
/// never put in messages, logs, state or plan files.
struct AccessToken {
  std::string access_token;
  std::string token_type;  ///< "Bearer"
  std::chrono::seconds expires_in{0};
  std::chrono::system_clock::time_point expiry;  ///< when it was received + expires_in
  /// True when the token is expired at `now` or will be within `margin`
  /// (refresh a little early, as Google's libraries do).
  bool expires_within(std::chrono::seconds margin, std::chrono::system_clock::time_point now) const {
    return now + margin >= expiry;
  }
};

/// Google's OAuth 2.0 error answer, e.g.
/// {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}.
struct OAuthError {
  std::string error;        ///< invalid_grant, invalid_scope, invalid_request, unsupported_grant_type, ...
  std::string description;  ///< error_description; may be empty
  bool operator==(const OAuthError&) const = default;
};

/// The OAuth error in `body`, or nullopt when the body is not one.
std::optional<OAuthError> parse_oauth_error(std::string_view body);

/// Turns the token endpoint's answer (`status`, `body`) into a token, taking
/// `now` as the time it was received. `who` names the credential in messages
/// ("service account x@p.iam.gserviceaccount.com (key /path/key.json)").
/// - 200 with access_token, token_type and expires_in: the token (a 200
///   without them is a Fatal error naming the missing field); an expires_in
///   beyond a day counts as a day;
/// - 400/401/403 with an OAuth error: Fatal, naming the endpoint, the OAuth
///   error and its description, with advice for the usual causes (deleted or
///   rotated key, clock skew, bad scope, unknown account);
/// - 429: Throttled; 5xx: Retryable; anything else: Fatal.
/// Messages never contain the token or the assertion.
Result<AccessToken> parse_token_response(long status, std::string_view body, const std::string& token_uri,
                                         const std::string& who, std::chrono::system_clock::time_point now);

}  // namespace plinth::gcp
