#pragma once
// What compute.instances.insert checks in a request body before it accepts an
// instance (docs/emulators.md, "What insert checks"), and the parts of the
// instance resource the body decides.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/emulators/gcp/api.h"

namespace plinth::gcp_emulator {

/// A disk the instance creates from initializeParams.
struct NewDisk {
  std::string name, type, source_image;  ///< source_image: a full URL ("" for a data disk)
  int64_t size_gb = 10;
  bool auto_delete = true;
};

/// A validated insert body.
struct InstanceSpec {
  std::string name;
  std::string machine_type;
  bool spot = false;               ///< provisioningModel SPOT or preemptible
  std::string termination_action;  ///< STOP or DELETE for Spot VMs, "" otherwise
  std::map<std::string, std::string> labels;
  std::vector<NewDisk> disks;
  /// The resource fields the body decides, rendered as the API shows them
  /// (disks, networkInterfaces, scheduling, metadata, serviceAccounts, ...).
  /// guestAccelerators[0] carries "_name" (the bare type) for the emulator's
  /// own use; Compute::render removes it.
  nlohmann::json spec;
};

/// Where the instance goes, for references and links.
struct SpecScope {
  std::string project, project_number, zone;
  std::string compute_base;  ///< https://HOST:PORT/compute/v1/
};

/// Validates `body` as GCP does; nullopt and `out` filled when it is
/// acceptable, else the 400 answer. `ip_seq` numbers internal and external
/// addresses and advances with each interface.
std::optional<ApiAnswer> build_instance_spec(const nlohmann::json& body, const SpecScope& scope, uint64_t& ip_seq,
                                             InstanceSpec& out);

/// Checks a labels object (at most 64; keys and values in Google's format);
/// nullopt and `out` set to them, else the 400 answer naming `field`.
std::optional<ApiAnswer> check_labels(const nlohmann::json& labels, const std::string& field,
                                      std::map<std::string, std::string>& out);

/// A fingerprint in Google's format: standard base64 of 8 bytes of SHA-256.
std::string fingerprint(const std::string& content);

}  // namespace plinth::gcp_emulator
