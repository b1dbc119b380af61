#pragma once
#include <optional>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "engine/net/http.h"
#include "engine/provider/provider.h"
#include "providers/baremetal/redfish_client.h"

namespace plinth::baremetal {

/// The provider's own options, from its ProviderConfig.
struct RedfishOptions {
  std::string ca_bundle;        ///< default CA for BMCs whose node has no bmc_ca_bundle
  bool insecure = false;        ///< TLS verification off; loopback BMCs only
  int timeout_ms = 30000;       ///< one HTTP request (cut to the operation's deadline)
  int connect_timeout_ms = 10000;
  int parallelism = 16;         ///< BMCs read at the same time
  RedfishSettings settings;     ///< power_timeout_ms, poll_ms
  std::string seed_dir;         ///< where NODE.iso seeds are written ("" : no seeds)
  std::string seed_url;         ///< where the BMCs fetch them, without a trailing '/'
};

/// The baremetal provider's description: baremetal.node for node pools, its
/// options (docs/providers/baremetal.md is generated from it).
const ProviderSchema& schema();

/// The options `config` sets (parse_provider_config checked their types).
RedfishOptions options_from(const ProviderConfig& config);

/// Inventory check rule IDs (docs/providers/baremetal.md).
inline constexpr const char* kRuleGpuModel = "BM001";
inline constexpr const char* kRuleGpuCount = "BM002";
inline constexpr const char* kRuleMemory = "BM003";
/// Seed delivery (docs/providers/baremetal.md, "Seed").
inline constexpr const char* kRuleSeed = "BM004";

/// `baremetal.node` resources over DMTF Redfish (docs/providers/baremetal.md).
/// One session per BMC for the provider's lifetime, all deleted by the
/// destructor. Safe to call from several threads at once.
class RedfishProvider : public Provider {
 public:
  RedfishProvider() = default;
  ~RedfishProvider() override;

  const ProviderSchema& schema() const override { return baremetal::schema(); }
  Status configure(const ProviderConfig& config) override;
  /// Reads every node in parallel (`parallelism` at a time): power, boot
  /// override, BIOS (managed keys into attributes.bios, all into computed),
  /// GPUs, memory, MACs; inventory mismatches become BM001-BM003 diagnostics.
  /// Each node gets its own Call (call.fork()) from when its read starts.
  std::vector<ReadResult> read(const std::vector<Resource>& resources, const Call& call) override;
  /// With seed_dir: the node's NoCloud seed written to seed_dir/NODE.iso and
  /// inserted as virtual media from seed_url. Then the boot override (pxe /
  /// uefi-http / virtual-media), BIOS settings, a reset (On or ForceRestart)
  /// and a bounded wait for PowerState On. After read() of the node (pxe or
  /// uefi-http, no seed) the system is not read again: the boot PATCH's
  /// If-Match carries the ETag that read saw, and a 412 reads it afresh.
  Result<Resource> create(const Resource& desired, Call& call) override;
  /// BIOS changes: PATCH the settings and ForceRestart; boot image changes:
  /// set the override again.
  Result<Resource> update(const Resource& prior, const Resource& desired, Call& call) override;
  /// ForceOff, clear the boot override, eject the node's seed and delete its
  /// file. Never touches disks.
  Status remove(const Resource& prior, Call& call) override;
  /// Warns that created nodes get no seed when seed_dir is unset; an error
  /// when seed_dir is not a writable directory.
  Diagnostics preflight(const std::vector<Resource>& changes, const Call& call) override;
  void stop() override { stopped_ = true; }
  /// Deletes every session opened (best effort, a few seconds at most).
  void close() override;

 private:
  /// The client for the node's BMC (created and cached on first use).
  Result<RedfishClient*> client_for(const Resource& r);
  /// Reads one node: its system (`system` when the caller just read it,
  /// e.g. the last power poll of a create), its inventory and the BIOS
  /// attributes the pool manages (none read when it manages none).
  /// `keep`, when given, receives what a create needs of the system
  /// (nothing when the service gave it no strong ETag).
  ReadResult read_one(const Resource& r, Call& call, std::optional<Doc> system = std::nullopt,
                      std::optional<Doc>* keep = nullptr);
  /// The system the refresh read for `r` and kept for its create, removed.
  std::optional<Doc> take_kept(const Resource& r);
  /// Writes `r`'s seed image and inserts it into a virtual media device the
  /// installer does not use (nothing without seed_dir); `media` caches the
  /// system's devices for the rest of the create.
  Status deliver_seed(RedfishClient& c, const Doc& system, const Resource& r, Call& call,
                      std::optional<std::vector<Doc>>& media);
  /// Ejects the seed of `r` wherever it is inserted and deletes its file.
  Status withdraw_seed(RedfishClient& c, const Doc& system, const Resource& r, Call& call);

  RedfishOptions options_;
  std::unique_ptr<net::Client> http_;
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<RedfishClient>> clients_;  ///< by endpoint + credentials + CA
  std::map<std::string, Doc> kept_;  ///< systems read by read(), for create(): by address + endpoint
};

}  // namespace plinth::baremetal
