// The domain rules and the Checker that runs them (private to
// engine/validate; the interface is validate.h). Each rule is one constant,
// defined in the file of the area that checks it; rules() (validate.cpp)
// gathers them into one list. Checker::run (validate.cpp) checks the areas in
// a fixed order, so diagnostics come out in the same order every time.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>

#include "engine/blueprint/blueprint.h"
#include "engine/catalog/catalog.h"
#include "engine/core/diagnostic.h"
#include "engine/validate/validate.h"

namespace plinth::validate {

/// An InfiniBand or RoCE fabric (node_pools.cpp); false for none or ethernet.
bool rdma_kind(const bp::Fabric* f);

// stacks.cpp
extern const RuleInfo CUDA001, CUDA002, CUDA005, CUDA007, DRV005, DRV008, IMG001;
// networks.cpp
extern const RuleInfo NET001, NET002, NET003, NET004, NET005, NET006, NET009;
// platform.cpp: what runs on a GPU
extern const RuleInfo CUDA003, CUDA004, CUDA006, DRV001, DRV002, DRV003, DRV004, GPU010;
// node_pools.cpp
extern const RuleInfo BAL001, BAL002, BAL003, DRV006, DRV007, GPU001, IMEX001, GPU003, GPU004, GPU005, GPU006, GPU007, GPU008, GPU009,
    NET007, NET008, STO002;
// burst_pools.cpp
extern const RuleInfo BURST001, BURST002, BURST003, BURST004, BURST005, GPU002, IMG002, IMG003;
// storage.cpp
extern const RuleInfo STO001, STO003, STO004, STO005, STO006;

/// The driver the toolkit a stack installs needs, and which release that is.
struct CudaNeed {
  std::string installed;  ///< "12.4.1"
  std::string driver;     ///< "550.54.15"
  int major = 0;
};

/// Runs every domain rule over one blueprint.
class Checker {
 public:
  Checker(const bp::Blueprint& b, const catalog::Catalog& c);
  Diagnostics run();

 private:
  // validate.cpp
  void add(const RuleInfo& rule, const SourceLoc& loc, const std::string& address, std::string message,
           std::string hint);

  /// The address prefix of a pool's resources: its provider's type for the
  /// section, then the pool's name ("baremetal.node.train-a").
  static std::string pool_address(const char* section, const std::string& provider, const std::string& name);
  static std::string node_address(const bp::NodePool& p) { return pool_address("node_pools", p.provider, p.name); }
  static std::string burst_address(const bp::BurstPool& p) { return pool_address("burst_pools", p.provider, p.name); }

  // stacks.cpp
  std::optional<CudaNeed> cuda_need(const bp::Stack& s) const;
  std::string forward_branches(int major) const;
  void check_stack(const bp::Stack& s);
  void check_driver_support(const bp::Stack& s);  // DRV008

  // networks.cpp
  void check_vlans();
  void check_fabric(const bp::Fabric& f);
  void check_fabric_use();

  // platform.cpp
  void check_platform(const bp::Stack& s, const catalog::GpuModel& gpu, bool fabric_manager, const std::string& precision,
                      const SourceLoc& gpu_at, const std::string& addr, const std::string& who);
  void check_cuda_supports(const catalog::GpuModel& gpu, const bp::Stack& stack, const RuleInfo& rule, const SourceLoc& at,
                           const std::string& addr, const std::string& who);

  // node_pools.cpp
  void check_node_pool(const bp::NodePool& p);
  bool check_mig(const bp::NodePool& p, const catalog::GpuModel& gpu, const std::string& addr);
  void check_model_memory(const bp::NodePool& p, const catalog::GpuModel& gpu, double node_gb, const bp::Fabric* fabric,
                          const std::string& addr);
  void check_ecc_nvlink(const bp::NodePool& p, const catalog::GpuModel& gpu, const std::string& addr);
  void check_imex(const bp::NodePool& p, const catalog::GpuModel& gpu, const std::string& addr, const std::string& who);
  /// DRV007: Secure Boot with DKMS-built modules.
  void check_secure_boot(const bp::NodePool& p, const bp::Fabric* fabric, const std::string& addr, const std::string& who);
  void check_balance(const bp::NodePool& p, const catalog::GpuModel& gpu, const bp::Fabric* fabric, bool multi_node_training,
                     const std::string& addr);

  // burst_pools.cpp
  void check_burst_pool(const bp::BurstPool& p);
  void check_image(const bp::BurstPool& p, const std::string& addr);

  // storage.cpp
  /// `fabric`: the pool's RDMA fabric (nullptr for burst pools and pools without one).
  void check_mounts(const std::vector<std::string>& storage, const bp::Origin& origin, const std::string& os,
                    const std::string& addr, const std::string& who, const bp::Fabric* fabric);
  void check_lustre_nids();
  void check_nfs_use();

  template <typename T>
  static const T* find(const std::unordered_map<std::string, const T*>& m, const std::string& name) {
    auto it = m.find(name);
    return it == m.end() ? nullptr : it->second;
  }

  const bp::Blueprint& bp_;
  const catalog::Catalog& cat_;
  std::unordered_map<std::string, const bp::Stack*> stacks_;
  std::unordered_map<std::string, const bp::Fabric*> fabrics_;
  std::unordered_map<std::string, const bp::StorageTier*> tiers_;
  std::unordered_map<std::string, int> tier_training_nodes_;  ///< tier -> training nodes using it (STO001)
  std::unordered_map<std::string, const bp::NodePool*> fabric_training_pool_;  ///< fabric -> first training pool
  Diagnostics out_;
};

}  // namespace plinth::validate
