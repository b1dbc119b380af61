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
  /// Other rules the file cannot avoid: DRV008, where the rule needs a driver of a branch past its end of life.
  std::vector<std::string> also = {};
};

inline const std::vector<RuleCase>& rule_cases() {
  static const std::vector<RuleCase> cases = {
    {"blueprints/invalid/rule-bal001-few-cpu-cores.yaml", false,
     "blueprints/invalid/rule-bal001-few-cpu-cores.yaml:22:61: warning[BAL001]: node pool 'train' has 48 CPU cores for 8 GPUs (6 per GPU, fewer than 8) (baremetal.node.train)"},
    {"blueprints/invalid/rule-bal002-fewer-nics-than-gpus.yaml", false,
     "blueprints/invalid/rule-bal002-fewer-nics-than-gpus.yaml:22:93: warning[BAL002]: multi-node training pool 'train' has 4 RDMA NIC(s) for 8 H100-80GB GPUs per node; rail-optimised designs give every GPU its own NIC (baremetal.node.train)"},
    {"blueprints/invalid/rule-bal003-low-bandwidth-per-gpu.yaml", false,
     "blueprints/invalid/rule-bal003-low-bandwidth-per-gpu.yaml:14:48: warning[BAL003]: fabric 'ib' gives multi-node training pool 'train' 100 Gb/s per H100-80GB GPU, below 200 Gb/s (net.fabric.ib)"},
    {"blueprints/invalid/rule-burst001-spot-without-checkpointing.yaml", true,
     "blueprints/invalid/rule-burst001-spot-without-checkpointing.yaml:29:12: error[BURST001]: spot burst pool 'aws-p5' has no checkpointing (aws.instance.aws-p5)"},
    {"blueprints/invalid/rule-burst002-spot-checkpoint-nvme.yaml", true,
     "blueprints/invalid/rule-burst002-spot-checkpoint-nvme.yaml:29:78: error[BURST002]: spot burst pool 'aws-p5' checkpoints to nvme tier 'hot', node-local storage that is lost when the instance is reclaimed (aws.instance.aws-p5)"},
    {"blueprints/invalid/rule-burst003-placement-group-over-zones.yaml", false,
     "blueprints/invalid/rule-burst003-placement-group-over-zones.yaml:25:22: warning[BURST003]: burst pool 'aws-p5' sets placement_group: true and lists 2 zones (us-east-1a, us-east-1b): its instances spread over them and fall back to them, but a cluster placement group lives in one Availability Zone, so each zone gets its own group and NCCL (EFA) traffic between them leaves the low-latency network (aws.instance.aws-p5)"},
    {"blueprints/invalid/rule-burst004-multi-node-without-gpu-network.yaml", false,
     "blueprints/invalid/rule-burst004-multi-node-without-gpu-network.yaml:28:92: warning[BURST004]: burst pool 'gcp-a3' (a3-megagpu-8g) may run 4 instances, whose GPUs reach each other through gpudirect-tcpxo on 8 extra NICs, but the pool lists no gpu_subnetworks: NCCL between instances runs over TCP on the instance's one NIC (gcp.instance.gcp-a3)"},
    {"blueprints/invalid/rule-burst005-gpu-nics-too-few.yaml", true,
     "blueprints/invalid/rule-burst005-gpu-nics-too-few.yaml:29:45: error[BURST005]: burst pool 'gcp-a3' (a3-megagpu-8g) has 8 GPU NICs (gpudirect-tcpxo), but gpu_subnetworks lists 4 subnetworks (gcp.instance.gcp-a3)"},
    {"blueprints/invalid/rule-cuda001-driver-too-old.yaml", true,
     "blueprints/invalid/rule-cuda001-driver-too-old.yaml:7:13: error[CUDA001]: driver 450.80.02 in stack 'train' is older than 550.54.15, the minimum for CUDA 12.4 (cuda-toolkit-12-4 installs the newest release, 12.4.1), and older than 525, the minimum for CUDA 12.x through minor-version compatibility", {"DRV008"}},
    {"blueprints/invalid/rule-cuda002-unknown-cuda.yaml", true,
     "blueprints/invalid/rule-cuda002-unknown-cuda.yaml:8:11: error[CUDA002]: unknown CUDA version '12.7' in stack 'train'"},
    {"blueprints/invalid/rule-cuda003-gpu-needs-newer-cuda.yaml", true,
     "blueprints/invalid/rule-cuda003-gpu-needs-newer-cuda.yaml:22:21: error[CUDA003]: node pool 'train' runs B200 (Blackwell, compute capability 10.0), which needs CUDA 12.8 or newer, but stack 'train' pins CUDA 12.4 (baremetal.node.train)"},
    {"blueprints/invalid/rule-cuda004-burst-gpu-needs-newer-cuda.yaml", true,
     "blueprints/invalid/rule-cuda004-burst-gpu-needs-newer-cuda.yaml:28:69: error[CUDA004]: burst pool 'aws-p5' (p5.48xlarge) runs H100-80GB (Hopper, compute capability 9.0), which needs CUDA 11.8 or newer, but stack 'train' pins CUDA 11.4 (aws.instance.aws-p5)"},
    {"blueprints/invalid/rule-cuda005-minor-version-compat.yaml", false,
     "blueprints/invalid/rule-cuda005-minor-version-compat.yaml:7:13: warning[CUDA005]: driver 580.126.20 in stack 'train' runs CUDA 13.2 (cuda-toolkit-13-2 installs the newest release, 13.2.2) only through CUDA minor-version compatibility (13.x on >= 580): PTX built for the newer toolkit fails to JIT-compile and APIs newer than the driver return cudaErrorCallRequiresNewerDriver"},
    {"blueprints/invalid/rule-cuda006-dropped-architecture.yaml", true,
     "blueprints/invalid/rule-cuda006-dropped-architecture.yaml:22:21: error[CUDA006]: node pool 'train' runs V100-32GB (Volta), which CUDA 13.0 and later no longer support, but stack 'train' installs CUDA 13.0.2 (baremetal.node.train)"},
    {"blueprints/invalid/rule-cuda007-forward-compat-branch.yaml", true,
     "blueprints/invalid/rule-cuda007-forward-compat-branch.yaml:10:18: error[CUDA007]: stack 'train' asks for CUDA forward compatibility, but driver 580.126.20 is not on a branch that runs CUDA 13.x through cuda-compat"},
    {"blueprints/invalid/rule-drv001-driver-branch-too-new.yaml", true,
     "blueprints/invalid/rule-drv001-driver-branch-too-new.yaml:7:13: error[DRV001]: node pool 'train' runs V100-32GB (Volta), whose last supported driver branch is R580, but stack 'train' pins driver 590.44.01 (baremetal.node.train)"},
    {"blueprints/invalid/rule-drv002-driver-below-gpu-minimum.yaml", true,
     "blueprints/invalid/rule-drv002-driver-below-gpu-minimum.yaml:7:13: error[DRV002]: node pool 'train' runs B200, which needs driver 570.133.20 or newer, but stack 'train' pins 570.124.06 (baremetal.node.train)", {"DRV008"}},
    {"blueprints/invalid/rule-drv003-no-fabric-manager.yaml", true,
     "blueprints/invalid/rule-drv003-no-fabric-manager.yaml:7:13: error[DRV003]: node pool 'train' runs H100-80GB on NVSwitch, which needs NVIDIA Fabric Manager of exactly the driver's version, but no Fabric Manager 580.76.05 is published (stack 'train': not a data-center release of R580 the catalog knows) (baremetal.node.train)"},
    {"blueprints/invalid/rule-drv004-kernel-modules.yaml", true,
     "blueprints/invalid/rule-drv004-kernel-modules.yaml:10:21: error[DRV004]: node pool 'train' runs B200 (Blackwell), which runs only the open NVIDIA kernel modules, but stack 'train' sets kernel_modules: proprietary (baremetal.node.train)"},
    {"blueprints/invalid/rule-drv005-container-toolkit-cve.yaml", true,
     "blueprints/invalid/rule-drv005-container-toolkit-cve.yaml:10:24: error[DRV005]: stack 'train' pins NVIDIA Container Toolkit 1.17.3, affected by CVE-2025-23359 (TOCTOU bypass of the CVE-2024-0132 fix: container escape, fixed in 1.17.4); CVE-2025-23266 (createContainer hook loads LD_PRELOAD from the image: container escape as root, fixed in 1.17.8); CVE-2025-23267 (update-ldcache hook follows symlinks from the image: data tampering, denial of service, fixed in 1.17.8)"},
    {"blueprints/invalid/rule-gpu001-unknown-gpu.yaml", true,
     "blueprints/invalid/rule-gpu001-unknown-gpu.yaml:22:21: error[GPU001]: unknown GPU model 'H100-80' in node pool 'train' (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu002-unknown-instance-type.yaml", true,
     "blueprints/invalid/rule-gpu002-unknown-instance-type.yaml:28:69: error[GPU002]: unknown aws instance type 'p5.96xlarge' in burst pool 'aws-p5' (aws.instance.aws-p5)"},
    {"blueprints/invalid/rule-gpu003-mig-without-mig.yaml", true,
     "blueprints/invalid/rule-gpu003-mig-without-mig.yaml:27:20: error[GPU003]: node pool 'train' asks for MIG (3g.40gb), but L40S does not support MIG (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu004-unknown-mig-profile.yaml", true,
     "blueprints/invalid/rule-gpu004-unknown-mig-profile.yaml:27:20: error[GPU004]: MIG profile '3g.20gb' of node pool 'train' does not exist on H100-80GB (baremetal.node.train)"},
    {"blueprints/invalid/rule-drv006-mig-driver.yaml", true,
     "blueprints/invalid/rule-drv006-mig-driver.yaml:7:13: error[DRV006]: node pool 'train' partitions B300 with MIG, which needs driver 580.82.07 or newer (NVIDIA MIG User Guide), but stack 'train' pins 580.65.06 (baremetal.node.train)"},
    {"blueprints/invalid/rule-drv007-secure-boot-dkms.yaml", false,
     "blueprints/invalid/rule-drv007-secure-boot-dkms.yaml:27:11: warning[DRV007]: node pool 'train' enables Secure Boot (SecureBoot: Enabled); the render installs Canonical's signed NVIDIA modules, but DOCA-OFED's are built by DKMS on the node and signed with a key the firmware does not know, so they do not load after the reboot (baremetal.node.train)"},
    {"blueprints/invalid/rule-drv008-driver-end-of-life.yaml", false,
     "blueprints/invalid/rule-drv008-driver-end-of-life.yaml:7:13: warning[DRV008]: driver 550.54.15 in stack 'train' is on R550 (production branch), which reached end of life in 2025-08, and gets no more security fixes"},
    {"blueprints/invalid/rule-gpu005-mig-too-many.yaml", true,
     "blueprints/invalid/rule-gpu005-mig-too-many.yaml:27:42: error[GPU005]: MIG layout 3 x 3g.40gb of node pool 'train' does not fit H100-80GB: 3 x 3g.40gb exceeds the 2 instance(s) of 3g.40gb that H100-80GB allows (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu006-model-too-large.yaml", true,
     "blueprints/invalid/rule-gpu006-model-too-large.yaml:27:23: error[GPU006]: node pool 'train' needs about 6720 GB of GPU memory for its largest model (full training of a 700 GB model (largest_model_gb, read as bf16 weights: 350B parameters) with Adam in mixed precision: 16 bytes per parameter (5600 GB of weights, gradients and optimizer state) + 20% for activations), but has 2560 GB across its 4 nodes (8 x H100-80GB each, sharded over fabric 'ib') (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu007-no-ecc-nvlink.yaml", false,
     "blueprints/invalid/rule-gpu007-no-ecc-nvlink.yaml:22:21: warning[GPU007]: training pool 'train' (4 x 8 RTX-4090) has no ECC memory and no NVLink between the GPUs of a node (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu008-model-exceeds-mig-slice.yaml", true,
     "blueprints/invalid/rule-gpu008-model-exceeds-mig-slice.yaml:27:23: error[GPU008]: node pool 'train' needs about 84 GB per model replica (inference estimate: of a 70 GB model (largest_model_gb, read as bf16 weights: 35B parameters): 70 GB of weights + 20% for KV cache and activations), more than its largest MIG instance, 3g.40gb (40 GB) (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu009-host-memory.yaml", false,
     "blueprints/invalid/rule-gpu009-host-memory.yaml:22:76: warning[GPU009]: node pool 'train' has 512 GB of host memory, less than its 640 GB of GPU memory (baremetal.node.train)"},
    {"blueprints/invalid/rule-gpu010-bf16-on-volta.yaml", true,
     "blueprints/invalid/rule-gpu010-bf16-on-volta.yaml:23:21: error[GPU010]: node pool 'train' declares bf16 but runs V100-32GB (Volta), which has no BF16 arithmetic (baremetal.node.train)"},
    {"blueprints/invalid/rule-imex001-gb200-without-imex.yaml", true,
     "blueprints/invalid/rule-imex001-gb200-without-imex.yaml:22:21: error[IMEX001]: node pool 'rack-a' runs GB200 compute trays, whose GPUs reach the other trays of their NVLink domain only through IMEX, but sets no imex.nodes (baremetal.node.rack-a)"},
    {"blueprints/invalid/rule-img001-image-not-pinned.yaml", false,
     "blueprints/invalid/rule-img001-image-not-pinned.yaml:9:14: warning[IMG001]: image 'registry.example/ml/train:2024.06' in stack 'train' is not pinned by digest"},
    {"blueprints/invalid/rule-img002-image-without-cloud-init.yaml", true,
     "blueprints/invalid/rule-img002-image-without-cloud-init.yaml:25:12: error[IMG002]: burst pool 'a3' boots projects/debian-cloud/global/images/family/debian-12, a debian image without cloud-init, so none of the rendered user-data (driver, CUDA, mounts) would run (gcp.instance.a3)"},
    {"blueprints/invalid/rule-img003-image-with-driver.yaml", true,
     "blueprints/invalid/rule-img003-image-with-driver.yaml:20:12: error[IMG003]: burst pool 'nd' boots microsoft-dsvm:ubuntu-hpc:2204:latest, which comes with its own NVIDIA driver; the stack's pinned driver would be installed over it (azure.vm.nd)"},
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
    {"blueprints/invalid/rule-net008-no-gpudirect.yaml", false,
     "blueprints/invalid/rule-net008-no-gpudirect.yaml:25:13: warning[NET008]: node pool 'train' uses the inbox RDMA stack (rdma-core) on fabric 'ib' with the proprietary kernel modules, so GPUDirect RDMA (dma-buf) is not available (baremetal.node.train)"},
    {"blueprints/invalid/rule-net009-vrf-name.yaml", true,
     "blueprints/invalid/rule-net009-vrf-name.yaml:12:60: error[NET009]: VLAN 'ml-fabric' names VRF 'machine-learning', which cannot become the Linux device 'vrf-machine-learning' (net.vlan.ml-fabric)"},
    {"blueprints/invalid/rule-sto001-nfs-for-many-nodes.yaml", false,
     "blueprints/invalid/rule-sto001-nfs-for-many-nodes.yaml:18:26: warning[STO001]: NFS tier 'home' serves 32 training nodes (more than 20) (storage.tier.home)"},
    {"blueprints/invalid/rule-sto002-no-fast-storage.yaml", false,
     "blueprints/invalid/rule-sto002-no-fast-storage.yaml:26:14: warning[STO002]: training pool 'train' has no nvme or parallel-fs storage tier (baremetal.node.train)"},
    {"blueprints/invalid/rule-sto003-no-export.yaml", true,
     "blueprints/invalid/rule-sto003-no-export.yaml:27:20: error[STO003]: node pool 'train' lists nfs tier 'home', which has no export to mount (baremetal.node.train)"},
    {"blueprints/invalid/rule-sto004-nfs-tls-on-22-04.yaml", true,
     "blueprints/invalid/rule-sto004-nfs-tls-on-22-04.yaml:18:109: error[STO004]: tier 'home' asks for encryption in transit (tls1.3), but NFS RPC-with-TLS (xprtsec=tls) needs Linux 6.5 and ktls-utils, and node pool 'train' runs ubuntu-22.04 (storage.tier.home)"},
    {"blueprints/invalid/rule-sto005-o2ib-without-rdma.yaml", true,
     "blueprints/invalid/rule-sto005-o2ib-without-rdma.yaml:24:20: error[STO005]: node pool 'prep' mounts Lustre tier 'shared' over o2ib (10.210.0.10@o2ib:/shared) but has no RDMA fabric, so LNet cannot reach the server (baremetal.node.prep)"},
    {"blueprints/invalid/rule-sto006-o2ib-nid-in-vlan.yaml", false,
     "blueprints/invalid/rule-sto006-o2ib-nid-in-vlan.yaml:19:66: warning[STO006]: tier 'shared' names o2ib NID 10.110.0.10@o2ib, an address in VLAN 'storage-net' (10.110.0.0/16), an Ethernet network; an o2ib NID is the server's IPoIB address (storage.tier.shared)"},
  };
  return cases;
}

}  // namespace plinth::test
