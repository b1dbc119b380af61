#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace plinth::aws_ec2_emulator {

/// A capacity reservation the emulator knows (--capacity-reservation).
struct ReservationSpec {
  std::string id;    ///< cr-...
  std::string type;  ///< instance type
  std::string zone;
  int count = 0;
  std::string kind = "default";  ///< "default" or "capacity-block" (EC2's ReservationType)
};

/// A token bucket for one action (--throttle): `capacity` requests at once,
/// refilled at `refill_per_second`.
struct BucketSpec {
  double capacity = 0;
  double refill_per_second = 0;
};

/// Every command-line flag of aws-ec2-emulator (docs/emulators.md lists them).
struct Options {
  // Endpoint and identity
  std::string host = "127.0.0.1";
  int port = 8443;
  int threads = 32;
  std::string region = "us-east-1";
  std::vector<std::string> zones;  ///< default: REGION + a, b, c
  std::string account_id = "123456789012";
  std::string access_key = "AKIDEXAMPLE";
  std::string secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  std::string session_token;
  int max_skew_s = 300;
  // Identity services (identity.h)
  std::vector<std::string> web_identity_tokens;  ///< OIDC tokens STS accepts
  int credential_ttl_s = 3600;                   ///< lifetime of the credentials it issues
  std::string instance_role = "plinth-node";
  std::string container_token;
  std::vector<std::string> sso_tokens;  ///< SSO access tokens the Identity Center portal accepts
  std::optional<int> metadata_port;  ///< the plain-HTTP IMDS / container listener; nullopt: none
  std::string model;  ///< botocore service-2.json

  // The world
  std::map<std::string, std::string> subnets;                   ///< subnet id -> zone (default: one per zone)
  std::map<std::string, std::string> security_groups;           ///< group id -> name (default: the VPC's "default")
  std::vector<std::string> key_pairs;                           ///< default: "default"
  std::map<std::pair<std::string, std::string>, int> capacity;  ///< (type|*, zone|*) -> instances at once
  std::optional<int> default_capacity;                          ///< nullopt: unlimited
  std::vector<ReservationSpec> reservations;
  std::map<std::string, int> efa_limits;  ///< instance type -> EFA interfaces (overrides the built-in table)

  // Time
  int pending_ms = 1000;
  int shutdown_ms = 1000;
  int terminated_visible_ms = 3600000;

  // Faults
  std::map<std::string, BucketSpec> throttle;  ///< action (or "*") -> bucket
  int latency_min_ms = 0;
  int latency_max_ms = 0;
  double rate_500 = 0;
  double rate_503 = 0;
  double drop_rate = 0;
  double lose_response_rate = 0;
  std::map<std::string, int> lose_response;  ///< action -> the next N successful answers are lost
  uint64_t seed = 1;

  // Plumbing
  std::string request_log;
  std::string tls_dir;
  std::string tls_cert;
  std::string tls_key;
  bool http = false;
};

/// Parses argv. Returns an error message (naming the flag and what to do) or
/// "" on success; `help` is set when --help was given.
std::string parse_options(int argc, char** argv, Options& out, bool& help);

/// The --help text.
std::string usage();

}  // namespace plinth::aws_ec2_emulator
