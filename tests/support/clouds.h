#pragma once
// The cloud emulators (tests/emulators/aws-ec2, gcp, azure) as the e2e and
// fault tests drive them: their control API under /__emulator/, each with its
// own queries (instances, counters, request log), the credentials they accept,
// and the environment of a user pointing plinth at each.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/wire.h"
#include "engine/net/http.h"
#include "tests/support/emulator_process.h"

namespace plinth::test {

/// The credentials aws-ec2-emulator accepts.
inline const std::string kAwsAccessKey = "AKIDEXAMPLE";
inline const std::string kAwsSecretKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
/// azure-emulator's tenant, client (its secret) and subscription.
inline const std::string kAzureTenant = "72f1c1a4-8a9e-4c0c-9d4b-2f7a1e5b6c3d";
inline const std::string kAzureClient = "3c9d7e2a-41f6-4b8a-9c0d-8e7f6a5b4c3d";
inline const std::string kAzureClientSecret = "plinth-emulator-secret";
inline const std::string kAzureSubscription = "5f3c2a1b-9d8e-4f7a-8b6c-0d1e2f3a4b5c";

/// `args` with each of `defaults` (flag, value) put first unless `args` gives that flag.
std::vector<std::string> with_default_flags(std::vector<std::string> args,
                                            const std::vector<std::pair<std::string, std::string>>& defaults);

/// A cloud emulator: an EmulatorProcess with a JSON control API, reached with its test CA.
class CloudEmulator : public EmulatorProcess {
 public:
  CloudEmulator(const std::string& binary, const std::vector<std::string>& args);
  /// METHOD base()+PATH ("/__emulator/..."), with `body` as JSON unless null; the emulator must answer
  /// 200 (the test fails otherwise). Its JSON.
  Json control(const std::string& method, const std::string& path, const Json& body = nullptr);
  net::Client& http() { return http_; }
  /// The request log, one JSON object per line.
  std::vector<Json> log_lines() const;
  /// http://HOST:PORT of the plain-HTTP metadata listener (the `metadata` line it printed with
  /// --metadata-port); fails the test when there is none.
  std::string metadata_base() const;

 private:
  net::Client http_;
};

/// aws-ec2-emulator; instances are pending, running and shutting down for 0 ms and requests take 0 ms
/// extra unless `args` say otherwise.
class Ec2Emulator : public CloudEmulator {
 public:
  explicit Ec2Emulator(const std::vector<std::string>& args = {});
  /// Instances in `state` ("" = every one, terminated included).
  Json instances(const std::string& state = "");
  /// Instances that are pending or running (with the tag plinth:lineage `lineage` when it is not "").
  std::vector<Json> active(const std::string& lineage = "");
  Json counters();
  /// Requests for `action` so far.
  int requests(const std::string& action);
  /// Room for `limit` (null: no limit) instances of `type` in `zone` ("*": every zone).
  void capacity(const std::string& type, const std::string& zone, Json limit);
};

/// gcp-emulator; operations are done at once unless `args` say otherwise (--operation-ms).
class GceEmulator : public CloudEmulator {
 public:
  explicit GceEmulator(const std::vector<std::string>& args = {});
  /// The service-account key file `name` the emulator wrote (service-account-revoked.json with --extra-keys).
  std::string key_file(const std::string& name = "service-account.json") const;
  /// BASE/compute/v1/
  std::string compute_root() const;
  Json state();
  /// Instances in any status but TERMINATED (those still hold the pool).
  std::vector<Json> active();
  /// Every instance, TERMINATED ones included.
  size_t all_instances();
  /// Answers of `method` with `outcome` ("200", "lost", "429", "total").
  int count(const std::string& method, const std::string& outcome = "total");
  /// Room for `available` (null: no limit) instances of machine type `type` in `zone` ("": every zone).
  void capacity(const std::string& zone, const std::string& type, Json available);
  /// An access token for the emulator's service account, as a client library gets it.
  std::string access_token();
};

/// azure-emulator; unless `fast` is false its operations end at the next request and it sends Retry-After: 0
/// (the client's own interval); then `args`.
class AzureEmulator : public CloudEmulator {
 public:
  explicit AzureEmulator(std::vector<std::string> args = {}, bool fast = true);
  Json vms();
  Json nics();
  /// The request log's ARM lines.
  std::vector<Json> arm_log();
  /// ARM requests of `operation` (with `method` when it is not "").
  int requests(const std::string& operation, const std::string& method = "");
};

/// The environment of a user pointing plinth at `ec2` with the emulator's key, HOME being `home`.
std::map<std::string, std::string> aws_env(const EmulatorProcess& ec2, const std::string& home);
/// The environment of a user pointing plinth at the gcp-emulator `gce`: its service-account key file
/// (whose token_uri is the emulator's), its Compute root and its CA.
std::map<std::string, std::string> gcp_env(const EmulatorProcess& gce);
/// The environment of a user pointing plinth at the azure-emulator `az` with a client secret.
std::map<std::string, std::string> azure_env(const EmulatorProcess& az);

/// GitHub Actions' OIDC issuer, which the Azure identity cases' federated credentials trust.
inline const std::string kGithubIssuer = "https://token.actions.githubusercontent.com";
/// An OIDC token as GitHub Actions issues one for Azure (audience api://AzureADTokenExchange, an hour
/// to live) for `subject`; the emulator reads its claims, not its signature.
std::string github_oidc_token(const std::string& subject);

/// The audience and service account of the GCP workload identity federation cases.
inline const std::string kGcpWifAudience =
    "//iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/ci/providers/github";
inline const std::string kGcpAccount = "plinth-emulator@plinth-test.iam.gserviceaccount.com";
/// An external_account credentials file for `gce`'s STS with `credential_source`, and with
/// `impersonate` kGcpAccount impersonated through IAM Credentials generateAccessToken.
Json gcp_external_account(const EmulatorProcess& gce, const Json& credential_source, bool impersonate);

/// How many of `list` (JSON objects) have each value of `key` (a value that is not a string counts as its JSON).
std::map<std::string, int> count_by(const Json& list, const char* key);

}  // namespace plinth::test
