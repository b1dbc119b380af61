#pragma once
// AWS credentials found the way the SDKs' default chain finds them, and kept
// fresh for a long apply. The chain, first match wins (botocore's order):
//   1. access_key_id / secret_access_key / session_token (AWS_ACCESS_KEY_ID, ...);
//   2. the profile's role_arn with source_profile or credential_source (STS AssumeRole);
//   3. web identity: the profile's web_identity_token_file, else AWS_WEB_IDENTITY_TOKEN_FILE
//      with AWS_ROLE_ARN (STS AssumeRoleWithWebIdentity, unsigned);
//   4. the profile's IAM Identity Center sign-in (sso_session or sso_start_url, with
//      sso_account_id and sso_role_name): the token `aws sso login` cached, exchanged at
//      the portal (GetRoleCredentials);
//   5. the profile's static keys in the shared credentials file;
//   6. the profile's credential_process (run without a shell; JSON on stdout);
//   7. the profile's static keys in the config file;
//   8. container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI / _FULL_URI with
//      AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE]);
//   9. the instance metadata service, IMDSv2 (AWS_EC2_METADATA_SERVICE_ENDPOINT; off with
//      AWS_EC2_METADATA_DISABLED=true).
// Finding the source reads files only; the credentials are fetched when the
// provider is configured and again before they expire. docs/providers/aws.md.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "engine/core/deadline.h"
#include "engine/core/result.h"
#include "engine/net/http.h"
#include "engine/provider/options.h"
#include "providers/aws/sigv4.h"

namespace plinth::aws {

/// Credentials and the time they stop working (nullopt: long-term keys).
struct Issued {
  Credentials credentials;
  std::optional<std::chrono::system_clock::time_point> expiration;
};

/// One source of credentials: fetched on first use and again when they are
/// about to expire, so the requests of a long apply never carry expired ones.
/// A failure that asking again cannot mend (a refused token, a bad file) is
/// remembered: later calls return it without asking again. Thread-safe.
class CredentialSource {
 public:
  using Fetch = std::function<Result<Issued>(const Deadline&)>;
  /// `origin` says where the credentials come from, in messages (never a value).
  CredentialSource(std::string origin, Fetch fetch);

  /// The credentials to sign with now: the held ones while more than the
  /// refresh window is left of them (5 minutes, or a quarter of their
  /// lifetime when that is shorter), else fetched again. Errors name the origin.
  Result<Credentials> get(const Deadline& deadline);
  /// The service said the held credentials expired: the next get() fetches.
  void expired();
  const std::string& origin() const { return origin_; }
  /// How many fetches succeeded so far.
  int fetches() const;

 private:
  std::string origin_;
  Fetch fetch_;
  mutable std::mutex mu_;
  std::optional<Issued> held_;
  std::chrono::system_clock::time_point refresh_at_;
  std::optional<Error> failed_;
  int fetches_ = 0;
};

/// What the chain may use besides the options: $HOME and the HTTP client for
/// STS, the container endpoint and the metadata service.
struct ChainContext {
  std::string home;
  net::Client* http = nullptr;
  std::string region;  ///< for STS's regional endpoint; "" uses the global one
};

/// The source of `config`'s credentials, by the chain above. Reads the shared
/// files (and the token file's existence), makes no request. The error says
/// where it looked and what to set.
Result<std::shared_ptr<CredentialSource>> find_credentials(const ProviderConfig& config, const ChainContext& context);

/// The region of the config file's profile (`region = ...`), or "".
std::string config_file_region(const ProviderConfig& config, const std::string& home);

/// The STS endpoint: the sts_endpoint option (AWS_ENDPOINT_URL_STS, then
/// AWS_ENDPOINT_URL), else https://sts.REGION.amazonaws.com (or
/// https://sts.amazonaws.com without a region).
std::string sts_endpoint(const ProviderConfig& config, const std::string& region);

/// Splits a credential_process command line as a POSIX shell splits words
/// ('...', "...", backslash), without expanding anything; an error for an
/// unterminated quote.
Result<std::vector<std::string>> split_command(const std::string& command);

}  // namespace plinth::aws
