#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "engine/net/http.h"
#include "engine/provider/provider.h"
#include "providers/baremetal/redfish_client.h"

namespace plinth::baremetal {

/// The provider's options (ProviderConfig::options), parsed.
struct RedfishOptions {
  std::string ca_bundle;        ///< default CA for BMCs whose node has no bmc_ca_bundle
  bool insecure = false;        ///< TLS verification off; loopback BMCs only
  int timeout_ms = 30000;       ///< one HTTP request
  int connect_timeout_ms = 10000;
  int parallelism = 16;         ///< BMCs read at the same time
  RedfishSettings settings;     ///< power_timeout_ms, poll_ms, retries
};

/// Parses `ca_bundle`, `insecure`, `timeout_ms`, `connect_timeout_ms`,
/// `power_timeout_ms`, `poll_ms`, `parallelism`, `retry_attempts`,
/// `retry_base_ms`, `retry_max_ms`; other keys are ignored. Errors name the option.
Result<RedfishOptions> parse_options(const std::map<std::string, std::string>& options);

/// Inventory check rule IDs (docs/providers/baremetal.md).
inline constexpr const char* kRuleGpuModel = "BM001";
inline constexpr const char* kRuleGpuCount = "BM002";
inline constexpr const char* kRuleMemory = "BM003";

/// `baremetal.node` resources over DMTF Redfish (docs/providers/baremetal.md).
/// One session per BMC for the provider's lifetime, all deleted by the
/// destructor. Safe to call from several threads at once.
class RedfishProvider : public Provider {
 public:
  explicit RedfishProvider(RedfishOptions options);
  ~RedfishProvider() override;

  std::string name() const override { return "baremetal"; }
  /// Reads every node in parallel (`parallelism` at a time): power, boot
  /// override, BIOS (managed keys into attributes.bios, all into computed),
  /// GPUs, memory, MACs; inventory mismatches become BM001-BM003 diagnostics.
  std::vector<ReadResult> read(const std::vector<Resource>& resources) override;
  /// Boot override (pxe / uefi-http / virtual-media), BIOS settings, then a
  /// reset (On or ForceRestart) and a bounded wait for PowerState On.
  Result<Resource> create(const Resource& desired) override;
  /// BIOS changes: PATCH the settings and ForceRestart; boot image changes:
  /// set the override again.
  Result<Resource> update(const Resource& prior, const Resource& desired) override;
  /// ForceOff and clear the boot override. Never touches disks.
  Status remove(const Resource& prior) override;

 private:
  /// The client for the node's BMC (created and cached on first use).
  Result<RedfishClient*> client_for(const Resource& r);
  ReadResult read_one(const Resource& r);

  RedfishOptions options_;
  net::Client http_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<RedfishClient>> clients_;  ///< by endpoint + credentials + CA
};

}  // namespace plinth::baremetal
