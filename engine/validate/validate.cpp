#include "engine/validate/validate.h"

#include "engine/provider/registry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "engine/core/strings.h"

namespace plinth::validate {

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> all = {
      {"BAL001", Severity::Warning, "fewer than 8 CPU cores per GPU",
       "A node pool's `hardware.cpu_cores` divided by `gpus_per_node` is below 8. Position: `hardware.cpu_cores`.",
       "Data loading, augmentation and NCCL's proxy threads run on the CPU; NVIDIA's reference systems pair 14 to 16 "
       "cores with every GPU (DGX A100: 128 cores for 8 GPUs; DGX H100 and DGX B200: 112 for 8; NVIDIA DGX user guides, "
       "system specifications). Plinth warns below 8, about half of that, where GPUs start to wait for input.",
       "choose CPUs with more cores, or fewer GPUs per node"},
      {"BAL002", Severity::Warning, "fewer RDMA NICs than GPUs on a multi-node Hopper or Blackwell training pool",
       "A multi-node training pool of Hopper or Blackwell GPUs declares fewer RDMA NICs (`hardware.rdma_nics`, else the "
       "explicit names in `interfaces.rdma`) than `gpus_per_node`. Position: `hardware.rdma_nics` (or `interfaces`).",
       "NVIDIA's rail-optimised reference designs give every GPU its own NIC on its own rail (DGX H100 / DGX B200: 8 "
       "ConnectX-7 at 400 Gb/s for 8 GPUs; DGX SuperPOD reference architecture), so all-reduce traffic never shares a "
       "NIC or crosses PCIe switches.",
       "one RDMA NIC per GPU (rail-optimised), or fewer GPUs per node"},
      {"BAL003", Severity::Warning, "less than 200 Gb/s of RDMA bandwidth per GPU on a multi-node Hopper or Blackwell training pool",
       "A multi-node training pool of Hopper or Blackwell GPUs gets less than 200 Gb/s of fabric bandwidth per GPU: "
       "`speed_gbps` of its fabric times its RDMA NICs (one per GPU when not declared) divided by `gpus_per_node`. "
       "Position: the fabric's `speed_gbps`.",
       "H100-class GPUs are built for 400 Gb/s per GPU on NDR InfiniBand or 400G RoCE (DGX H100 user guide; DGX "
       "SuperPOD reference architecture); below 200 Gb/s the inter-node all-reduce, not the GPUs, sets the step time.",
       "a 400 Gb/s (NDR / 400GbE) fabric with one NIC per GPU"},
      {"BURST001", Severity::Error, "spot burst pool without checkpointing",
       "A burst pool with `spot: true` has no `checkpointing:`. Position: `spot`.",
       "Spot / preemptible capacity is reclaimed at short notice (two minutes on AWS, 30 seconds on GCP and Azure, per "
       "each provider's spot documentation); a job without checkpoints loses everything since it started.",
       "add `checkpointing: {interval_minutes: 30, target: TIER}`, or set `spot: false`"},
      {"BURST002", Severity::Error, "spot checkpoints written to node-local NVMe",
       "A spot burst pool's `checkpointing.target` is an `nvme` tier. Position: `checkpointing.target`.",
       "Instance-store NVMe is erased when a spot instance is reclaimed (AWS EC2 instance store lifetime, GCP Local SSD, "
       "Azure temporary disk); checkpoints there vanish with the instance they were meant to outlive.",
       "checkpoint to an object, nfs or parallel-fs tier that outlives the instance"},
      {"CUDA001", Severity::Error, "driver too old for the pinned CUDA toolkit, even with compatibility",
       "A stack's `driver` is older than the Linux x86_64 driver NVIDIA lists for the toolkit that will be installed "
       "(`cuda: \"12.4\"` installs the newest 12.4.x, 12.4.1, because cuda-toolkit-12-4's components resolve to it) and "
       "also older than the minor-version compatibility minimum of its CUDA major (11.x: 450.80.02, 12.x: R525, 13.x: "
       "R580), and no forward compatibility applies. Versions compare numerically component by component. Position: "
       "`driver`.",
       "NVIDIA CUDA Toolkit release notes, tables 'CUDA Toolkit and Corresponding Driver Versions' and 'Minimum Required "
       "Driver Version for CUDA Minor Version Compatibility' (engine/catalog/data/cuda.yaml); the CUDA Compatibility "
       "guide.",
       "pin the driver named in the hint or newer, or an older CUDA, or (data-center GPUs) `cuda_compat: true` on a "
       "forward-compatible branch"},
      {"CUDA002", Severity::Error, "unknown CUDA toolkit version",
       "A stack's `cuda` is not in the catalog (never released, a typo, or newer than the catalog). The hint names the "
       "nearest known versions. Position: `cuda`.",
       "Only versions in the CUDA release notes' driver table (engine/catalog/data/cuda.yaml) can be checked and "
       "installed.",
       "use a released version; if NVIDIA released a newer toolkit, add its row to the catalog"},
      {"CUDA003", Severity::Error, "node pool GPU needs a newer CUDA than its stack pins",
       "The pool's GPU architecture needs a newer toolkit than the stack's `cuda` (Volta 9.0, Turing 10.0, Ampere 11.0 / "
       "11.1 for compute capability 8.6, Ada and Hopper 11.8, Blackwell 12.8, Blackwell Ultra 12.9). Position: the pool's "
       "`hardware.gpu`.",
       "CUDA C++ Programming Guide, compute capabilities: an older toolkit cannot build or run code for the GPU "
       "(`min_cuda` in gpus.yaml).",
       "pin at least that CUDA (and its driver) in the stack"},
      {"CUDA004", Severity::Error, "burst pool instance type's GPU needs a newer CUDA than its stack pins",
       "As CUDA003, for the GPU of a burst pool's `instance_type` (instance_types.yaml). Position: `instance_type`.",
       "Same fact as CUDA003, for the GPU of the cloud instance type.",
       "pin a newer CUDA in the stack, or choose an instance type whose GPU the stack supports"},
      {"CUDA005", Severity::Warning, "driver runs the toolkit only through CUDA minor-version compatibility",
       "A stack's `driver` is older than the toolkit's own driver but not older than the minor-version compatibility "
       "minimum of its CUDA major (e.g. CUDA 12.6 on a R550 driver). Position: `driver`.",
       "CUDA Compatibility guide, 'Minor Version Compatibility': applications run, but PTX that the older driver's JIT "
       "cannot compile (kernels shipped as PTX for a newer toolkit) fails to load, and APIs newer than the driver return "
       "cudaErrorCallRequiresNewerDriver.",
       "pin the toolkit's own driver (named in the hint) or newer"},
      {"CUDA006", Severity::Error, "CUDA release that dropped the GPU's architecture",
       "A pool's GPU architecture is no longer supported by the CUDA release its stack installs (CUDA 13.0 dropped Maxwell, "
       "Pascal and Volta: V100). Position: the pool's `hardware.gpu` (or `instance_type`).",
       "CUDA Toolkit 13.0 release notes: offline compilation and library support for compute capability below 7.5 is "
       "removed (architectures in gpus.yaml, `cuda_dropped_in`).",
       "pin a CUDA 12.x release for this pool's stack, or move it to newer GPUs"},
      {"CUDA007", Severity::Error, "CUDA forward compatibility asked for where it does not work",
       "A stack sets `cuda_compat: true` but its driver is not on a branch that runs its CUDA major through the "
       "cuda-compat package (CUDA 12.x: R470 >= 470.57, R525 >= 525.85, R535 >= 535.86, R550 >= 550.54), or a pool that "
       "needs it runs a GPU that is not a data-center product. Position: `cuda_compat` (or the pool's `hardware.gpu`).",
       "CUDA Compatibility guide, 'Forward Compatibility' (data-center GPUs only) and the NGC container release notes' "
       "driver requirements list the supported branches (cuda.yaml `forward_compat`).",
       "pin a listed branch and release, or the toolkit's own driver, or drop cuda_compat"},
      {"DRV001", Severity::Error, "driver branch newer than the last one supporting the GPU",
       "A pool's stack pins a driver from a branch after the last one that supports its GPU's architecture (R580 for "
       "Maxwell, Pascal and Volta). Position: the stack's `driver`, for that pool.",
       "NVIDIA Data Center Drivers, Supported Drivers and CUDA Toolkit Versions, CUDA and Architecture Matrix "
       "(gpus.yaml `last_driver_branch`).",
       "pin a driver of the last supported branch (the hint names it), or move the pool to newer GPUs"},
      {"DRV002", Severity::Error, "driver older than the GPU's minimum",
       "A pool's stack pins a driver older than its GPU's minimum: the model's own `min_driver` where NVIDIA names one "
       "(HGX B200: 570.133.20), else the driver of the first toolkit that supports its compute capability (`min_cuda`; "
       "H100: CUDA 11.8, 520.61.05). This holds even when forward compatibility lets the toolkit run. Position: the "
       "stack's `driver`, for that pool.",
       "A kernel driver older than the GPU does not recognise it (CUDA release notes, driver table; CUDA Compatibility "
       "guide: forward compatibility does not add support for new GPUs to an old kernel driver). NVIDIA GPU Operator "
       "platform support: 'HGX B200 requires a driver container version of 570.133.20 or later' (gpus.yaml `min_driver`).",
       "pin the driver named in the hint or newer"},
      {"DRV003", Severity::Error, "NVSwitch node with a driver that has no matching Fabric Manager",
       "A node pool on an NVSwitch baseboard (e.g. 8 x H100-80GB; catalog `nvswitch_min_gpus`) or a burst pool whose "
       "instance type runs Fabric Manager pins a driver for which NVIDIA publishes no Fabric Manager of exactly that "
       "version (software.yaml `fabric_manager`). Position: the stack's `driver`, for that pool.",
       "NVIDIA Fabric Manager User Guide: Fabric Manager must run on NVSwitch systems and aborts unless its version "
       "equals the loaded driver's; without it CUDA fails with error 802, 'system not yet initialized'.",
       "pin a data-center driver release with a Fabric Manager (the hint names the nearest), or add a release you have "
       "seen to software.yaml"},
      {"DRV004", Severity::Error, "kernel module flavour the GPU cannot run",
       "A stack's `kernel_modules` is a flavour a pool's GPU does not support: `open` on Maxwell, Pascal or Volta, "
       "`proprietary` on Grace Hopper and Blackwell. Position: `kernel_modules`, for that pool.",
       "NVIDIA Driver Installation Guide, 'Kernel Modules': the open modules need the GSP of Turing and newer; Grace Hopper "
       "and Blackwell GPUs run only the open modules.",
       "set kernel_modules to the flavour the hint names, or leave it out for NVIDIA's default"},
      {"DRV005", Severity::Error, "container toolkit release with known container escapes",
       "A stack pins a `container_toolkit` release older than the fix of a published NVIDIA Container Toolkit advisory "
       "(software.yaml). Position: `container_toolkit`.",
       "NVIDIA security bulletins: CVE-2024-0132/0133 (fixed in 1.16.2), CVE-2025-23359 (1.17.4), CVE-2025-23266 and "
       "CVE-2025-23267 (1.17.8) let a crafted image escape to the host or tamper with it.",
       "pin the fixed release the hint names or newer, or leave container_toolkit out for Plinth's default"},
      {"GPU001", Severity::Error, "unknown GPU model",
       "`hardware.gpu` is neither a catalog model name, an alias, nor the product name nvidia-smi reports "
       "(`\"NVIDIA H100 80GB HBM3\"` is accepted). The hint names the closest models. Position: `hardware.gpu`.",
       "Every GPU rule needs the model's facts from engine/catalog/data/gpus.yaml.",
       "use a name from catalog.md, or add the model to gpus.yaml"},
      {"GPU002", Severity::Error, "unknown cloud instance type",
       "A burst pool's `instance_type` is not in the catalog for its `provider` (instance types belong to one provider). "
       "The hint names the closest types. Position: `instance_type`.",
       "The instance type's GPU model and count come from engine/catalog/data/instance_types.yaml (provider "
       "documentation).",
       "use a type from catalog.md, or add it to instance_types.yaml"},
      {"GPU003", Severity::Error, "MIG on a GPU without MIG",
       "`mig` asks for a profile or layout on a GPU that has no MIG, such as L40S, L4, RTX 4090 or V100. Position: "
       "`mig.profile` (or `mig.layout` / `mig.profiles`).",
       "NVIDIA MIG User Guide, 'Supported GPUs': A30, A100, H100, H200, GH200 and Blackwell data-center GPUs.",
       "`mig: {profile: none}`, or a MIG-capable GPU"},
      {"GPU004", Severity::Error, "MIG profile the GPU does not offer",
       "A profile name (in `mig.profile` or `mig.profiles`) is not one of the GPU's profiles (e.g. `3g.20gb` is an "
       "A100-40GB profile; the H100-80GB has `3g.40gb`; the H200 NVL has no `1g.35gb`), or `mig.layout` names a layout "
       "the catalog has not for the GPU. The hint lists the GPU's profiles. Position: the profile.",
       "NVIDIA MIG User Guide, 'Supported MIG Profiles'; NVIDIA mig-parted `config-default.yaml`.",
       "pick one of the listed profiles"},
      {"GPU005", Severity::Error, "MIG layout the GPU cannot place",
       "The instances of `mig` (one profile times `instances`, mig-parted's all-balanced, or a mix under `mig.profiles`) "
       "do not fit one GPU: more instances of a profile than it allows, more than the GPU's instances, more than one "
       "'+me' instance, or no placement of the instances on its memory slices (an instance of M memory slices starts at "
       "a multiple of M, and its compute slices must fit from there). `instances` below 1 is also reported. Position: "
       "`mig.instances` (or the layout).",
       "NVIDIA MIG User Guide, supported profiles and placements (`nvidia-smi mig -lgipp`); the per-profile maximum "
       "counts and the all-balanced layouts are mig-parted's (checked against its config in the catalog tests).",
       "use a layout the hint's reason allows"},
      {"GPU006", Severity::Error, "the pool's largest model does not fit its GPU memory",
       "The memory the pool's largest model needs, estimated by role, exceeds the GPU memory it can use: one node's "
       "(`memory_gb` of the GPU x `gpus_per_node`), or every node's when the pool has more than one node on an "
       "InfiniBand / RoCE fabric (sharded: FSDP / ZeRO-3, tensor or pipeline parallelism). Estimates, from "
       "`largest_model: {params_b, precision, training}`: inference = parameters x bytes per parameter (fp32 4, "
       "bf16/fp16 2, fp8/int8 1, int4/fp4 0.5) + 20% for KV cache and activations; full training = 16 bytes per "
       "parameter (mixed-precision Adam) + 20% for activations; LoRA = the frozen weights at their precision + 20% + "
       "16 bytes for each trainable adapter parameter (1% of the model). `largest_model_gb` is read as the bf16 weights' "
       "size. The message names the estimate used. Position: `largest_model` (or `largest_model_gb`).",
       "Mixed-precision Adam keeps fp16/bf16 weights and gradients and fp32 master weights and two moments, 16 bytes per "
       "parameter (Rajbhandari et al., ZeRO, SC20, section 3.1); inference holds the weights plus the KV cache; LoRA "
       "(Hu et al., 2021) trains small adapters on a frozen model.",
       "use GPUs with more memory, more GPUs per node, an RDMA fabric to shard across nodes, LoRA, or a smaller / "
       "quantized model"},
      {"GPU007", Severity::Warning, "training on GPUs without ECC, or multi-GPU nodes without NVLink",
       "A training pool uses GPUs without ECC memory (any training pool with more than one GPU in total), or puts "
       "more than one GPU per node without NVLink (RTX 4090: neither; L40S, L4, RTX 6000 Ada, T4: no NVLink). A single "
       "GPU per node needs no NVLink, whatever the node count. Position: `hardware.gpu`.",
       "Without ECC, bit flips silently corrupt long runs; without NVLink, all-reduce between the GPUs of a node crosses "
       "PCIe (NVIDIA datasheets; `ecc` / `nvlink` in gpus.yaml).",
       "data-center GPUs with ECC (and NVLink when a node has several), or one GPU per node"},
      {"GPU008", Severity::Error, "largest model does not fit one MIG instance",
       "On a MIG pool, the inference estimate of the largest model (see GPU006) exceeds the memory of the largest "
       "instance of its layout (the `<M>gb` in the profile name). Position: `largest_model` (or `largest_model_gb`).",
       "Each MIG instance is an isolated GPU; CUDA sees one instance per process and NCCL does not join MIG instances "
       "(NVIDIA MIG User Guide, 'CUDA Device Enumeration' and limitations).",
       "a larger profile, or `mig: {profile: none}`"},
      {"GPU009", Severity::Warning, "host memory smaller than the node's GPU memory",
       "`hardware.memory_gb` is set and is less than the node's total GPU memory. Position: `hardware.memory_gb`.",
       "Loading weights and writing checkpoints stage tensors in host memory; NVIDIA's reference systems carry more host "
       "than GPU memory (DGX H100: 2 TB for 8 x 80 GB). The rule fires only below 1x, well under common practice (2x).",
       "give each node at least as much host memory as GPU memory"},
      {"GPU010", Severity::Error, "bfloat16 on a GPU without BF16",
       "A stack (`precision: bf16`) or a pool's `largest_model.precision: bf16` runs on a Volta or Turing GPU (V100, T4). "
       "Position: the pool's `hardware.gpu` (or `instance_type`).",
       "BF16 Tensor Core arithmetic arrived with Ampere (NVIDIA Ampere architecture whitepaper); `__nv_bfloat16` math "
       "needs compute capability 8.0 (CUDA Math API). Frameworks fall back to slow emulation or fail.",
       "use fp16 (with loss scaling) on these GPUs, or Ampere or newer GPUs"},
      {"IMG001", Severity::Warning, "container image not pinned by digest",
       "A stack image is not `name@sha256:<64 lower-case hex>`. Position: that entry of `images`.",
       "Tags move; only a digest names exactly one image (OCI image specification), which reproducible and audited "
       "clusters need.",
       "reference the image by digest (`docker buildx imagetools inspect NAME` prints it)"},
      {"NET001", Severity::Error, "VLAN id outside 1-4094", "Position: `id`.",
       "IEEE 802.1Q: the VLAN id has 12 bits; 0 and 4095 are reserved.", "use an id from 1 to 4094"},
      {"NET002", Severity::Error, "duplicate VLAN id",
       "A second VLAN uses the id of an earlier one (the message names its position). Position: the later VLAN's `id`.",
       "Two VLANs with one 802.1Q id are one broadcast domain; switches cannot tell them apart.", "give each VLAN its own id"},
      {"NET003", Severity::Error, "invalid CIDR",
       "`cidr` is not an IPv4 `address/prefix` (each octet 0-255 without leading zeros, prefix 0-32), or has host bits set "
       "(`10.100.3.1/16`; the hint gives the network address). Position: `cidr`.",
       "RFC 4632. IPv6 VLAN subnets are not supported yet.", "write the network address and prefix, e.g. `10.100.0.0/16`"},
      {"NET004", Severity::Error, "overlapping CIDRs in one VRF",
       "Two VLANs with the same `vrf` (an empty `vrf` is the default routing table) have overlapping subnets. Reported "
       "on the VLAN written later, naming the other. VLANs in different VRFs may reuse addresses. Position: `cidr`.",
       "Overlapping subnets in one routing table (VRF) make routes ambiguous; separate VRFs may reuse addresses.",
       "disjoint subnets, or separate VRFs"},
      {"NET005", Severity::Warning, "RoCE fabric without PFC and ECN",
       "A `kind: roce-v2` fabric does not set both `pfc: true` and `ecn: true`. Position: the `false` field, else `kind`.",
       "RoCE v2 needs priority flow control (IEEE 802.1Qbb) and ECN for congestion control (DCQCN); NVIDIA's RoCE "
       "configuration guides enable both.",
       "set both and configure them on the switches"},
      {"NET006", Severity::Warning, "oversubscribed fabric carrying a training pool",
       "A fabric with `oversubscription` above 1:1 is used by at least one training pool (reported once per fabric, "
       "naming the first pool). Position: `oversubscription`.",
       "All-reduce runs at the speed of the slowest link; NVIDIA's DGX SuperPOD reference architecture uses a "
       "non-blocking fabric for compute traffic.",
       "`oversubscription: \"1:1\"`, or move training to a non-blocking fabric (inference may share)"},
      {"NET007", Severity::Warning, "multi-node training pool without an RDMA fabric",
       "A multi-node training pool has no `fabric`, or an `ethernet` one. Position: `fabric` (the pool when there is none).",
       "NCCL across nodes needs GPUDirect RDMA over InfiniBand or RoCE v2; over TCP sockets all-reduce bandwidth collapses.",
       "attach an `infiniband` or `roce-v2` fabric"},
      {"NET008", Severity::Warning, "RDMA pool without GPUDirect RDMA",
       "A node pool on an InfiniBand / RoCE fabric uses the inbox RDMA stack (`rdma_stack: inbox`, the default on "
       "RHEL-family systems) with the proprietary kernel modules. Position: the pool's `fabric`.",
       "With the distribution's rdma-core, GPUDirect RDMA goes through Linux dma-buf, which only the open kernel modules "
       "support; nvidia-peermem needs the DOCA-OFED / MLNX_OFED stack (NVIDIA GPU Operator, GPUDirect RDMA; NVIDIA Driver "
       "Installation Guide, Kernel Modules). Without either, NCCL stages every transfer through host memory.",
       "use the open kernel modules, or `rdma_stack: doca-ofed`"},
      {"NET009", Severity::Error, "VRF name that cannot become a Linux device",
       "A VLAN's `vrf` has characters other than letters, digits, '.', '_' and '-', or more than 11 of them. Position: `vrf`.",
       "The renderer creates the VRF as the Linux device `vrf-NAME`, and Linux interface names have at most 15 "
       "characters (IFNAMSIZ 16 with the terminating NUL).",
       "use a shorter VRF name"},
      {"STO001", Severity::Warning, "NFS tier serving more than 20 training nodes",
       "The training pools that list an `nfs` tier in `storage` have more than 20 nodes in total. Position: the tier's "
       "`kind`.",
       "One NFS server becomes the bottleneck when many training nodes read data and write checkpoints at once; parallel "
       "file systems (Lustre, GPFS, WEKA) scale out.",
       "serve training data and checkpoints from a parallel-fs or nvme tier; keep NFS for home directories"},
      {"STO002", Severity::Warning, "training pool without NVMe or parallel-fs storage",
       "A training pool's `storage` names no `nvme` or `parallel-fs` tier. Position: `storage` (the pool when it has none).",
       "Training reads datasets and writes checkpoints at GB/s per node; NFS and object storage alone starve the GPUs.",
       "add an nvme or parallel-fs tier"},
      {"STO003", Severity::Error, "network file system tier without an export to mount",
       "A pool lists an `nfs` or `parallel-fs` tier that has no `export`. Position: the pool's `storage` entry.",
       "A node cannot mount a file system it is not told the address of; rendering it would leave the tier unmounted while "
       "the node reports ready.",
       "set the tier's `export` (nfs \"server:/path\", lustre \"mgs@o2ib:/fsname\", gpfs the device, weka \"backend/fs\", "
       "beegfs the management host)"},
      {"STO004", Severity::Error, "transport encryption the tier's file system cannot give the pool",
       "A tier sets `encryption.in_transit`, but its file system cannot encrypt in transit for a pool that mounts it: NFS "
       "RPC-with-TLS (`xprtsec=tls`) on an OS other than Ubuntu 24.04, or WEKA / BeeGFS, whose client traffic is not "
       "encrypted by a mount option. Position: the tier's `encryption.in_transit`.",
       "RFC 9289 RPC-with-TLS needs Linux 6.5 and ktls-utils (tlshd); WEKA and BeeGFS document no per-mount encryption. "
       "Lustre (shared-key SSK, `skpath`) and GPFS (cluster cipherList) are rendered with theirs.",
       "run the pool on os: ubuntu-24.04, use a file system that encrypts in transit, or drop in_transit"},
  };
  return all;
}

namespace {

const RuleInfo& rule(const std::string& id) {
  for (const auto& r : rules())
    if (r.id == id) return r;
  throw std::logic_error("unknown rule " + id);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// An IPv4 prefix as [first, last] addresses.
struct Range {
  uint32_t first = 0;
  uint32_t last = 0;
  bool host_bits = false;  ///< the written address is not the network address
};

std::optional<Range> parse_cidr(const std::string& text) {
  size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  uint32_t addr = 0;
  int parts = 0;
  size_t i = 0;
  while (i < slash) {
    size_t j = i;
    unsigned v = 0;
    while (j < slash && j - i < 4 && text[j] >= '0' && text[j] <= '9') v = v * 10 + static_cast<unsigned>(text[j++] - '0');
    if (j == i || j - i > 3 || v > 255 || (j - i > 1 && text[i] == '0')) return std::nullopt;
    addr = addr << 8 | v;
    ++parts;
    if (j == slash) break;
    if (text[j] != '.' || parts == 4) return std::nullopt;
    i = j + 1;
  }
  if (parts != 4) return std::nullopt;
  std::string len = text.substr(slash + 1);
  if (len.empty() || len.size() > 2 || !std::all_of(len.begin(), len.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int bits = std::stoi(len);
  if (bits > 32) return std::nullopt;
  uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return Range{addr & mask, (addr & mask) | ~mask, (addr & ~mask) != 0};
}

// "2:1" -> 2.0; nullopt when malformed (the loader reports that).
std::optional<double> ratio(const std::string& text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  try {
    double down = std::stod(text.substr(0, colon));
    double up = std::stod(text.substr(colon + 1));
    if (up <= 0) return std::nullopt;
    return down / up;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool pinned_by_digest(const std::string& image) {
  size_t at = image.rfind("@sha256:");
  if (at == std::string::npos || at == 0) return false;
  std::string hex = image.substr(at + 8);
  return hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The known versions just below and above `v`, for "closest versions" hints.
std::string nearby_versions(const std::string& v, const std::vector<std::string>& known) {
  std::string below, above;
  for (const auto& k : known) {
    if (compare_versions(k, v) < 0) below = k;
    else if (above.empty()) above = k;
  }
  std::vector<std::string> near;
  if (!below.empty()) near.push_back(below);
  if (!above.empty()) near.push_back(above);
  return join(near, " or ");
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const auto& n : names) q.push_back("'" + n + "'");
  return join(q, ", ");
}

// Names the closest candidates: "did you mean 'x'?" for a plausible typo (as
// did_you_mean decides), else the three nearest. Ties in edit distance go to the
// longer common prefix, so 'p5.96xlarge' suggests 'p5.48xlarge', not 'g5.16xlarge'.
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  auto prefix = [&](const std::string& c) {
    size_t n = 0;
    while (n < c.size() && n < word.size() && c[n] == word[n]) ++n;
    return n;
  };
  std::vector<std::tuple<int, size_t, std::string>> scored;  // distance, common prefix, name
  for (const auto& c : candidates) scored.emplace_back(edit_distance(word, c), prefix(c), c);
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) < std::get<0>(b) : std::get<1>(a) > std::get<1>(b);
  });
  if (scored.empty()) return "";
  if (closest_match(word, {std::get<2>(scored[0])})) return "did you mean '" + std::get<2>(scored[0]) + "'?";
  std::vector<std::string> best;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) best.push_back(std::get<2>(scored[i]));
  return "closest known: " + quoted_list(best);
}

double bytes_per_parameter(const std::string& precision) {
  if (precision == "fp32" || precision == "tf32") return 4;
  if (precision == "bf16" || precision == "fp16") return 2;
  if (precision == "fp8" || precision == "int8") return 1;
  if (precision == "int4" || precision == "fp4") return 0.5;
  return 2;
}

/// The GPU memory a pool's largest model needs, and how it was estimated.
struct Estimate {
  double gb = 0;
  double inference_gb = 0;  ///< what one replica needs to serve the model (GPU008)
  std::string how;
  std::string field;  ///< "largest_model" or "largest_model_gb"
};

std::optional<Estimate> estimate(const bp::NodePool& p) {
  double params = 0, bytes = 2;
  std::string precision = "bf16", what;
  Estimate e;
  if (p.largest_model) {
    params = p.largest_model->params_b;
    precision = p.largest_model->precision;
    bytes = bytes_per_parameter(precision);
    what = "a " + num(params) + "B-parameter " + precision + " model";
    e.field = "largest_model";
  } else if (p.largest_model_gb) {
    params = *p.largest_model_gb / 2;
    what = "a " + num(*p.largest_model_gb) + " GB model (largest_model_gb, read as bf16 weights: " + num(params) + "B parameters)";
    e.field = "largest_model_gb";
  } else {
    return std::nullopt;
  }
  const double weights = params * bytes;
  e.inference_gb = weights * 1.2;
  if (p.role == "training" && p.largest_model && p.largest_model->training == "lora") {
    e.gb = weights * 1.2 + params * 0.01 * 16;
    e.how = "LoRA fine-tuning of " + what + ": " + num(weights) + " GB of frozen weights + 20% for activations + 16 bytes for "
            "each adapter parameter (1% of the model)";
  } else if (p.role == "training") {
    e.gb = params * 16 * 1.2;
    e.how = "full training of " + what + " with Adam in mixed precision: 16 bytes per parameter (" + num(params * 16) +
            " GB of weights, gradients and optimizer state) + 20% for activations";
  } else {
    e.gb = e.inference_gb;
    e.how = "inference of " + what + ": " + num(weights) + " GB of weights + 20% for KV cache and activations";
  }
  e.gb = std::round(e.gb * 10) / 10;
  e.inference_gb = std::round(e.inference_gb * 10) / 10;
  return e;
}

bool rdma_kind(const bp::Fabric* f) { return f && (f->kind == "infiniband" || f->kind == "roce-v2"); }

bool glob(const std::string& name) { return name.find_first_of("*?[") != std::string::npos; }

std::string branch_of(const std::string& driver) { return driver.substr(0, driver.find('.')); }

class Checker {
 public:
  Checker(const bp::Blueprint& b, const catalog::Catalog& c) : bp_(b), cat_(c) {
    for (const auto& s : bp_.stacks) stacks_[s.name] = &s;
    for (const auto& f : bp_.fabrics) fabrics_[f.name] = &f;
    for (const auto& t : bp_.tiers) tiers_[t.name] = &t;
  }

  Diagnostics run() {
    for (const auto& s : bp_.stacks) check_stack(s);
    check_vlans();
    for (const auto& f : bp_.fabrics) check_fabric(f);
    for (const auto& p : bp_.node_pools) check_node_pool(p);
    for (const auto& p : bp_.burst_pools) check_burst_pool(p);
    check_fabric_use();
    check_nfs_use();
    return std::move(out_);
  }

 private:
  void add(const std::string& id, const SourceLoc& loc, const std::string& address, std::string message, std::string hint) {
    out_.push_back({id, rule(id).severity, std::move(message), loc, address, std::move(hint)});
  }

  /// The address prefix of a pool's resources: its provider's type for the
  /// section, then the pool's name ("baremetal.node.train-a").
  static std::string pool_address(const char* section, const std::string& provider, const std::string& name) {
    const SectionSpec* spec = schema_registry().section(section, provider);
    return (spec ? spec->resource_type : provider + ".pool") + "." + name;
  }
  static std::string node_address(const bp::NodePool& p) { return pool_address("node_pools", p.provider, p.name); }
  static std::string burst_address(const bp::BurstPool& p) { return pool_address("burst_pools", p.provider, p.name); }

  // ---- stacks ----------------------------------------------------------------

  /// The driver the toolkit a stack installs needs, and which release that is.
  struct CudaNeed {
    std::string installed;  ///< "12.4.1"
    std::string driver;     ///< "550.54.15"
    int major = 0;
  };
  std::optional<CudaNeed> cuda_need(const bp::Stack& s) const {
    auto installed = cat_.installed_cuda(s.cuda);
    if (!installed) return std::nullopt;
    CudaNeed n{*installed, *cat_.min_driver_for_cuda(*installed), std::stoi(installed->substr(0, installed->find('.')))};
    return n;
  }
  /// "CUDA 12.4.1", or "CUDA 12.4 (cuda-toolkit-12-4 installs the newest release, 12.4.1)".
  static std::string installs(const bp::Stack& s, const CudaNeed& n) {
    if (n.installed == s.cuda) return "CUDA " + s.cuda;
    const std::string minor = n.installed.substr(0, n.installed.rfind('.'));
    std::string package = "cuda-toolkit-" + minor;
    std::replace(package.begin(), package.end(), '.', '-');
    return "CUDA " + s.cuda + " (" + package + " installs the newest release, " + n.installed + ")";
  }

  std::string forward_branches(int major) const {
    std::vector<std::string> parts;
    for (const auto& f : cat_.forward_compat_rows())
      if (f.cuda_major == major) parts.push_back("R" + f.branch + " >= " + f.min_driver);
    return parts.empty() ? "none" : join(parts, ", ");
  }

  void check_stack(const bp::Stack& s) {
    if (auto need = cuda_need(s)) {
      if (compare_versions(s.driver, need->driver) < 0) {
        const catalog::ForwardCompat* fwd = s.cuda_compat ? cat_.forward_compat(need->major, s.driver) : nullptr;
        auto compat = cat_.minor_compat_min_driver(need->major);
        if (s.cuda_compat && !fwd)
          add("CUDA007", s.origin.at("cuda_compat"), "",
              "stack '" + s.name + "' asks for CUDA forward compatibility, but driver " + s.driver + " is not on a branch that "
              "runs CUDA " + std::to_string(need->major) + ".x through cuda-compat",
              "forward compatibility for CUDA " + std::to_string(need->major) + ".x runs on " + forward_branches(need->major) +
                  "; pin one of them, or driver \"" + need->driver + "\" or newer");
        if (fwd) {
          // Forward compatibility covers it; pools check that their GPUs are data-center products.
        } else if (compat && compare_versions(s.driver, *compat) >= 0) {
          // With cuda_compat set, CUDA007 above already names the toolkit's driver.
          if (!s.cuda_compat) {
            add("CUDA005", s.origin.at("driver"), "",
                "driver " + s.driver + " in stack '" + s.name + "' runs " + installs(s, *need) + " only through CUDA minor-version "
                "compatibility (" + std::to_string(need->major) + ".x on >= " + *compat + "): PTX built for the newer toolkit "
                "fails to JIT-compile and APIs newer than the driver return cudaErrorCallRequiresNewerDriver",
                "pin driver \"" + need->driver + "\" or newer, the driver CUDA " + need->installed + " ships with");
          }
        } else {
          add("CUDA001", s.origin.at("driver"), "",
              "driver " + s.driver + " in stack '" + s.name + "' is older than " + need->driver + ", the minimum for " +
                  installs(s, *need) +
                  (compat ? ", and older than " + *compat + ", the minimum for CUDA " + std::to_string(need->major) +
                                ".x through minor-version compatibility"
                          : std::string()),
              "pin driver \"" + need->driver + "\" or newer, or an older CUDA" +
                  (s.cuda_compat ? std::string() : "; on data-center GPUs, cuda_compat: true with " + forward_branches(need->major)));
        }
      }
    } else {
      add("CUDA002", s.origin.at("cuda"), "", "unknown CUDA version '" + s.cuda + "' in stack '" + s.name + "'",
          "use a released toolkit from docs/catalog.md, e.g. " + nearby_versions(s.cuda, cat_.cuda_versions()));
    }
    for (size_t i = 0; i < s.images.size(); ++i) {
      if (pinned_by_digest(s.images[i])) continue;
      add("IMG001", s.origin.at("images." + std::to_string(i)), "",
          "image '" + s.images[i] + "' in stack '" + s.name + "' is not pinned by digest",
          "reference it as name@sha256:<64 hex digits> (docker buildx imagetools inspect NAME shows the digest)");
    }
    if (!s.container_toolkit.empty()) {
      auto advisories = cat_.container_toolkit_advisories(s.container_toolkit);
      if (!advisories.empty()) {
        std::vector<std::string> ids;
        std::string fixed = advisories.front().fixed_in;
        for (const auto& a : advisories) {
          ids.push_back(a.id + " (" + a.summary + ", fixed in " + a.fixed_in + ")");
          if (compare_versions(a.fixed_in, fixed) > 0) fixed = a.fixed_in;
        }
        add("DRV005", s.origin.at("container_toolkit"), "",
            "stack '" + s.name + "' pins NVIDIA Container Toolkit " + s.container_toolkit + ", affected by " + join(ids, "; "),
            "pin container_toolkit \"" + fixed + "\" or newer, or leave it out for Plinth's default (" +
                cat_.container_toolkit_default() + ")");
      }
    }
  }

  // ---- networks ----------------------------------------------------------------

  void check_vlans() {
    std::unordered_map<int, const bp::Vlan*> by_id;
    struct Net {
      Range range;
      const bp::Vlan* vlan;
      size_t index;
    };
    std::vector<Net> nets;
    for (size_t i = 0; i < bp_.vlans.size(); ++i) {
      const auto& v = bp_.vlans[i];
      std::string addr = "net.vlan." + v.name;
      if (v.id < 1 || v.id > 4094) {
        add("NET001", v.origin.at("id"), addr, "VLAN '" + v.name + "' has id " + std::to_string(v.id) + ", outside 1-4094",
            "use an 802.1Q id from 1 to 4094 (0 and 4095 are reserved)");
      } else if (auto [it, fresh] = by_id.emplace(v.id, &v); !fresh) {
        add("NET002", v.origin.at("id"), addr,
            "VLAN '" + v.name + "' reuses id " + std::to_string(v.id) + " of VLAN '" + it->second->name + "' (" +
                it->second->origin.at("id").str() + ")",
            "give each VLAN its own id");
      }
      auto range = parse_cidr(v.cidr);
      if (!range) {
        add("NET003", v.origin.at("cidr"), addr, "VLAN '" + v.name + "' has invalid CIDR '" + v.cidr + "'",
            "write an IPv4 network as address/prefix, e.g. 10.100.0.0/16");
      } else if (range->host_bits) {
        add("NET003", v.origin.at("cidr"), addr, "VLAN '" + v.name + "' has CIDR '" + v.cidr + "' with host bits set",
            "write the network address: " + cidr_text(*range, v.cidr));
      } else {
        nets.push_back({*range, &v, i});
      }
      if (!v.vrf.empty() &&
          (v.vrf.size() > 11 || !std::all_of(v.vrf.begin(), v.vrf.end(), [](char c) {
             return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
           })))
        add("NET009", v.origin.at("vrf"), addr,
            "VLAN '" + v.name + "' names VRF '" + v.vrf + "', which cannot become the Linux device 'vrf-" + v.vrf + "'",
            "use at most 11 letters, digits, '.', '_' or '-' (Linux interface names have at most 15 characters)");
    }
    // Sweep each VRF's networks by start address: O(n log n), not pairwise.
    std::sort(nets.begin(), nets.end(), [](const Net& a, const Net& b) {
      return std::tie(a.vlan->vrf, a.range.first, a.index) < std::tie(b.vlan->vrf, b.range.first, b.index);
    });
    const Net* widest = nullptr;  // the network reaching furthest so far in this VRF
    for (const auto& n : nets) {
      if (widest && widest->vlan->vrf == n.vlan->vrf && n.range.first <= widest->range.last) {
        // Report on the one written later, naming the other.
        const Net& later = n.index > widest->index ? n : *widest;
        const Net& earlier = n.index > widest->index ? *widest : n;
        std::string vrf = n.vlan->vrf.empty() ? "the default VRF" : "VRF '" + n.vlan->vrf + "'";
        add("NET004", later.vlan->origin.at("cidr"), "net.vlan." + later.vlan->name,
            "CIDR " + later.vlan->cidr + " of VLAN '" + later.vlan->name + "' overlaps " + earlier.vlan->cidr + " of VLAN '" +
                earlier.vlan->name + "' in " + vrf,
            "give the VLANs disjoint subnets, or put them in different VRFs");
      }
      if (!widest || widest->vlan->vrf != n.vlan->vrf || n.range.last > widest->range.last) widest = &n;
    }
  }

  static std::string cidr_text(const Range& r, const std::string& written) {
    std::string s;
    for (int shift = 24; shift >= 0; shift -= 8) s += std::to_string((r.first >> shift) & 0xff) + (shift ? "." : "");
    return s + written.substr(written.find('/'));
  }

  void check_fabric(const bp::Fabric& f) {
    if (f.kind != "roce-v2") return;
    bool pfc = f.pfc.value_or(false), ecn = f.ecn.value_or(false);
    if (pfc && ecn) return;
    std::string missing = !pfc && !ecn ? "PFC and ECN" : !pfc ? "PFC" : "ECN";
    const SourceLoc& at = !pfc && f.pfc ? f.origin.at("pfc") : !ecn && f.ecn ? f.origin.at("ecn") : f.origin.at("kind");
    add("NET005", at, "net.fabric." + f.name, "RoCE fabric '" + f.name + "' does not enable " + missing,
        "set pfc: true and ecn: true, and configure them on the switches (lossless priority for RoCE traffic)");
  }

  // ---- what runs on a GPU -----------------------------------------------------------

  /// Driver, CUDA, kernel module, precision and Fabric Manager facts of `stack` on `gpus` x `gpu`.
  void check_platform(const bp::Stack& s, const catalog::GpuModel& gpu, bool fabric_manager, const std::string& precision,
                      const SourceLoc& gpu_at, const std::string& addr, const std::string& who) {
    const catalog::Architecture* arch = cat_.architecture(gpu.architecture);
    auto need = cuda_need(s);
    const std::string gpu_text = gpu.name + " (" + gpu.architecture + ")";
    if (arch && !arch->cuda_dropped_in.empty() && need && compare_versions(need->installed, arch->cuda_dropped_in) >= 0)
      add("CUDA006", gpu_at, addr,
          who + " runs " + gpu_text + ", which CUDA " + arch->cuda_dropped_in + " and later no longer support, but stack '" +
              s.name + "' installs CUDA " + need->installed,
          "pin a CUDA release before " + arch->cuda_dropped_in + " in the stack this pool uses, or move the pool to newer GPUs");
    if (numeric(s.driver)) {
      const std::string branch = branch_of(s.driver);
      if (arch && !arch->last_driver_branch.empty() && compare_versions(branch, arch->last_driver_branch) > 0)
        add("DRV001", s.origin.at("driver"), addr,
            who + " runs " + gpu_text + ", whose last supported driver branch is R" + arch->last_driver_branch +
                ", but stack '" + s.name + "' pins driver " + s.driver,
            "pin an R" + arch->last_driver_branch + " driver for this pool");
      // The GPU's own minimum, else the first driver of the first toolkit that knows its architecture.
      std::string min_driver = gpu.min_driver, why = "";
      if (min_driver.empty())
        if (auto first = cat_.resolve_cuda(gpu.min_cuda))
          if (auto d = cat_.min_driver_for_cuda(*first)) {
            min_driver = *d;
            why = " (the driver of CUDA " + *first + ", the first toolkit for compute capability " + gpu.compute_capability + ")";
          }
      if (!min_driver.empty() && compare_versions(s.driver, min_driver) < 0)
        add("DRV002", s.origin.at("driver"), addr,
            who + " runs " + gpu.name + ", which needs driver " + min_driver + " or newer" + why + ", but stack '" + s.name +
                "' pins " + s.driver,
            "pin driver \"" + min_driver + "\" or newer");
      if (fabric_manager && !cat_.fabric_manager_released(s.driver)) {
        std::vector<std::string> same_branch;
        for (const auto& d : cat_.fabric_manager_drivers())
          if (branch_of(d) == branch) same_branch.push_back(d);
        add("DRV003", s.origin.at("driver"), addr,
            who + " runs " + gpu.name + " on NVSwitch, which needs NVIDIA Fabric Manager of exactly the driver's version, "
                "but no Fabric Manager " + s.driver + " is published (stack '" + s.name + "')",
            (same_branch.empty() ? "pin a data-center driver with a Fabric Manager release, e.g. " +
                                       nearby_versions(s.driver, cat_.fabric_manager_drivers())
                                 : "pin one of the R" + branch + " releases with a Fabric Manager: " + join(same_branch, ", ")) +
                " (docs/catalog.md lists them)");
      }
    }
    const std::string flavours = cat_.kernel_modules(gpu);
    if (!s.kernel_modules.empty() && flavours != "both" && flavours != s.kernel_modules)
      add("DRV004", s.origin.at("kernel_modules"), addr,
          who + " runs " + gpu_text + ", which runs only the " + flavours + " NVIDIA kernel modules, but stack '" + s.name +
              "' sets kernel_modules: " + s.kernel_modules,
          "set kernel_modules: " + flavours + ", or leave it out for NVIDIA's default");
    if (s.cuda_compat && need && numeric(s.driver) && compare_versions(s.driver, need->driver) < 0 &&
        cat_.forward_compat(need->major, s.driver) && !gpu.datacenter)
      add("CUDA007", gpu_at, addr,
          who + " runs " + gpu.name + ", which is not a data-center GPU, but stack '" + s.name +
              "' relies on CUDA forward compatibility (cuda-compat) to run CUDA " + need->installed + " on driver " + s.driver,
          "pin driver \"" + need->driver + "\" or newer for this pool; forward compatibility works on data-center GPUs only");
    if (precision == "bf16" && arch && !arch->bf16)
      add("GPU010", gpu_at, addr,
          who + " declares bf16 but runs " + gpu_text + ", which has no BF16 arithmetic",
          "use fp16 with loss scaling on " + gpu.architecture + " GPUs, or Ampere or newer GPUs for bf16");
  }

  static bool numeric(const std::string& v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
  }

  // ---- node pools -----------------------------------------------------------------

  void check_node_pool(const bp::NodePool& p) {
    const std::string addr = node_address(p);
    const std::string who = "node pool '" + p.name + "'";
    const bool multi_node_training = p.role == "training" && p.count > 1;
    const auto* stack = find(stacks_, p.stack);
    const auto* gpu = cat_.gpu(p.hardware.gpu);
    const auto* fabric = find(fabrics_, p.fabric);
    if (!gpu) {
      add("GPU001", p.origin.at("hardware.gpu"), addr,
          "unknown GPU model '" + p.hardware.gpu + "' in node pool '" + p.name + "'",
          closest(p.hardware.gpu, cat_.gpu_names()) + " (the models are listed in docs/catalog.md)");
    } else {
      if (stack) {
        check_cuda_supports(*gpu, *stack, "CUDA003", p.origin.at("hardware.gpu"), addr, who);
        std::string precision = p.largest_model ? p.largest_model->precision : "";
        if (precision != "bf16" && stack->precision == "bf16") precision = "bf16";
        check_platform(*stack, *gpu, gpu->has_nvswitch(p.hardware.gpus_per_node) && gpu->fabric_manager == "node", precision,
                       p.origin.at("hardware.gpu"), addr, who);
      }
      bool mig = check_mig(p, *gpu, addr);
      const double node_gb = static_cast<double>(gpu->memory_gb) * p.hardware.gpus_per_node;
      if (!mig) check_model_memory(p, *gpu, node_gb, fabric, addr);
      if (p.hardware.memory_gb > 0 && p.hardware.memory_gb < node_gb)
        add("GPU009", p.origin.at("hardware.memory_gb"), addr,
            "node pool '" + p.name + "' has " + std::to_string(p.hardware.memory_gb) + " GB of host memory, less than its " +
                num(node_gb) + " GB of GPU memory",
            "give each node at least as much host memory as GPU memory (" + num(node_gb) + " GB); twice is common");
      check_ecc_nvlink(p, *gpu, addr);
      check_balance(p, *gpu, fabric, multi_node_training, addr);
    }
    if (multi_node_training && !rdma_kind(fabric))
      add("NET007", p.origin.at("fabric"), addr,
          "multi-node training pool '" + p.name + "' (" + std::to_string(p.count) + " nodes) has " +
              (fabric ? "only the " + fabric->kind + " fabric '" + fabric->name + "'" : std::string("no fabric")),
          "attach an infiniband or roce-v2 fabric with 'fabric:' so NCCL can use GPUDirect RDMA");
    if (rdma_kind(fabric) && stack) {
      const std::string os = bp::operating_system(p);
      const std::string flavour = catalog::effective_kernel_modules(cat_, gpu, stack->kernel_modules, stack->driver);
      if (bp::rdma_stack(*fabric, os) == "inbox" && flavour == "proprietary")
        add("NET008", p.origin.at("fabric"), addr,
            who + " uses the inbox RDMA stack (rdma-core) on fabric '" + fabric->name + "' with the proprietary kernel modules, "
                "so GPUDirect RDMA (dma-buf) is not available",
            "use the open kernel modules (kernel_modules: open in stack '" + stack->name +
                "'), or rdma_stack: doca-ofed on the fabric for nvidia-peermem");
    }
    if (p.role == "training") {
      bool fast = std::any_of(p.storage.begin(), p.storage.end(), [&](const std::string& t) {
        const auto* tier = find(tiers_, t);
        return tier && (tier->kind == "nvme" || tier->kind == "parallel-fs");
      });
      if (!fast)
        add("STO002", p.origin.at("storage"), addr, "training pool '" + p.name + "' has no nvme or parallel-fs storage tier",
            "add an nvme or parallel-fs tier to its 'storage:' for datasets and checkpoints");
      for (const auto& t : p.storage) tier_training_nodes_[t] += p.count;
      if (!p.fabric.empty() && !fabric_training_pool_.count(p.fabric)) fabric_training_pool_[p.fabric] = &p;
    }
    check_mounts(p.storage, p.origin, bp::operating_system(p), addr, who);
  }

  void check_cuda_supports(const catalog::GpuModel& gpu, const bp::Stack& stack, const std::string& id, const SourceLoc& at,
                           const std::string& addr, const std::string& who) {
    auto cuda = cat_.resolve_cuda(stack.cuda);
    if (!cuda || compare_versions(*cuda, gpu.min_cuda) >= 0) return;
    add(id, at, addr,
        who + " runs " + gpu.name + " (" + gpu.architecture + ", compute capability " + gpu.compute_capability +
            "), which needs CUDA " + gpu.min_cuda + " or newer, but stack '" + stack.name + "' pins CUDA " + stack.cuda,
        "pin CUDA " + gpu.min_cuda + " or newer (with its minimum driver) in stack '" + stack.name + "'");
  }

  /// GPU003/004/005/008; true when the pool partitions its GPUs with MIG.
  bool check_mig(const bp::NodePool& p, const catalog::GpuModel& gpu, const std::string& addr) {
    if (!p.mig.enabled()) return false;
    const std::string field = !p.mig.profiles.empty() ? "mig.profiles" : !p.mig.layout.empty() ? "mig.layout" : "mig.profile";
    const SourceLoc& field_at = p.origin.at(field);
    if (!gpu.has_mig()) {
      add("GPU003", field_at, addr,
          "node pool '" + p.name + "' asks for MIG (" + (p.mig.layout.empty() ? p.mig.profile : p.mig.layout) + "), but " +
              gpu.name + " does not support MIG",
          "set mig: {profile: none}, or use a MIG-capable GPU (A30, A100, H100, H200, GH200, B200)");
      return true;
    }
    std::vector<std::pair<std::string, int>> layout;
    if (!p.mig.profiles.empty()) {
      layout = p.mig.profiles;
    } else if (!p.mig.layout.empty()) {
      if (gpu.mig_balanced.empty()) {
        add("GPU004", field_at, addr,
            "node pool '" + p.name + "' asks for MIG layout '" + p.mig.layout + "', which the catalog has not for " + gpu.name,
            "list the instances under mig.profiles instead");
        return true;
      }
      layout = gpu.mig_balanced;
    } else {
      layout = {{p.mig.profile, p.mig.instances}};
    }
    for (const auto& [name, n] : layout) {
      if (gpu.mig_profile(name)) continue;
      std::string hint = closest(name, gpu.mig_profile_names());
      const SourceLoc& at = p.mig.profiles.empty() ? field_at : p.origin.at("mig.profiles." + name);
      add("GPU004", at, addr, "MIG profile '" + name + "' of node pool '" + p.name + "' does not exist on " + gpu.name,
          (hint.rfind("did you mean", 0) == 0 ? hint + " " : "") + gpu.name + " offers " + join(gpu.mig_profile_names(), ", "));
      return true;
    }
    const SourceLoc& at = p.mig.profiles.empty() && p.mig.layout.empty() && p.origin.fields.count("mig.instances")
                              ? p.origin.at("mig.instances")
                              : field_at;
    std::vector<std::string> parts;
    for (const auto& [name, n] : layout) parts.push_back(std::to_string(n) + " x " + name);
    const std::string text = join(parts, " + ");
    if (layout.size() == 1 && layout[0].second < 1) {
      add("GPU005", at, addr,
          "node pool '" + p.name + "' sets MIG profile " + layout[0].first + " with " + std::to_string(layout[0].second) +
              " instances",
          "set mig.instances from 1 to " + std::to_string(gpu.mig_profile(layout[0].first)->max_count));
      return true;
    }
    auto fit = catalog::place_mig(gpu, layout);
    if (!fit.fits) {
      add("GPU005", at, addr, "MIG layout " + text + " of node pool '" + p.name + "' does not fit " + gpu.name + ": " + fit.problem,
          layout.size() == 1 ? "use at most " + std::to_string(gpu.mig_profile(layout[0].first)->max_count) + " instance(s) of " +
                                   layout[0].first + " per GPU"
                             : "use fewer or smaller instances; mig-parted's all-balanced layout for " + gpu.name + " fits");
      return true;
    }
    if (auto e = estimate(p)) {
      const catalog::MigProfile* largest = nullptr;
      for (const auto& [name, n] : layout) {
        const auto* prof = gpu.mig_profile(name);
        if (!largest || prof->memory_gb > largest->memory_gb) largest = prof;
      }
      if (e->inference_gb > largest->memory_gb)
        add("GPU008", p.origin.at(e->field), addr,
            "node pool '" + p.name + "' needs about " + num(e->inference_gb) + " GB per model replica (inference estimate: " +
                e->how.substr(e->how.find(' ') + 1) + "), more than its largest MIG instance, " + largest->name + " (" +
                std::to_string(largest->memory_gb) + " GB)",
            "use a larger MIG profile, or mig: {profile: none} to give the model whole GPUs");
    }
    return true;
  }

  void check_model_memory(const bp::NodePool& p, const catalog::GpuModel& gpu, double node_gb, const bp::Fabric* fabric,
                          const std::string& addr) {
    auto e = estimate(p);
    if (!e) return;
    const bool sharded = rdma_kind(fabric) && p.count > 1;
    const double capacity = sharded ? node_gb * p.count : node_gb;
    if (e->gb <= capacity) return;
    const std::string node = std::to_string(p.hardware.gpus_per_node) + " x " + gpu.name;
    std::string has = sharded ? num(capacity) + " GB across its " + std::to_string(p.count) + " nodes (" + node +
                                    " each, sharded over fabric '" + fabric->name + "')"
                              : num(node_gb) + " GB on one node (" + node + ")" +
                                    (p.count > 1 ? "; without an InfiniBand or RoCE fabric it cannot shard across nodes" : "");
    add("GPU006", p.origin.at(e->field), addr,
        "node pool '" + p.name + "' needs about " + num(e->gb) + " GB of GPU memory for its largest model (" + e->how +
            "), but has " + has,
        p.role == "training" && !(p.largest_model && p.largest_model->training == "lora")
            ? "shard across more nodes on an RDMA fabric, fine-tune with training: lora, or use GPUs with more memory"
            : "use GPUs with more memory, more GPUs per node, an RDMA fabric to shard across nodes, or a smaller / quantized model");
  }

  void check_ecc_nvlink(const bp::NodePool& p, const catalog::GpuModel& gpu, const std::string& addr) {
    if (p.role != "training") return;
    const int total = p.count * p.hardware.gpus_per_node;
    std::vector<std::string> lacks;
    if (!gpu.ecc && total > 1) lacks.push_back("ECC memory");
    if (!gpu.nvlink && p.hardware.gpus_per_node > 1) lacks.push_back("NVLink between the GPUs of a node");
    if (lacks.empty()) return;
    add("GPU007", p.origin.at("hardware.gpu"), addr,
        "training pool '" + p.name + "' (" + std::to_string(p.count) + " x " + std::to_string(p.hardware.gpus_per_node) + " " +
            gpu.name + ") has no " + join(lacks, " and no "),
        gpu.ecc ? "use one GPU per node, or GPUs with NVLink (e.g. H100-80GB)"
                : "train on data-center GPUs with ECC (and NVLink for several GPUs per node), e.g. H100-80GB");
  }

  void check_balance(const bp::NodePool& p, const catalog::GpuModel& gpu, const bp::Fabric* fabric, bool multi_node_training,
                     const std::string& addr) {
    const int gpus = p.hardware.gpus_per_node;
    if (gpus > 0 && p.hardware.cpu_cores > 0 && p.hardware.cpu_cores < 8 * gpus)
      add("BAL001", p.origin.at("hardware.cpu_cores"), addr,
          "node pool '" + p.name + "' has " + std::to_string(p.hardware.cpu_cores) + " CPU cores for " + std::to_string(gpus) +
              " GPUs (" + num(static_cast<double>(p.hardware.cpu_cores) / gpus) + " per GPU, fewer than 8)",
          "give each GPU at least 8 CPU cores (" + std::to_string(8 * gpus) + " for this node); NVIDIA's DGX systems have 14-16");
    if (!multi_node_training || !rdma_kind(fabric) || gpus < 1) return;
    if (gpu.architecture != "Hopper" && gpu.architecture != "Blackwell") return;
    int nics = p.hardware.rdma_nics;
    std::string nics_field = "hardware.rdma_nics";
    if (nics == 0 && p.interfaces && !p.interfaces->rdma.empty() &&
        std::none_of(p.interfaces->rdma.begin(), p.interfaces->rdma.end(), glob)) {
      nics = static_cast<int>(p.interfaces->rdma.size());
      nics_field = "interfaces.rdma";
    }
    if (nics > 0 && nics < gpus)
      add("BAL002", p.origin.at(nics_field), addr,
          "multi-node training pool '" + p.name + "' has " + std::to_string(nics) + " RDMA NIC(s) for " + std::to_string(gpus) +
              " " + gpu.name + " GPUs per node; rail-optimised designs give every GPU its own NIC",
          "one RDMA NIC per GPU (" + std::to_string(gpus) + " per node)");
    if (fabric->speed_gbps > 0) {
      const double per_gpu = static_cast<double>(fabric->speed_gbps) * (nics > 0 ? nics : gpus) / gpus;
      if (per_gpu < 200)
        add("BAL003", fabric->origin.at("speed_gbps"), "net.fabric." + fabric->name,
            "fabric '" + fabric->name + "' gives multi-node training pool '" + p.name + "' " + num(per_gpu) + " Gb/s per " +
                gpu.name + " GPU, below 200 Gb/s",
            "use a 400 Gb/s (NDR InfiniBand / 400GbE RoCE) fabric with one NIC per GPU");
    }
  }

  /// STO003 / STO004 for the network tiers a pool mounts.
  void check_mounts(const std::vector<std::string>& storage, const bp::Origin& origin, const std::string& os,
                    const std::string& addr, const std::string& who) {
    for (size_t i = 0; i < storage.size(); ++i) {
      const auto* t = find(tiers_, storage[i]);
      if (!t || (t->kind != "nfs" && t->kind != "parallel-fs")) continue;
      if (t->remote.empty()) {
        add("STO003", origin.at("storage." + std::to_string(i)), addr,
            who + " lists " + t->kind + " tier '" + t->name + "', which has no export to mount",
            "set export: on tier '" + t->name + "' (nfs \"server:/path\", lustre \"mgs@o2ib:/fsname\", gpfs the device, "
            "weka \"backend/fs\", beegfs the management host)");
        continue;
      }
      if (!t->encryption || (t->encryption->in_transit != "tls1.3" && t->encryption->in_transit != "tls1.2")) continue;
      std::string problem;
      if (t->kind == "nfs" && os != "ubuntu-24.04")
        problem = "NFS RPC-with-TLS (xprtsec=tls) needs Linux 6.5 and ktls-utils, and " + who + " runs " + os;
      else if (t->kind == "parallel-fs" && (t->backend == "weka" || t->backend == "beegfs"))
        problem = t->backend + " has no per-mount encryption in transit for " + who;
      if (!problem.empty())
        add("STO004", t->origin.at("encryption.in_transit"), "storage.tier." + t->name,
            "tier '" + t->name + "' asks for encryption in transit (" + t->encryption->in_transit + "), but " + problem,
            t->kind == "nfs" ? "run the pool on os: ubuntu-24.04, or drop encryption.in_transit"
                             : "use lustre (SSK) or gpfs (cipherList) for encrypted transport, or drop encryption.in_transit");
    }
  }

  // ---- burst pools ------------------------------------------------------------------

  void check_burst_pool(const bp::BurstPool& p) {
    const std::string addr = burst_address(p);
    const std::string who = "burst pool '" + p.name + "' (" + p.instance_type + ")";
    if (p.spot && !p.checkpointing)
      add("BURST001", p.origin.at("spot"), addr, "spot burst pool '" + p.name + "' has no checkpointing",
          "add checkpointing: {interval_minutes: 30, target: TIER}, or set spot: false");
    if (p.spot && p.checkpointing)
      if (const auto* t = find(tiers_, p.checkpointing->target); t && t->kind == "nvme")
        add("BURST002", p.origin.at("checkpointing.target"), addr,
            "spot burst pool '" + p.name + "' checkpoints to nvme tier '" + t->name +
                "', node-local storage that is lost when the instance is reclaimed",
            "checkpoint to an object, nfs or parallel-fs tier");
    check_mounts(p.storage, p.origin, bp::operating_system(p), addr, "burst pool '" + p.name + "'");
    const auto* type = cat_.instance_type(p.provider, p.instance_type);
    if (!type) {
      add("GPU002", p.origin.at("instance_type"), addr,
          "unknown " + p.provider + " instance type '" + p.instance_type + "' in burst pool '" + p.name + "'",
          closest(p.instance_type, cat_.instance_type_names(p.provider)) + " (the types are listed in docs/catalog.md)");
      return;
    }
    const auto* stack = find(stacks_, p.stack);
    const auto* gpu = cat_.gpu(type->gpu);
    if (stack && gpu) {
      check_cuda_supports(*gpu, *stack, "CUDA004", p.origin.at("instance_type"), addr, who);
      check_platform(*stack, *gpu, type->fabric_manager, stack->precision, p.origin.at("instance_type"), addr, who);
    }
  }

  // NET006: once per fabric, at its oversubscription, naming the first training pool.
  void check_fabric_use() {
    for (const auto& f : bp_.fabrics) {
      auto it = fabric_training_pool_.find(f.name);
      if (it == fabric_training_pool_.end()) continue;
      auto r = ratio(f.oversubscription);
      if (!r || *r <= 1.0) continue;
      add("NET006", f.origin.at("oversubscription"), "net.fabric." + f.name,
          "fabric '" + f.name + "' is oversubscribed " + f.oversubscription + " but carries training pool '" +
              it->second->name + "'",
          "make the fabric non-blocking (oversubscription: \"1:1\") or move training to a 1:1 fabric");
    }
  }

  // STO001: NFS tiers against the training nodes they serve in total.
  void check_nfs_use() {
    for (const auto& t : bp_.tiers) {
      if (t.kind != "nfs") continue;
      auto it = tier_training_nodes_.find(t.name);
      if (it == tier_training_nodes_.end() || it->second <= 20) continue;
      add("STO001", t.origin.at("kind"), "storage.tier." + t.name,
          "NFS tier '" + t.name + "' serves " + std::to_string(it->second) + " training nodes (more than 20)",
          "serve training data and checkpoints from a parallel-fs or nvme tier; keep NFS for home directories");
    }
  }

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

}  // namespace

Diagnostics validate(const bp::Blueprint& blueprint, const catalog::Catalog& catalog) {
  return Checker(blueprint, catalog).run();
}

}  // namespace plinth::validate
