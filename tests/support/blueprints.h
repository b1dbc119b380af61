#pragma once
// Blueprint texts the e2e and fault tests write: the pieces (header, stack,
// bare-metal and burst pools) and the blueprints made of them. Each builder
// writes the same lines, in the same order, wherever it is used, so a test
// that checks a file:line:column keeps its numbers.
#include <string>
#include <vector>

namespace plinth::test {

/// The driver every test stack pins unless a test changes it.
inline constexpr const char* kDriver = "550.54.15";
/// The NGC PyTorch image (by digest) of the test stacks.
inline constexpr const char* kPytorchImage =
    "nvcr.io/nvidia/pytorch@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58";
/// The images aws_pool() and gcp_pool() boot.
inline constexpr const char* kAwsImage = "ami-0abcdef1234567890";
inline constexpr const char* kGcpImage = "projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts";
/// The example lab blueprint, relative to the repository root.
inline constexpr const char* kLabExample = "blueprints/examples/lab.yaml";

/// apiVersion, kind and `metadata: {name: NAME, owner: OWNER}` (`{name: NAME}` when `owner` is "").
std::string blueprint_header(const std::string& name, const std::string& owner = "ml-platform");

/// `stacks:` with one stack, train: `driver`, CUDA 12.4, cuDNN 9.1.0, PyTorch 2.3.1 and kPytorchImage.
std::string train_stack(const std::string& driver = kDriver);
/// `stacks:` with train holding only the driver, CUDA 12.4 and kPytorchImage.
std::string train_stack_lean();
/// `stacks:` with train as one flow map of the driver and CUDA 12.4.
std::string train_stack_flow();

/// `"BASE/bmc/{index}"`: node i of a pool on BMC i of the redfish-emulator at `base`.
std::string bmc_endpoints(const std::string& base);
/// A node pool's `bmc:` block: its endpoints (a YAML scalar or flow list), credentials and CA bundle.
std::string bmc_block(const std::string& endpoints, const std::string& ca,
                      const std::string& credentials = "env:BMC_CREDENTIALS");

/// A bare-metal pool of 8-GPU H100 nodes (2 TiB, 96 cores) on stack train.
struct BaremetalPool {
  std::string name = "train-a";
  int count = 2;
  std::string role = "training";
  std::string extra;      ///< more keys before bmc:, "    key: value\n" each
  std::string endpoints;  ///< the BMCs (a YAML scalar or flow list)
  std::string ca;         ///< the BMCs' CA bundle
  std::string credentials = "env:BMC_CREDENTIALS";
  bool boot = true;  ///< boot over PXE
  bool mig = true;   ///< `mig: {profile: none}`
};
/// `blueprint` with train_stack()'s driver pin kDriver changed to `driver` ("" when it has no such pin).
std::string repinned(std::string blueprint, const std::string& driver = "550.90.07");
/// The pool as an item of node_pools:.
std::string baremetal_pool(const BaremetalPool& p);

/// A blueprint named `name` with train_stack() and the node pools `pools` (baremetal_pool() texts).
std::string baremetal_blueprint(const std::string& name, const std::string& pools);

/// A blueprint (named pools, no owner, train_stack_flow()) with one pool `pool` of `count` 4-GPU L40S
/// nodes whose `bmc:` lines are `bmc` (bmc_block(), or "    bmc: {...}\n").
std::string l40s_blueprint(const std::string& pool, const std::string& count, const std::string& bmc);

/// Logical resources only (apply needs no provider): train_stack_flow() and `tiers` NVMe tiers t0, t1, ...,
/// then `extra` (more keys under storage:, or more sections).
std::string logical_blueprint(int tiers, const std::string& extra = "");

/// A cloud burst pool (aws_pool(), gcp_pool(), azure_pool() fill in the cloud's region, image and limits).
struct BurstPool {
  std::string provider;
  std::string name = "gpu";
  std::string region;
  std::string resource_group;  ///< Azure's; none when ""
  std::string instance_type;
  std::string zones;  ///< a flow list written right after instance_type; none when ""
  int desired = 1;
  int max = 1000;
  bool spot = true;
  std::string image;
  std::string ssh_public_key;  ///< none when ""
  std::string extra;           ///< more keys, "    key: value\n" each, at the end
};
/// `desired` spot-or-not p5.48xlarge in us-east-1.
BurstPool aws_pool(int desired = 40, std::string extra = "", bool spot = true);
/// `desired` a3-highgpu-8g in us-central1 (over zones a and b unless `extra` says otherwise).
BurstPool gcp_pool(int desired = 16, std::string extra = "    zones: [us-central1-a, us-central1-b]\n",
                   bool spot = true);
/// `desired` Spot Standard_ND96isr_H100_v5 in eastus, resource group rg-burst.
BurstPool azure_pool(int desired = 8, std::string extra = "");
/// The pool as an item of burst_pools:.
std::string burst_pool(const BurstPool& p);

/// A blueprint of one cloud's burst `pools`: train_stack(`driver`), a checkpoint tier `ckpt` in that
/// cloud's object store, and the pools. Named e2e-PROVIDER unless `name` says otherwise.
std::string burst_blueprint(const std::vector<BurstPool>& pools, const std::string& driver = kDriver,
                            const std::string& name = "");

}  // namespace plinth::test
