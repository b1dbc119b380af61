#include "providers/gcp/oauth_token.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "engine/net/http.h"
#include "engine/core/wire.h"

namespace plinth::gcp {
namespace {

using nlohmann::json;

/// What usually causes an OAuth error and what to do about it.
std::string advice(const OAuthError& e) {
  const std::string& d = e.description;
  if (e.error == "invalid_grant") {
    if (d.find("Signature") != std::string::npos)
      return "the key is not (or no longer) a valid key of this service account: it may have been deleted, "
             "disabled or rotated; create a new key and point the provider at it";
    if (d.find("short-lived") != std::string::npos || d.find("timeframe") != std::string::npos)
      return "the assertion's iat/exp are outside what the server accepts: check this machine's clock (NTP)";
    if (d.find("account not found") != std::string::npos)
      return "the service account does not exist (deleted?); check client_email in the key file";
    return "the server refused the signed assertion; check the key file";
  }
  if (e.error == "invalid_scope") return "the requested OAuth scopes are not valid for this account";
  if (e.error == "unauthorized_client" || e.error == "invalid_client")
    return "the account may not use this grant; check that the key file is a service-account key";
  return "check the key file and the token endpoint";
}

}  // namespace

std::string token_request_body(std::string_view assertion) {
  return "grant_type=" + net::percent_encode(kJwtBearerGrantType) + "&assertion=" + net::percent_encode(assertion);
}

std::optional<OAuthError> parse_oauth_error(std::string_view body) {
  json doc = parse_json_or_discard(body);
  if (!doc.is_object()) return std::nullopt;
  auto err = doc.find("error");
  if (err == doc.end() || !err->is_string()) return std::nullopt;
  OAuthError out;
  out.error = err->get<std::string>();
  if (auto d = doc.find("error_description"); d != doc.end() && d->is_string()) out.description = d->get<std::string>();
  return out;
}

Result<AccessToken> parse_token_response(long status, std::string_view body, const std::string& token_uri,
                                         const std::string& who, std::chrono::system_clock::time_point now) {
  std::string where = "token endpoint " + token_uri + " (" + who + ")";
  if (status == 200) {
    json doc = parse_json_or_discard(body);
    if (!doc.is_object()) return Error::fatal(where + " answered 200 with a body that is not a JSON object");
    AccessToken t;
    auto tok = doc.find("access_token");
    if (tok == doc.end() || !tok->is_string() || tok->get<std::string>().empty())
      return Error::fatal(where + " answered 200 without an access_token");
    t.access_token = tok->get<std::string>();
    auto type = doc.find("token_type");
    if (type == doc.end() || !type->is_string()) return Error::fatal(where + " answered 200 without a token_type");
    t.token_type = type->get<std::string>();
    if (t.token_type != "Bearer" && t.token_type != "bearer")
      return Error::fatal(where + " issued a '" + t.token_type + "' token; only Bearer tokens are supported");
    auto exp = doc.find("expires_in");
    if (exp == doc.end() || !exp->is_number() || exp->get<double>() <= 0)
      return Error::fatal(where + " answered 200 without a positive expires_in");
    // Google's tokens live an hour; a lifetime beyond a day is read as a day
    // (the token is fetched again sooner, and a 401 fetches it anyway), never
    // as a number of seconds too large for the clock.
    t.expires_in = std::chrono::seconds(static_cast<long long>(std::min(exp->get<double>(), 86400.0)));
    t.expiry = now + t.expires_in;
    return t;
  }
  std::string server;
  auto oauth = parse_oauth_error(body);
  if (oauth) server = oauth->error + (oauth->description.empty() ? "" : ": " + oauth->description);
  if (status == 429)
    return Error{Error::Kind::Throttled, where + " is throttling (HTTP 429)" + (server.empty() ? "" : ": " + server),
                 0};
  if (status >= 500)
    return Error{Error::Kind::Retryable,
                 where + " failed with HTTP " + std::to_string(status) + (server.empty() ? "" : ": " + server), 0};
  if (oauth)
    return Error::fatal(where + " refused the assertion (HTTP " + std::to_string(status) + ") with " + server + "; " +
                        advice(*oauth));
  return Error::fatal(where + " answered HTTP " + std::to_string(status) + " without an OAuth error body");
}

}  // namespace plinth::gcp
