#pragma once
// The files in blueprints/invalid/rule-*.yaml and the first line each makes
// `plinth validate` print: one file per domain rule (docs/rules.md). Shared by
// tests/engine/validate/invalid_files_test.cpp (through the library) and
// tests/e2e/rules_test.cpp (through the binary).
#include <string>
#include <vector>

namespace plinth::test {

struct RuleCase {
  std::string file;   ///< relative to the repository root
  bool error;         ///< false: warnings only, `plinth validate` exits 0
  std::string line;   ///< the exact first diagnostic line
};

inline const std::vector<RuleCase>& rule_cases() {
  static const std::vector<RuleCase> cases = {
    {"blueprints/invalid/rule-burst001-spot-without-checkpointing.yaml", true,
     "blueprints/invalid/rule-burst001-spot-without-checkpointing.yaml:29:12: error[BURST001]: spot burst pool 'aws-p5' has no checkpointing (aws.instance.aws-p5)"},
    {"blueprints/invalid/rule-cuda001-driver-too-old.yaml", true,
     "blueprints/invalid/rule-cuda001-driver-too-old.yaml:7:13: error[CUDA001]: driver 535.104.05 in stack 'train' is older than 550.54.14, the minimum for CUDA 12.4"},
    {"blueprints/invalid/rule-cuda002-unknown-cuda.yaml", true,
     "blueprints/invalid/rule-cuda002-unknown-cuda.yaml:8:11: error[CUDA002]: unknown CUDA version '12.7' in stack 'train'"},
    {"blueprints/invalid/rule-cuda003-gpu-needs-newer-cuda.yaml", true,
     "blueprints/invalid/rule-cuda003-gpu-needs-newer-cuda.yaml:22:21: error[CUDA003]: node pool 'train' runs B200 (Blackwell, compute capability 10.0), which needs CUDA 12.8 or newer, but stack 'train' pins CUDA 12.4 (baremetal.node.train)"},
    {"blueprints/invalid/rule-cuda004-burst-gpu-needs-newer-cuda.yaml", true,
     "blueprints/invalid/rule-cuda004-burst-gpu-needs-newer-cuda.yaml:28:69: error[CUDA004]: burst pool 'aws-p5' (p5.48xlarge) runs H100-80GB (Hopper, compute capability 9.0), which needs CUDA 11.8 or newer, but stack 'train' pins CUDA 11.4 (aws.instance.aws-p5)"},
    {"blueprints/invalid/rule-gpu001-unknown-gpu.yaml", true,
     "blueprints/invalid/rule-gpu001-unknown-gpu.yaml:22:21: error[GPU001]: unknown GPU model 'H100-80' in node pool 'train' (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu002-unknown-instance-type.yaml", true,
     "blueprints/invalid/rule-gpu002-unknown-instance-type.yaml:28:69: error[GPU002]: unknown aws instance type 'p5.96xlarge' in burst pool 'aws-p5' (aws.instance.aws-p5)"},
    {"blueprints/invalid/rule-gpu003-mig-without-mig.yaml", true,
     "blueprints/invalid/rule-gpu003-mig-without-mig.yaml:27:20: error[GPU003]: node pool 'train' asks for MIG profile '3g.40gb', but L40S does not support MIG (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu004-unknown-mig-profile.yaml", true,
     "blueprints/invalid/rule-gpu004-unknown-mig-profile.yaml:27:20: error[GPU004]: MIG profile '3g.20gb' of node pool 'train' does not exist on H100-80GB (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu005-mig-too-many.yaml", true,
     "blueprints/invalid/rule-gpu005-mig-too-many.yaml:27:42: error[GPU005]: MIG layout 3 x 3g.40gb of node pool 'train' needs 9 compute slices; H100-80GB has 7 (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu006-model-too-large.yaml", true,
     "blueprints/invalid/rule-gpu006-model-too-large.yaml:27:23: error[GPU006]: node pool 'train' declares a 700 GB model, but a node has only 640 GB of GPU memory (8 x H100-80GB) (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu007-no-ecc-nvlink.yaml", false,
     "blueprints/invalid/rule-gpu007-no-ecc-nvlink.yaml:22:21: warning[GPU007]: multi-node training pool 'train' uses RTX-4090, which has no ECC memory and NVLink (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu008-model-exceeds-mig-slice.yaml", true,
     "blueprints/invalid/rule-gpu008-model-exceeds-mig-slice.yaml:27:23: error[GPU008]: node pool 'train' declares a 70 GB model, larger than one 3g.40gb MIG instance (40 GB) (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu009-host-memory.yaml", false,
     "blueprints/invalid/rule-gpu009-host-memory.yaml:22:76: warning[GPU009]: node pool 'train' has 512 GB of host memory, less than its 640 GB of GPU memory (baremetal.node.train)"},
    {"blueprints/invalid/rule-img001-image-not-pinned.yaml", false,
     "blueprints/invalid/rule-img001-image-not-pinned.yaml:9:14: warning[IMG001]: image 'registry.example/ml/train:2024.06' in stack 'train' is not pinned by digest"},
    {"blueprints/invalid/rule-net001-vlan-id-range.yaml", true,
     "blueprints/invalid/rule-net001-vlan-id-range.yaml:12:29: error[NET001]: VLAN 'ml-fabric' has id 4095, outside 1-4094 (net.vlan.ml-fabric)"},
    {"blueprints/invalid/rule-net002-duplicate-vlan-id.yaml", true,
     "blueprints/invalid/rule-net002-duplicate-vlan-id.yaml:13:31: error[NET002]: VLAN 'storage-net' reuses id 100 of VLAN 'ml-fabric' (blueprints/invalid/rule-net002-duplicate-vlan-id.yaml:12:29) (net.vlan.storage-net)"},
    {"blueprints/invalid/rule-net003-invalid-cidr.yaml", true,
     "blueprints/invalid/rule-net003-invalid-cidr.yaml:12:40: error[NET003]: VLAN 'ml-fabric' has invalid CIDR '10.100.0.0/33' (net.vlan.ml-fabric)"},
    {"blueprints/invalid/rule-net004-overlapping-cidrs.yaml", true,
     "blueprints/invalid/rule-net004-overlapping-cidrs.yaml:13:42: error[NET004]: CIDR 10.100.64.0/18 of VLAN 'storage-net' overlaps 10.100.0.0/16 of VLAN 'ml-fabric' in VRF 'ml' (net.vlan.storage-net)"},
    {"blueprints/invalid/rule-net005-roce-without-pfc.yaml", false,
     "blueprints/invalid/rule-net005-roce-without-pfc.yaml:15:13: warning[NET005]: RoCE fabric 'roce' does not enable PFC (net.fabric.roce)"},
    {"blueprints/invalid/rule-net006-oversubscribed-training.yaml", false,
     "blueprints/invalid/rule-net006-oversubscribed-training.yaml:14:91: warning[NET006]: fabric 'ib' is oversubscribed 2:1 but carries training pool 'train' (net.fabric.ib)"},
    {"blueprints/invalid/rule-net007-no-rdma-fabric.yaml", false,
     "blueprints/invalid/rule-net007-no-rdma-fabric.yaml:24:13: warning[NET007]: multi-node training pool 'train' (4 nodes) has only the ethernet fabric 'eth' (baremetal.node.train)"},
    {"blueprints/invalid/rule-sto001-nfs-for-many-nodes.yaml", false,
     "blueprints/invalid/rule-sto001-nfs-for-many-nodes.yaml:18:26: warning[STO001]: NFS tier 'home' serves 32 training nodes (more than 20) (storage.tier.home)"},
    {"blueprints/invalid/rule-sto002-no-fast-storage.yaml", false,
     "blueprints/invalid/rule-sto002-no-fast-storage.yaml:26:14: warning[STO002]: training pool 'train' has no nvme or parallel-fs storage tier (baremetal.node.train)"},
  };
  return cases;
}

}  // namespace plinth::test
