#pragma once
// What aws-ec2-emulator answers for the AWS identity services a credential
// chain reaches (docs/emulators.md, "Identity"): STS's AssumeRoleWithWebIdentity,
// AssumeRole and GetCallerIdentity on its main endpoint (Query protocol, XML,
// version 2011-06-15), and on a plain-HTTP metadata listener the instance
// metadata service (IMDSv2: a session token, then the role's credentials) and
// a container credentials endpoint; and IAM Identity Center's portal
// (GetRoleCredentials, GET /federation/credentials) on its main endpoint.
// Every credential it issues is temporary
// (an ASIA key id, a secret, a session token, an expiration) and is accepted
// by the EC2 endpoint until it expires.
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "providers/aws/sigv4.h"

namespace plinth::aws_ec2_emulator {

struct IdentityOptions {
  std::string account_id = "123456789012";
  std::set<std::string> web_identity_tokens;  ///< OIDC tokens STS accepts (--web-identity-token)
  int credential_ttl_s = 3600;                ///< lifetime of what it issues (--credential-ttl)
  std::string instance_role = "plinth-node";  ///< the role IMDS lists (--instance-role)
  std::string container_token;                ///< Authorization the container endpoint wants ("" = any)
  std::set<std::string> sso_tokens;           ///< SSO access tokens the portal accepts (--sso-token)
  uint64_t seed = 1;
};

/// An answer: status, content type and body.
struct IdentityAnswer {
  int status = 200;
  std::string content_type = "text/xml";
  std::string body;
  std::string code;    ///< the error code, "" on success
  std::string issued;  ///< the access key id of the credentials it issued, for the request log
};

class Identity {
 public:
  explicit Identity(IdentityOptions options);

  /// True for the STS actions it answers (EC2 has none of these names).
  static bool is_sts_action(const std::string& action);

  /// An STS action with its form parameters. `caller` is the access key id
  /// of a verified SigV4 signature (service sts), "" for an unsigned request;
  /// `static_key` is the emulator's long-term key.
  IdentityAnswer sts(const std::string& action, const std::map<std::string, std::string>& params,
                     const std::string& caller, const std::string& static_key);

  /// A request to the metadata listener: METHOD, path, headers (lower-case names).
  IdentityAnswer metadata(const std::string& method, const std::string& path,
                          const std::map<std::string, std::string>& headers);

  /// IAM Identity Center's GetRoleCredentials: the query's account_id and
  /// role_name, the x-amz-sso_bearer_token header. JSON as the portal answers.
  IdentityAnswer sso(const std::string& account_id, const std::string& role_name, const std::string& bearer);

  /// The credentials of an access key id it issued, if any; `expired` says
  /// whether they have expired.
  std::optional<aws::Credentials> lookup(const std::string& access_key_id, bool& expired);

  /// How many credentials it issued, by how ("AssumeRoleWithWebIdentity", "AssumeRole", "imds", "container", "sso").
  std::map<std::string, int> issued_counts();
  /// Every credential it issued, secret and session token too: what a test
  /// checks never reaches Plinth's output, state or files.
  std::vector<aws::Credentials> issued_credentials();

 private:
  struct Issued {
    aws::Credentials credentials;
    std::chrono::system_clock::time_point expiration;
    std::string arn;  ///< the assumed role's session ARN
  };
  Issued issue(const std::string& how, const std::string& arn);
  std::string random_text(size_t n, const char* alphabet);
  static std::string iso8601(std::chrono::system_clock::time_point t);

  IdentityOptions options_;
  std::mutex mu_;
  std::mt19937_64 rng_;
  std::map<std::string, Issued> issued_;  ///< by access key id
  std::map<std::string, std::chrono::system_clock::time_point> imds_tokens_;
  std::map<std::string, int> counts_;
};

}  // namespace plinth::aws_ec2_emulator
