#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.h"

namespace plinth::catalog {

struct MigProfile {
  std::string name;  ///< "3g.40gb"
  int compute_slices = 0;
  int memory_slices = 0;  ///< eighths of the GPU's memory (quarters on A30)
  int memory_gb = 0;
  int max_count = 0;  ///< most instances of this profile on one GPU
  bool operator==(const MigProfile&) const = default;
};

struct GpuModel {
  std::string name;          ///< catalog key, e.g. "H100-80GB"
  std::string product_name;  ///< as BMCs / nvidia-smi report it, "NVIDIA H100 80GB HBM3"
  std::string architecture;  ///< "Hopper"
  std::string compute_capability;  ///< "9.0"
  int memory_gb = 0;
  bool ecc = false;
  bool nvlink = false;
  std::string min_cuda;  ///< oldest CUDA toolkit that supports the architecture
  int mig_max_instances = 0;  ///< 0 = no MIG
  int mig_compute_slices = 0;  ///< 7 on A100/H100, 4 on A30
  int mig_memory_slices = 0;   ///< 8 on A100/H100, 4 on A30
  std::vector<MigProfile> mig_profiles;
  std::vector<std::string> aliases;
  std::string source;

  bool has_mig() const { return mig_max_instances > 0; }
  /// The MIG profile called `name`, or nullptr.
  const MigProfile* mig_profile(const std::string& name) const;
  std::vector<std::string> mig_profile_names() const;
  bool operator==(const GpuModel&) const = default;
};

struct InstanceType {
  std::string provider;  ///< aws | gcp | azure
  std::string name;      ///< "p5.48xlarge"
  std::string gpu;       ///< GpuModel::name
  int gpu_count = 0;
  int vcpus = 0;
  int memory_gb = 0;
  std::string source;
  bool operator==(const InstanceType&) const = default;
};

/// Versioned domain data (engine/catalog/data/*.yaml), each file citing its
/// sources. Loaded once at start; immutable afterwards.
class Catalog {
 public:
  /// The data compiled into the binary (engine/catalog/embedded.h).
  static Result<Catalog> load_embedded();
  /// The data files in `dir` (PLINTH_CATALOG_DIR / --catalog-dir).
  static Result<Catalog> load_dir(const std::string& dir);
  /// From (file name, text) pairs; errors name the file and line.
  static Result<Catalog> load_texts(const std::vector<std::pair<std::string, std::string>>& files);

  const GpuModel* gpu(const std::string& name) const;  ///< by name or alias
  const InstanceType* instance_type(const std::string& provider, const std::string& name) const;
  /// Minimum Linux x86_64 driver for a CUDA toolkit version ("12.4" or
  /// "12.4.1"); nullopt for an unknown version.
  std::optional<std::string> min_driver_for_cuda(const std::string& cuda) const;
  /// The full toolkit version a pin means ("12.4" -> "12.4.0", "11.0" ->
  /// "11.0.2", the GA release); nullopt for an unknown version.
  std::optional<std::string> resolve_cuda(const std::string& cuda) const;

  std::vector<std::string> gpu_names() const;
  std::vector<std::string> instance_type_names(const std::string& provider) const;
  std::vector<std::string> cuda_versions() const;  ///< full versions, oldest first
  std::vector<std::string> providers() const;     ///< with instance types: aws, azure, gcp
  std::string version() const { return version_; }

 private:
  friend struct CatalogParser;
  std::string version_;
  std::map<std::string, GpuModel> gpus_;
  std::map<std::string, std::string> gpu_aliases_;
  std::map<std::string, std::map<std::string, InstanceType>> instance_types_;
  std::map<std::string, std::string> cuda_min_driver_;  ///< "12.4.1" -> "550.54.15"
  std::map<std::string, std::string> cuda_ga_;          ///< "12.4" -> "12.4.0"
};

}  // namespace plinth::catalog
