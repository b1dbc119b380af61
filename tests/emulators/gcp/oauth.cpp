#include "tests/emulators/gcp/oauth.h"

#include "providers/gcp/service_account.h"

#include <openssl/rand.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <functional>

#include "providers/gcp/oauth_token.h"

namespace plinth::gcp_emulator {

using nlohmann::json;

namespace {

/// Google's words for an assertion outside its time window (seen in invalid_grant answers).
const char* kTimeframe =
    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp "
    "values and use a clock with skew to account for clock differences between systems.";
constexpr int64_t kSkewS = 300;  ///< tolerated clock difference

std::pair<int, json> oauth_error(int status, const std::string& error, const std::string& description) {
  return {status, json{{"error", error}, {"error_description", description}}};
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string random_token() {
  unsigned char bytes[48];
  RAND_bytes(bytes, sizeof bytes);
  return "ya29.c." + gcp::base64url_encode(std::string(reinterpret_cast<char*>(bytes), sizeof bytes));
}

}  // namespace

std::map<std::string, std::string> parse_form(const std::string& body) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < body.size()) {
    auto end = body.find('&', start);
    if (end == std::string::npos) end = body.size();
    std::string pair = body.substr(start, end - start);
    auto eq = pair.find('=');
    if (!pair.empty())
      out[url_decode(pair.substr(0, eq))] = eq == std::string::npos ? "" : url_decode(pair.substr(eq + 1));
    start = end + 1;
  }
  return out;
}

void TokenAuthority::trust(const std::string& email, const std::string& kid, gcp::RsaVerifier key,
                           bool project_access) {
  std::lock_guard<std::mutex> lock(mu_);
  Account& a = accounts_[email];
  a.keys.push_back({kid, std::move(key)});
  a.project_access = a.project_access || project_access;
}

void TokenAuthority::set_token_uri(const std::string& uri) {
  std::lock_guard<std::mutex> lock(mu_);
  token_uri_ = uri;
}

std::pair<int, json> TokenAuthority::exchange(const std::string& body) {
  auto form = parse_form(body);
  auto grant = form.find("grant_type");
  if (grant == form.end() || grant->second.empty())
    return oauth_error(400, "invalid_request", "Required parameter is missing: grant_type");
  if (grant->second == "refresh_token") {
    auto field = [&](const char* k) {
      auto it = form.find(k);
      return it == form.end() ? std::string() : it->second;
    };
    std::lock_guard<std::mutex> lock(mu_);
    if (refresh_token_.empty() || field("client_id") != user_client_id_ || field("client_secret") != user_client_secret_)
      return oauth_error(401, "invalid_client", "The OAuth client was not found.");
    if (field("refresh_token") != refresh_token_)
      return oauth_error(400, "invalid_grant", "Token has been expired or revoked.");
    Caller user;
    user.email = "user:ml-platform@example.com";
    user.project_access = true;
    user.scopes = {gcp::kCloudPlatformScope};
    return {200, issue(user)};
  }
  if (grant->second != gcp::kJwtBearerGrantType)
    return oauth_error(400, "unsupported_grant_type", "Invalid grant_type: " + grant->second);
  auto assertion = form.find("assertion");
  if (assertion == form.end() || assertion->second.empty())
    return oauth_error(400, "invalid_request", "Required parameter is missing: assertion");

  auto jwt = gcp::decode_jwt(assertion->second);
  if (!jwt) return oauth_error(400, "invalid_request", "Invalid assertion: " + jwt.error().message);
  auto claims = gcp::assertion_claims(*jwt);
  if (!claims) return oauth_error(400, "invalid_request", "Invalid assertion: " + claims.error().message);

  std::lock_guard<std::mutex> lock(mu_);
  auto account = accounts_.find(claims->iss);
  if (account == accounts_.end()) return oauth_error(400, "invalid_grant", "Invalid grant: account not found");
  std::string kid = jwt->header.value("kid", "");
  bool signed_ok = false;
  for (const Key& k : account->second.keys)
    if ((kid.empty() || k.kid == kid) && gcp::verify_rs256(*jwt, k.verifier)) signed_ok = true;
  if (!signed_ok) return oauth_error(400, "invalid_grant", "Invalid JWT Signature.");

  if (claims->aud != token_uri_ && claims->aud != "https://oauth2.googleapis.com/token" &&
      claims->aud != "https://www.googleapis.com/oauth2/v4/token")
    return oauth_error(
        400, "invalid_grant",
        "Invalid JWT: Failed audience check. The expected value was " + token_uri_ + " but got " + claims->aud + ".");
  auto now = std::chrono::system_clock::now();
  int64_t t = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  if (claims->exp <= claims->iat || claims->exp - claims->iat > 3600 || claims->iat > t + kSkewS ||
      claims->exp < t - kSkewS)
    return oauth_error(400, "invalid_grant", kTimeframe);
  if (!claims->sub.empty())
    return oauth_error(401, "unauthorized_client",
                       "Client is unauthorized to retrieve access tokens using this method, or client not authorized "
                       "for any of the scopes requested.");
  Caller caller;
  caller.email = claims->iss;
  caller.project_access = account->second.project_access;
  for (size_t start = 0; start < claims->scope.size();) {
    auto end = claims->scope.find(' ', start);
    if (end == std::string::npos) end = claims->scope.size();
    if (end > start) caller.scopes.insert(claims->scope.substr(start, end - start));
    start = end + 1;
  }
  if (caller.scopes.empty())
    return oauth_error(400, "invalid_scope", "Invalid OAuth scope or ID token audience provided.");

  return {200, issue(caller)};
}

json TokenAuthority::issue(const Caller& caller) {
  // Called with mu_ held.
  std::string token = random_token();
  tokens_[token] = {caller, std::chrono::system_clock::now() + std::chrono::seconds(lifetime_s_)};
  return json{{"access_token", token}, {"expires_in", lifetime_s_}, {"token_type", "Bearer"}, {"_principal", caller.email}};
}

std::string TokenAuthority::principal_of(const json& answer) {
  return answer.is_object() && answer.contains("_principal") ? answer["_principal"].get<std::string>() : "";
}

void TokenAuthority::trust_subject_token(const std::string& token) {
  std::lock_guard<std::mutex> lock(mu_);
  subject_tokens_.insert(token);
}

void TokenAuthority::trust_refresh_token(const std::string& client_id, const std::string& client_secret,
                                         const std::string& refresh_token) {
  std::lock_guard<std::mutex> lock(mu_);
  user_client_id_ = client_id;
  user_client_secret_ = client_secret;
  refresh_token_ = refresh_token;
}

std::pair<int, json> TokenAuthority::sts_exchange(const std::string& body) {
  auto form = parse_form(body);
  auto field = [&](const char* k) {
    auto it = form.find(k);
    return it == form.end() ? std::string() : it->second;
  };
  // Google's STS answers errors as {"error", "error_description"}.
  if (field("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange")
    return oauth_error(400, "unsupported_grant_type", "Unsupported grant type: '" + field("grant_type") + "'.");
  for (const char* k : {"audience", "subject_token", "subject_token_type", "requested_token_type"})
    if (field(k).empty()) return oauth_error(400, "invalid_request", std::string("Missing required parameter: ") + k);
  if (field("requested_token_type") != "urn:ietf:params:oauth:token-type:access_token")
    return oauth_error(400, "invalid_request", "Invalid requested_token_type.");
  const std::string audience = field("audience");
  if (audience.rfind("//iam.googleapis.com/", 0) != 0 || audience.find("/workloadIdentityPools/") == std::string::npos)
    return oauth_error(400, "invalid_target", "The target service indicated by the \"audience\" parameters is invalid.");
  std::lock_guard<std::mutex> lock(mu_);
  std::string subject = field("subject_token");  // google-auth sends a token file as it is, newline included
  while (!subject.empty() && std::isspace(static_cast<unsigned char>(subject.back()))) subject.pop_back();
  if (!subject_tokens_.count(subject))
    return oauth_error(400, "invalid_grant", "The ID Token's signature could not be verified with the JWKS of the "
                                             "workload identity pool provider.");
  Caller federated;
  federated.email = "principal:" + audience;
  federated.project_access = true;
  federated.scopes = {gcp::kCloudPlatformScope};
  json out = issue(federated);
  out["issued_token_type"] = "urn:ietf:params:oauth:token-type:access_token";
  return {200, out};
}

std::pair<int, json> TokenAuthority::generate_access_token(const std::string& token, const std::string& email) {
  auto google_error = [](int status, const std::string& reason, const std::string& message) {
    return std::pair<int, json>{status, json{{"error", {{"code", status}, {"message", message}, {"status", reason}}}}};
  };
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tokens_.find(token);
  if (token.empty() || it == tokens_.end() || it->second.expiry <= std::chrono::system_clock::now())
    return google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
  if (!accounts_.count(email))
    return google_error(404, "NOT_FOUND", "Not found; Gaia id not found for email " + email);
  Caller sa;
  sa.email = email;
  sa.project_access = accounts_[email].project_access;
  sa.scopes = {gcp::kCloudPlatformScope};
  json issued = issue(sa);
  const time_t expires = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()) + lifetime_s_;
  std::tm tm{};
  gmtime_r(&expires, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return {200, json{{"accessToken", issued["access_token"]}, {"expireTime", buf}, {"_principal", email}}};
}

json TokenAuthority::metadata_token(const std::string& email) {
  std::lock_guard<std::mutex> lock(mu_);
  Caller sa;
  sa.email = email;
  sa.project_access = accounts_.count(email) ? accounts_[email].project_access : true;
  sa.scopes = {gcp::kCloudPlatformScope};
  return issue(sa);
}

TokenAuthority::Check TokenAuthority::check(const std::string& token, Caller& out) const {
  if (token.empty()) return Check::Missing;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tokens_.find(token);
  if (it == tokens_.end() || it->second.expiry <= std::chrono::system_clock::now()) return Check::Invalid;
  out = it->second.caller;
  return Check::Ok;
}

int TokenAuthority::expire_all() {
  std::lock_guard<std::mutex> lock(mu_);
  auto now = std::chrono::system_clock::now();
  int live = 0;
  for (auto& [_, t] : tokens_) {
    if (t.expiry > now) ++live;
    t.expiry = now - std::chrono::seconds(1);
  }
  return live;
}

void TokenAuthority::set_lifetime(int seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  lifetime_s_ = seconds;
}

int TokenAuthority::live_tokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  auto now = std::chrono::system_clock::now();
  int live = 0;
  for (const auto& [_, t] : tokens_) live += t.expiry > now ? 1 : 0;
  return live;
}

std::string write_key_file(const std::string& path, const gcp::RsaSigner& signer, const std::string& project,
                           const std::string& email, const std::string& kid, const std::string& token_uri) {
  std::string escaped_email;
  for (char c : email) escaped_email += c == '@' ? std::string("%40") : std::string(1, c);
  char client_id[32];  // 21 digits, like Google's numeric service-account ids
  std::snprintf(client_id, sizeof client_id, "1%020llu",
                static_cast<unsigned long long>(std::hash<std::string>{}(email) % 10000000000000000000ULL));
  json key = {{"type", "service_account"},
              {"project_id", project},
              {"private_key_id", kid},
              {"private_key", signer.private_key_pem()},
              {"client_email", email},
              {"client_id", client_id},
              {"auth_uri", "https://accounts.google.com/o/oauth2/auth"},
              {"token_uri", token_uri},
              {"auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"},
              {"client_x509_cert_url", "https://www.googleapis.com/robot/v1/metadata/x509/" + escaped_email},
              {"universe_domain", "googleapis.com"}};
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return "cannot write " + tmp;
    out << key.dump(2) << "\n";
    if (!out.good()) return "cannot write " + tmp;
  }
  chmod(tmp.c_str(), 0600);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return "cannot rename " + tmp + " to " + path;
  return "";
}

}  // namespace plinth::gcp_emulator
