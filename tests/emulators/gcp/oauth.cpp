#include "tests/emulators/gcp/oauth.h"

#include <openssl/rand.h>
#include <sys/stat.h>

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

  std::string token = random_token();
  tokens_[token] = {caller, now + std::chrono::seconds(lifetime_s_)};
  return {200, json{{"access_token", token}, {"expires_in", lifetime_s_}, {"token_type", "Bearer"}}};
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
