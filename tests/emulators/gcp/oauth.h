#pragma once
// gcp-emulator's OAuth 2.0 side: the service accounts it knows, the token
// endpoint (JWT bearer grant, RFC 7523) and the bearer tokens it issued.
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "providers/gcp/jwt.h"

namespace plinth::gcp_emulator {

/// Who called, once their bearer token checked out.
struct Caller {
  std::string email;
  std::set<std::string> scopes;
  bool project_access = false;  ///< false: the account has no IAM role on the project (403 on every call)
};

class TokenAuthority {
 public:
  enum class Check { Ok, Missing, Invalid };

  explicit TokenAuthority(int token_lifetime_s) : lifetime_s_(token_lifetime_s) {}

  /// Accepts assertions from `email` signed by `key` (header kid `kid`).
  /// `project_access` false: tokens are issued, but Compute calls are denied.
  void trust(const std::string& email, const std::string& kid, gcp::RsaVerifier key, bool project_access);
  /// The token endpoint URL clients put in `aud` (besides Google's own).
  void set_token_uri(const std::string& uri);

  /// POST /token with an application/x-www-form-urlencoded `body`: 200 with
  /// {"access_token", "expires_in", "token_type": "Bearer"} or Google's OAuth
  /// error JSON ({"error": ..., "error_description": ...}) with its status.
  std::pair<int, nlohmann::json> exchange(const std::string& body);

  /// Checks a bearer token ("" when the request had none).
  Check check(const std::string& token, Caller& out) const;

  /// Workload identity federation: Security Token Service's token exchange (POST /v1/token, form body)
  /// of a subject token from `subject_tokens`; the federated principal may call Compute and impersonate.
  void trust_subject_token(const std::string& token);
  std::pair<int, nlohmann::json> sts_exchange(const std::string& body);
  /// IAM Credentials generateAccessToken for `email`, asked with bearer `token`: {"accessToken", "expireTime"}.
  std::pair<int, nlohmann::json> generate_access_token(const std::string& token, const std::string& email);
  /// The authorized_user refresh token the refresh_token grant accepts.
  void trust_refresh_token(const std::string& client_id, const std::string& client_secret,
                           const std::string& refresh_token);
  /// A token for `email` as the metadata server gives it: {"access_token", "expires_in", "token_type"}.
  nlohmann::json metadata_token(const std::string& email);
  /// Who the last token answer was issued to, for the request log ("" when none).
  static std::string principal_of(const nlohmann::json& answer);

  /// Makes every token issued so far expired; returns how many were live.
  int expire_all();
  void set_lifetime(int seconds);
  int live_tokens() const;

 private:
  struct Key {
    std::string kid;
    gcp::RsaVerifier verifier;
  };
  struct Account {
    std::vector<Key> keys;
    bool project_access = false;
  };
  struct Token {
    Caller caller;
    std::chrono::system_clock::time_point expiry;
  };
  mutable std::mutex mu_;
  int lifetime_s_;
  std::string token_uri_;
  std::map<std::string, Account> accounts_;
  std::map<std::string, Token> tokens_;
  std::set<std::string> subject_tokens_;
  std::string user_client_id_, user_client_secret_, refresh_token_;
  /// A new token for `caller`: the token answer with the principal under "_principal" (removed before sending).
  nlohmann::json issue(const Caller& caller);
};

/// Writes a key file in Google's layout for `signer` to `path` (mode 0600).
/// Returns "" or an error message.
std::string write_key_file(const std::string& path, const gcp::RsaSigner& signer, const std::string& project,
                           const std::string& email, const std::string& kid, const std::string& token_uri);

/// Decodes an application/x-www-form-urlencoded body or query string.
std::map<std::string, std::string> parse_form(const std::string& body);

}  // namespace plinth::gcp_emulator
