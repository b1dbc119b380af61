#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace plinth::azure_emulator {

/// One application (service principal) registered in the emulated tenant.
struct AppRegistration {
  std::string client_id;
  std::string secret;        ///< "" when the app authenticates only with a certificate
  bool reader = false;       ///< Reader role: writes and deletes answer 403 AuthorizationFailed
  bool certificate = false;  ///< --client-certificate: a generated certificate is registered too
  /// Federated identity credentials (--federated-credential): (issuer, subject) pairs whose OIDC
  /// tokens the app may present as client assertions (workload identity).
  std::vector<std::pair<std::string, std::string>> federated;
};

/// A VM size the emulator knows: vCPUs, quota family, accelerated networking.
struct VmSize {
  std::string name;  ///< e.g. Standard_ND96isr_H100_v5
  int vcpus = 0;
  std::string family;  ///< quota family, e.g. standardNDSH100v5Family
  bool accelerated_networking = true;
};

/// LOCATION or LOCATION/ZONE (zone "" for the whole region), lower-cased.
struct Place {
  std::string location;
  std::string zone;
  auto operator<=>(const Place&) const = default;
};

/// Token bucket: `size` tokens, refilled at `per_second` (0: never refilled).
struct Bucket {
  int size = 0;
  double per_second = 0;
};

/// Every command-line flag of azure-emulator (docs/emulators.md lists them).
struct Options {
  std::string host = "127.0.0.1";
  int port = 8443;
  int threads = 32;
  std::optional<int> proxy_port;  ///< --proxy-port: HTTP CONNECT proxy for Microsoft's public host names

  // Microsoft Entra
  std::string tenant = "72f1c1a4-8a9e-4c0c-9d4b-2f7a1e5b6c3d";
  std::vector<AppRegistration> apps;  ///< [0] is --client-id/--client-secret
  std::vector<std::string> resources = {"https://management.azure.com/", "https://management.core.windows.net/"};
  int token_lifetime_s = 3599;
  std::optional<int> metadata_port;  ///< --metadata-port: plain-HTTP managed identity endpoints
  std::string identity_header;       ///< --identity-header: what the App Service endpoint wants

  // Resource Manager
  std::vector<std::string> subscriptions;  ///< default: one, kDefaultSubscription
  std::vector<std::string> locations = {"eastus", "westus2", "westus3", "southcentralus"};
  std::vector<VmSize> extra_sizes;
  std::map<std::pair<Place, std::string>, int> capacity;       ///< (place, lower-case size) -> VMs that fit
  std::vector<std::pair<Place, std::string>> sku_unavailable;  ///< (place, lower-case size)
  std::map<std::pair<std::string, std::string>, int> quota;    ///< (location, lower-case family) -> vCPU limit
  int lro_delay_ms = 1000;
  int network_delay_ms = 0;
  int retry_after_s = 1;
  int page_size = 50;
  Bucket reads{250, 25};
  Bucket writes{200, 10};
  Bucket deletes{200, 10};

  // Faults
  int latency_min_ms = 0;
  int latency_max_ms = 0;
  double rate_429 = 0;
  double rate_500 = 0;
  double rate_503 = 0;
  double drop_rate = 0;
  double lose_rate = 0;
  uint64_t seed = 1;

  std::string request_log;
  std::string tls_dir;
  bool client_certificate = false;
  bool http = false;
};

inline constexpr const char* kDefaultSubscription = "5f3c2a1b-9d8e-4f7a-8b6c-0d1e2f3a4b5c";
inline constexpr const char* kDefaultClientId = "3c9d7e2a-41f6-4b8a-9c0d-8e7f6a5b4c3d";
inline constexpr const char* kDefaultClientSecret = "plinth-emulator-secret";

/// Parses argv. Returns an error message (naming the flag and what to do) or
/// "" on success; `help` is set when --help was given.
std::string parse_options(int argc, char** argv, Options& out, bool& help);

/// The --help text.
std::string usage();

}  // namespace plinth::azure_emulator
