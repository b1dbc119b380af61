#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace plinth::gcp_emulator {

/// Every command-line flag of gcp-emulator (docs/emulators.md lists them).
struct Options {
  std::string host = "127.0.0.1";
  int port = 8443;
  int threads = 64;
  std::string project = "plinth-test";
  std::string project_number = "123456789012";
  std::vector<std::string> zones = {"us-central1-a", "us-central1-b", "us-central1-c",  "us-east4-a",
                                    "us-east4-b",    "us-east5-a",    "europe-west4-a", "europe-west4-b"};
  /// Written at start: service-account.json (authorised), and with
  /// extra_keys also service-account-revoked.json and service-account-noperm.json.
  std::string key_dir;
  bool extra_keys = false;                  ///< two more RSA keys to generate: off by default to start faster
  std::vector<std::string> authorize_keys;  ///< extra key files whose public keys are trusted
  int token_lifetime_s = 3600;
  // Application Default Credentials' other sources (oauth.h)
  std::vector<std::string> subject_tokens;  ///< OIDC tokens its STS (/v1/token) accepts
  std::string refresh_token;                ///< the authorized_user refresh token its /token accepts ("" = none)
  std::optional<int> metadata_port;         ///< the plain-HTTP metadata server
  int operation_ms = 1000;       ///< insert/delete/stop/start: PENDING -> RUNNING at half, DONE at the end
  int wait_timeout_ms = 120000;  ///< zoneOperations.wait returns after this even if not DONE (GCP: 2 minutes)
  /// "ZONE/TYPE" or "TYPE" (every zone) -> instances that fit.
  std::map<std::string, int> capacity;
  /// "METRIC@REGION" or "METRIC" (global, e.g. GPUS_ALL_REGIONS) -> limit.
  std::map<std::string, double> quotas;
  bool stockout_details = true;  ///< ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS rather than ZONE_RESOURCE_POOL_EXHAUSTED
  double rate_limit_rps = 0;     ///< token bucket per project; 0 = no throttling
  int rate_limit_burst = 0;
  std::string rate_limit_reason = "rateLimitExceeded";
  int latency_min_ms = 0;
  int latency_max_ms = 0;
  double rate_500 = 0;
  double rate_503 = 0;
  double drop_rate = 0;           ///< connection closed before the request is processed
  double lose_response_rate = 0;  ///< insert/delete/start/stop processed, then the connection closed
  uint64_t seed = 1;
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

}  // namespace plinth::gcp_emulator
