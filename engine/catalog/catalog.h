#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

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

/// Facts shared by every GPU of one architecture (gpus.yaml `architectures:`).
struct Architecture {
  std::string name;  ///< "Hopper"
  bool bf16 = false;  ///< bfloat16 arithmetic (Tensor Cores); Ampere and newer
  /// The NVIDIA kernel module flavours the architecture runs: "both", "open"
  /// (open only) or "proprietary" (proprietary only).
  std::string kernel_modules;
  std::string last_driver_branch;  ///< the last driver branch supporting it ("580"); "" = still supported
  std::string cuda_dropped_in;     ///< the first CUDA release without it ("13.0"); "" = still supported
  std::string source;
  bool operator==(const Architecture&) const = default;
};

struct GpuModel {
  std::string name;          ///< catalog key, e.g. "H100-80GB"
  std::string product_name;  ///< as BMCs / nvidia-smi report it, "NVIDIA H100 80GB HBM3"
  std::string architecture;  ///< "Hopper"
  std::string compute_capability;  ///< "9.0"
  std::string form_factor;   ///< sxm | pcie | superchip
  int memory_gb = 0;
  bool ecc = false;
  bool nvlink = false;
  bool datacenter = false;   ///< a data-center product (CUDA forward compatibility is only for these)
  std::string min_cuda;  ///< oldest CUDA toolkit that supports the architecture
  std::string min_driver;  ///< oldest driver supporting this product ("" = the architecture's CUDA minimum decides)
  /// Overrides the architecture's kernel module flavours ("open" for GH200); "" = the architecture's.
  std::string kernel_modules;
  /// Nodes with at least this many of these GPUs sit on an NVSwitch baseboard (HGX/DGX 8-GPU); 0 = never.
  int nvswitch_min_gpus = 0;
  /// Where the Fabric Manager of that NVSwitch fabric runs: "node" (HGX/DGX baseboards) or
  /// "switch-tray" (NVL72 racks: NVLink switch trays run it, compute nodes run IMEX); "" without NVSwitch.
  std::string fabric_manager;
  int mig_max_instances = 0;  ///< 0 = no MIG
  std::string mig_min_driver;  ///< oldest driver with MIG on this GPU (MIG User Guide); "" = not named
  int mig_compute_slices = 0;  ///< 7 on A100/H100, 4 on A30
  int mig_memory_slices = 0;   ///< 8 on A100/H100, 4 on A30
  std::vector<MigProfile> mig_profiles;
  /// mig-parted's "all-balanced" layout for this GPU: profile -> count per GPU.
  std::vector<std::pair<std::string, int>> mig_balanced;
  std::vector<std::string> aliases;
  std::string source;

  bool has_mig() const { return mig_max_instances > 0; }
  /// The MIG profile called `name`, or nullptr.
  const MigProfile* mig_profile(const std::string& name) const;
  std::vector<std::string> mig_profile_names() const;
  /// True when a node with `gpus_per_node` of these GPUs has an NVSwitch fabric.
  bool has_nvswitch(int gpus_per_node) const { return nvswitch_min_gpus > 0 && gpus_per_node >= nvswitch_min_gpus; }
  /// Compute trays of a rack-wide NVLink domain (GB200/GB300 NVL): they run IMEX, the switch trays Fabric Manager.
  bool runs_imex() const { return fabric_manager == "switch-tray"; }
  bool operator==(const GpuModel&) const = default;
};

/// CUDA forward compatibility: a newer CUDA major's toolkit runs on an older
/// data-center driver branch through the cuda-compat package.
struct ForwardCompat {
  int cuda_major = 0;
  std::string branch;      ///< "535"
  std::string min_driver;  ///< oldest release of the branch that works, "535.86"
  bool operator==(const ForwardCompat&) const = default;
};

/// An NVIDIA data-center driver branch (software.yaml `driver_branches`).
struct DriverBranch {
  std::string branch;       ///< "580"
  std::string kind;         ///< "ltsb" | "production" | "new-feature"
  std::string end_of_life;  ///< "2028-06" as NVIDIA states it
  std::string first;        ///< the first data-center release seen ("" when none yet)
  std::string latest;       ///< the newest data-center release seen ("" when none yet)
  bool operator==(const DriverBranch&) const = default;
};

/// What the render must know of a cloud boot image (software.yaml `cloud_images`).
struct CloudImage {
  std::string provider;  ///< gcp | azure
  std::string match;     ///< a part of the image reference, lower case ("debian-cloud/")
  std::string os;        ///< the OS family it boots: ubuntu | debian | rhel
  bool cloud_init = false;     ///< cloud-init runs the user-data
  bool nvidia_driver = false;  ///< an NVIDIA driver comes with the image
  bool operator==(const CloudImage&) const = default;
};

/// Whether NVIDIA publishes a Fabric Manager of a driver's exact version.
enum class FabricManager {
  None,       ///< no: not a data-center release the catalog knows (a desktop build, a typo, an old branch)
  Published,  ///< yes: the release is listed (software.yaml `fabric_manager`)
  Presumed,   ///< a data-center branch's release newer than the newest the catalog lists: NVIDIA ships one with each
};

/// A published vulnerability of the NVIDIA Container Toolkit.
struct Advisory {
  std::string id;        ///< "CVE-2025-23266"
  std::string fixed_in;  ///< first release with the fix, "1.17.8"
  std::string summary;
  bool operator==(const Advisory&) const = default;
};

/// Where a MIG layout's instances sit on one GPU, or why it does not fit.
struct MigPlacement {
  bool fits = false;
  /// (profile, first memory slice) per instance, in placement order; empty when it does not fit.
  std::vector<std::pair<std::string, int>> slots;
  std::string problem;  ///< why it does not fit (unknown profile, too many, no placement)
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
  /// The data file names every catalog has.
  static const std::vector<std::string>& file_names();

  const GpuModel* gpu(const std::string& name) const;  ///< by name, alias or product name
  const Architecture* architecture(const std::string& name) const;
  /// Minimum Linux x86_64 driver for a CUDA toolkit version ("12.4" or
  /// "12.4.1"); nullopt for an unknown version.
  std::optional<std::string> min_driver_for_cuda(const std::string& cuda) const;
  /// The full toolkit version a pin means ("12.4" -> "12.4.0", "11.0" ->
  /// "11.0.2", the GA release); nullopt for an unknown version.
  std::optional<std::string> resolve_cuda(const std::string& cuda) const;
  /// What a pin installs: cuda-toolkit-X-Y's components resolve to the newest
  /// X.Y.z release, so "12.4" and "12.4.0" install 12.4.1 components. The
  /// newest catalog release of the pin's major.minor at or after the pin;
  /// nullopt for an unknown version.
  std::optional<std::string> installed_cuda(const std::string& cuda) const;
  /// The oldest driver that runs every toolkit of CUDA major `major` through
  /// minor-version compatibility ("525" for 12.x); nullopt when not listed.
  std::optional<std::string> minor_compat_min_driver(int major) const;
  /// The forward-compatibility row that lets `driver` run CUDA major `major`, or nullptr.
  const ForwardCompat* forward_compat(int major, const std::string& driver) const;
  const std::vector<ForwardCompat>& forward_compat_rows() const { return forward_; }
  /// Whether NVIDIA publishes a Fabric Manager of exactly this driver version:
  /// listed, or a release of a data-center branch newer than its newest listed
  /// one (with three numbers, as data-center releases have), or none.
  FabricManager fabric_manager_for(const std::string& driver) const;
  /// The data-center driver branches, oldest first.
  const std::vector<DriverBranch>& driver_branches() const { return branches_; }
  /// The branch row of `branch` ("580"), or nullptr.
  const DriverBranch* driver_branch(const std::string& branch) const;
  /// The driver versions with a Fabric Manager release, oldest first.
  std::vector<std::string> fabric_manager_drivers() const;
  /// The container toolkit release Plinth installs when a stack pins none.
  const std::string& container_toolkit_default() const { return toolkit_default_; }
  /// The advisories whose fix `version` predates (the version is affected).
  std::vector<Advisory> container_toolkit_advisories(const std::string& version) const;
  const std::vector<Advisory>& all_container_toolkit_advisories() const { return advisories_; }
  /// The DCGM exporter image (pinned by digest) run when a stack names none.
  const std::string& dcgm_exporter_image() const { return dcgm_image_; }
  /// The NVIDIA DOCA-Host release whose doca-ofed Plinth installs for RDMA fabrics.
  const std::string& doca_version() const { return doca_version_; }
  /// The AWS EFA installer release burst instances with EFA interfaces run (with aws-ofi-nccl).
  const std::string& efa_installer_version() const { return efa_installer_version_; }
  /// The first `cloud_images` row of `provider` whose match `image` contains, or nullptr.
  const CloudImage* cloud_image(const std::string& provider, const std::string& image) const;
  const std::vector<CloudImage>& cloud_images() const { return cloud_images_; }
  /// The kernel module flavours `gpu` runs: "both", "open" or "proprietary".
  std::string kernel_modules(const GpuModel& gpu) const;

  std::vector<std::string> gpu_names() const;
  std::vector<const GpuModel*> gpu_models() const;  ///< in file order
  std::vector<const Architecture*> architectures() const;  ///< in file order
  std::vector<std::string> cuda_versions() const;  ///< full versions, oldest first
  std::string version() const { return version_; }
  /// Each data file's `sources:` (source id -> citation), by file name.
  const std::map<std::string, std::map<std::string, std::string>>& sources() const { return sources_; }

  /// The GPU facts policies read as ctx.catalog: gpus (by name, aliases and
  /// product name resolved); the engine adds the providers' instance types.
  nlohmann::json to_json() const;

 private:
  friend struct CatalogParser;
  std::string version_;
  std::map<std::string, GpuModel> gpus_;
  std::vector<std::string> gpu_order_;
  std::map<std::string, std::string> gpu_aliases_;
  std::map<std::string, Architecture> architectures_;
  std::vector<std::string> architecture_order_;
  std::map<std::string, std::string> cuda_min_driver_;  ///< "12.4.1" -> "550.54.15"
  std::map<std::string, std::string> cuda_ga_;          ///< "12.4" -> "12.4.0"
  std::map<int, std::string> minor_compat_;             ///< 12 -> "525"
  std::vector<ForwardCompat> forward_;
  std::set<std::string> fm_drivers_;
  std::vector<DriverBranch> branches_;
  std::string toolkit_default_;
  std::vector<Advisory> advisories_;
  std::string dcgm_image_;
  std::string doca_version_;
  std::string efa_installer_version_;
  std::vector<CloudImage> cloud_images_;
  std::map<std::string, std::map<std::string, std::string>> sources_;
};

/// Places `layout` (profile -> instances per GPU) on one GPU with NVIDIA's
/// placement rules: an instance of a profile with M memory slices and C
/// compute slices starts at a multiple of M, within the GPU's memory slices,
/// and its compute slices must fit from there (`nvidia-smi mig -lgipp`; the
/// MIG User Guide's placement figures); instances never overlap; at most
/// max_count of a profile. Searches every placement (the GPU has at most 8
/// slices, so this is cheap).
MigPlacement place_mig(const GpuModel& gpu, const std::vector<std::pair<std::string, int>>& layout);

/// The kernel module flavour a node runs: `chosen` ("open" / "proprietary")
/// when set, else the only flavour `gpu` runs, else NVIDIA's default for the
/// driver's branch (the open modules from R560; Driver Installation Guide,
/// "Kernel Modules"). `gpu` may be nullptr (unknown model).
std::string effective_kernel_modules(const Catalog& catalog, const GpuModel* gpu, const std::string& chosen,
                                     const std::string& driver);

/// The catalog every command uses: PLINTH_CATALOG_DIR's files when set, else
/// the embedded data; loaded once per process (thread-safe).
Result<const Catalog*> default_catalog();

}  // namespace plinth::catalog
