#pragma once
// Application Default Credentials, in google-auth's order: a fixed access
// token (GOOGLE_OAUTH_ACCESS_TOKEN, Plinth's), GOOGLE_APPLICATION_CREDENTIALS,
// gcloud's well-known file, then the metadata server. A credentials file is a
// service-account key, an `authorized_user` (a refresh token from `gcloud
// auth application-default login`) or an `external_account` (workload
// identity federation: a subject token from a file or a URL exchanged at
// Google's STS, then optionally a service account impersonated through IAM
// Credentials). docs/providers/gcp.md, "Credentials".
#include <optional>
#include <string>
#include <vector>

#include "engine/core/deadline.h"
#include "engine/core/result.h"
#include "engine/net/http.h"
#include "engine/provider/options.h"
#include "providers/gcp/oauth_token.h"
#include "providers/gcp/service_account.h"

namespace plinth::gcp {

/// A refresh token of a user (type authorized_user).
struct AuthorizedUser {
  std::string client_id, client_secret, refresh_token;  ///< secrets but client_id
  std::string token_uri = "https://oauth2.googleapis.com/token";
};

/// Workload identity federation (type external_account).
struct ExternalAccount {
  std::string audience;            ///< //iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P/providers/R
  std::string subject_token_type;  ///< urn:ietf:params:oauth:token-type:jwt, ...
  std::string token_url = "https://sts.googleapis.com/v1/token";
  std::string impersonation_url;  ///< service_account_impersonation_url, "" for none
  std::string file;               ///< credential_source.file
  std::string url;                ///< credential_source.url
  std::vector<std::pair<std::string, std::string>> headers;  ///< credential_source.headers
  std::string json_field;  ///< credential_source.format subject_token_field_name when its type is json
};

/// Where access tokens come from.
struct CredentialSource {
  enum class Kind { Fixed, ServiceAccountKey, AuthorizedUser, ExternalAccount, Metadata };
  Kind kind = Kind::Fixed;
  std::optional<ServiceAccountKey> key;  ///< ServiceAccountKey
  std::string token_uri;                 ///< ServiceAccountKey: where its assertions go
  std::string access_token;              ///< Fixed; secret
  std::optional<AuthorizedUser> user;
  std::optional<ExternalAccount> external;
  std::string metadata_host;  ///< Metadata: GCE_METADATA_HOST, else metadata.google.internal
  std::vector<std::string> scopes = {kCloudPlatformScope};
  /// What the error says first when the metadata server is the last resort and does not answer.
  std::string none_found;
  /// "service account x@p... (key /path)", "workload identity pool ... (file /path)", ...: for messages.
  std::string who;
  bool refreshable() const { return kind != Kind::Fixed; }
};

/// The credentials of `config`, in ADC's order; `home` is $HOME. Reads
/// files, makes no request. The error says what was looked at and what to set.
Result<CredentialSource> find_credentials(const ProviderConfig& config, const std::string& home);

/// A new access token from `source` (not Fixed). Errors name the endpoint and
/// the credential, never a token.
Result<AccessToken> fetch_token(const CredentialSource& source, net::Client& http, const Deadline& deadline,
                                const std::atomic<bool>* cancel);

}  // namespace plinth::gcp
