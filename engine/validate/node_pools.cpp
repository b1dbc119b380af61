// The rules on node pools: the GPU model, MIG layouts, whether the largest
// model fits GPU memory, ECC and NVLink, CPU / NIC / fabric balance, host
// memory, RDMA fabrics and fast storage for training. The stack on the GPU is
// checked by platform.cpp, the tiers a pool mounts by storage.cpp.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "engine/core/strings.h"
#include <cctype>

#include "engine/validate/checker.h"
#include "engine/validate/hints.h"

namespace plinth::validate {

const RuleInfo BAL001{
    "BAL001", Severity::Warning, "fewer than 8 CPU cores per GPU",
    "A node pool's `hardware.cpu_cores` divided by `gpus_per_node` is below 8. Position: `hardware.cpu_cores`.",
    "Data loading, augmentation and NCCL's proxy threads run on the CPU; NVIDIA's reference systems pair 14 to 16 "
    "cores with every GPU (DGX A100: 128 cores for 8 GPUs; DGX H100 and DGX B200: 112 for 8; NVIDIA DGX user guides, "
    "system specifications). Plinth warns below 8, about half of that, where GPUs start to wait for input.",
    "choose CPUs with more cores, or fewer GPUs per node"};
const RuleInfo BAL002{
    "BAL002", Severity::Warning, "fewer RDMA NICs than GPUs on a multi-node Hopper or Blackwell training pool",
    "A multi-node training pool of Hopper or Blackwell GPUs declares fewer RDMA NICs (`hardware.rdma_nics`, else the "
    "explicit names in `interfaces.rdma`) than `gpus_per_node`. Position: `hardware.rdma_nics` (or `interfaces`).",
    "NVIDIA's rail-optimised reference designs give every GPU its own NIC on its own rail (DGX H100 / DGX B200: 8 "
    "ConnectX-7 at 400 Gb/s for 8 GPUs; DGX SuperPOD reference architecture), so all-reduce traffic never shares a "
    "NIC or crosses PCIe switches.",
    "one RDMA NIC per GPU (rail-optimised), or fewer GPUs per node"};
const RuleInfo BAL003{
    "BAL003", Severity::Warning, "less than 200 Gb/s of RDMA bandwidth per GPU on a multi-node Hopper or Blackwell training pool",
    "A multi-node training pool of Hopper or Blackwell GPUs gets less than 200 Gb/s of fabric bandwidth per GPU: "
    "`speed_gbps` of its fabric times its RDMA NICs (one per GPU when not declared) divided by `gpus_per_node`. "
    "Position: the fabric's `speed_gbps`.",
    "H100-class GPUs are built for 400 Gb/s per GPU on NDR InfiniBand or 400G RoCE (DGX H100 user guide; DGX "
    "SuperPOD reference architecture); below 200 Gb/s the inter-node all-reduce, not the GPUs, sets the step time.",
    "a 400 Gb/s (NDR / 400GbE) fabric with one NIC per GPU"};
const RuleInfo GPU001{
    "GPU001", Severity::Error, "unknown GPU model",
    "`hardware.gpu` is neither a catalog model name, an alias, nor the product name nvidia-smi reports "
    "(`\"NVIDIA H100 80GB HBM3\"` is accepted). The hint names the closest models. Position: `hardware.gpu`.",
    "Every GPU rule needs the model's facts from engine/catalog/data/gpus.yaml.",
    "use a name from catalog.md, or add the model to gpus.yaml"};
const RuleInfo GPU003{
    "GPU003", Severity::Error, "MIG on a GPU without MIG",
    "`mig` asks for a profile or layout on a GPU that has no MIG, such as L40S, L4, RTX 4090 or V100. Position: "
    "`mig.profile` (or `mig.layout` / `mig.profiles`).",
    "NVIDIA MIG User Guide, 'Supported GPUs': A30, A100, H100, H200, GH200 and Blackwell data-center GPUs.",
    "`mig: {profile: none}`, or a MIG-capable GPU"};
const RuleInfo GPU004{
    "GPU004", Severity::Error, "MIG profile the GPU does not offer",
    "A profile name (in `mig.profile` or `mig.profiles`) is not one of the GPU's profiles (e.g. `3g.20gb` is an "
    "A100-40GB profile; the H100-80GB has `3g.40gb`; the H200 NVL has no `1g.35gb`), or `mig.layout` names a layout "
    "the catalog has not for the GPU. The hint lists the GPU's profiles. Position: the profile.",
    "NVIDIA MIG User Guide, 'Supported MIG Profiles'; NVIDIA mig-parted `config-default.yaml`.",
    "pick one of the listed profiles"};
const RuleInfo DRV006{
    "DRV006", Severity::Error, "MIG on a driver older than the GPU's MIG minimum",
    "A node pool partitions its GPUs with MIG (`mig`) while its stack pins a driver older than the one NVIDIA names "
    "for MIG on that GPU (gpus.yaml `mig_min_driver`: H200 550.90.07, H100 525.85.12, B200 570.133.20, ...). "
    "Position: the stack's `driver`, for that pool.",
    "NVIDIA MIG User Guide, Deployment Considerations: 'MIG functionality is provided as part of the NVIDIA GPU "
    "driver. The minimum driver versions are listed below' (per GPU).",
    "pin the driver the hint names or newer, or set mig: {profile: none}"};
const RuleInfo IMEX001{
    "IMEX001", Severity::Error, "multi-node NVLink pool without a matching IMEX domain",
    "A node pool of compute trays whose NVLink domain spans the rack (gpus.yaml `fabric_manager: switch-tray`: "
    "GB200, GB300) has no `imex: {nodes: [...]}`, lists fewer IMEX nodes than it has nodes, or more GPUs than one "
    "NVL72 domain holds (72); or a pool of any other GPU sets `imex`. Position: `hardware.gpu`, or `imex`.",
    "NVIDIA IMEX guide: on GB200/GB300 NVL systems the IMEX daemon of every compute tray, listed in "
    "/etc/nvidia-imex/nodes_config.cfg, imports and exports GPU memory between the trays of an NVLink domain; without "
    "it CUDA cannot map another tray's memory and multi-node NVLink jobs fail. One NVL72 rack is one domain of 72 GPUs "
    "(18 trays of 4).",
    "list the IPv4 addresses of the rack's compute trays under imex.nodes (one pool per rack), or remove imex from a "
    "pool whose GPUs are not in a multi-node NVLink domain"};
const RuleInfo DRV007{
    "DRV007", Severity::Warning, "Secure Boot on nodes whose kernel modules DKMS builds",
    "A node pool sets a Secure Boot BIOS attribute (`bios`: `SecureBoot`, `SecureBootEnable`, ... set to `Enabled`, "
    "`On` or `true`) while its rendered cloud-init still builds kernel modules with DKMS. On Ubuntu the render "
    "installs Canonical's signed precompiled NVIDIA modules under Secure Boot (`linux-modules-nvidia-<branch>-server"
    "[-open]-<kernel>` and `linux-signatures-nvidia-<kernel>`, with `nvidia-headless-no-dkms-<branch>-server`), but "
    "DOCA-OFED on a `doca-ofed` fabric is still built by DKMS; on RHEL and Rocky the `<branch>-dkms` and `<branch>-open` "
    "dnf module streams build the NVIDIA modules with DKMS. Under Secure Boot the kernel loads only modules signed by "
    "a key in the firmware's or the Machine Owner Key (MOK) database; DKMS signs with a key of its own that must first "
    "be enrolled at the console (`mokutil --import`), so on an unattended node those modules do not load after the "
    "reboot. RHEL 9 has no module set the firmware trusts for a supported branch: NVIDIA's precompiled streams "
    "(`nvidia-driver:<branch>`) end at R560 and are signed with NVIDIA's own key, which needs the same enrolment, "
    "and the distribution-signed open modules NVIDIA points to are RHEL 10's. Position: `bios`.",
    "NVIDIA Driver Installation Guide, 'Secure Boot' (DKMS-built modules must be signed with an enrolled key; "
    "precompiled signed modules load as they are); Ubuntu wiki 'UEFI/SecureBoot/DKMS'; NVIDIA gpu-driver-container, "
    "ubuntu22.04/ubuntu24.04 precompiled/nvidia-driver (the Canonical-signed module packages); NVIDIA "
    "yum-packaging-precompiled-kmod, UEFI.md (precompiled RHEL modules load under Secure Boot only once NVIDIA's key "
    "is enrolled in MOK), its branches (the last is 560) and DISTROS.md (distribution-signed open modules, RHEL's "
    "for el10_1).",
    "use the inbox RDMA stack (`rdma_stack: inbox`) on Ubuntu, enrol the DKMS signing key on every node before the "
    "first reboot, or disable Secure Boot"};
const RuleInfo GPU005{
    "GPU005", Severity::Error, "MIG layout the GPU cannot place",
    "The instances of `mig` (one profile times `instances`, mig-parted's all-balanced, or a mix under `mig.profiles`) "
    "do not fit one GPU: more instances of a profile than it allows, more than the GPU's instances, more than one "
    "'+me' instance, or no placement of the instances on its memory slices (an instance of M memory slices starts at "
    "a multiple of M, and its compute slices must fit from there). `instances` below 1 is also reported. Position: "
    "`mig.instances` (or the layout).",
    "NVIDIA MIG User Guide, supported profiles and placements (`nvidia-smi mig -lgipp`); the per-profile maximum "
    "counts and the all-balanced layouts are mig-parted's (checked against its config in the catalog tests).",
    "use a layout the hint's reason allows"};
const RuleInfo GPU006{
    "GPU006", Severity::Error, "the pool's largest model does not fit its GPU memory",
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
    "quantized model"};
const RuleInfo GPU007{
    "GPU007", Severity::Warning, "training on GPUs without ECC, or multi-GPU nodes without NVLink",
    "A training pool uses GPUs without ECC memory (any training pool with more than one GPU in total), or puts "
    "more than one GPU per node without NVLink (RTX 4090: neither; L40S, L4, RTX 6000 Ada, T4: no NVLink). A single "
    "GPU per node needs no NVLink, whatever the node count. Position: `hardware.gpu`.",
    "Without ECC, bit flips silently corrupt long runs; without NVLink, all-reduce between the GPUs of a node crosses "
    "PCIe (NVIDIA datasheets; `ecc` / `nvlink` in gpus.yaml).",
    "data-center GPUs with ECC (and NVLink when a node has several), or one GPU per node"};
const RuleInfo GPU008{
    "GPU008", Severity::Error, "largest model does not fit one MIG instance",
    "On a MIG pool, the inference estimate of the largest model (see GPU006) exceeds the memory of the largest "
    "instance of its layout (the `<M>gb` in the profile name). Position: `largest_model` (or `largest_model_gb`).",
    "Each MIG instance is an isolated GPU; CUDA sees one instance per process and NCCL does not join MIG instances "
    "(NVIDIA MIG User Guide, 'CUDA Device Enumeration' and limitations).",
    "a larger profile, or `mig: {profile: none}`"};
const RuleInfo GPU009{
    "GPU009", Severity::Warning, "host memory smaller than the node's GPU memory",
    "`hardware.memory_gb` is set and is less than the node's total GPU memory. Position: `hardware.memory_gb`.",
    "Loading weights and writing checkpoints stage tensors in host memory; NVIDIA's reference systems carry more host "
    "than GPU memory (DGX H100: 2 TB for 8 x 80 GB). The rule fires only below 1x, well under common practice (2x).",
    "give each node at least as much host memory as GPU memory"};
const RuleInfo NET007{
    "NET007", Severity::Warning, "multi-node training pool without an RDMA fabric",
    "A multi-node training pool has no `fabric`, or an `ethernet` one. Position: `fabric` (the pool when there is none).",
    "NCCL across nodes needs GPUDirect RDMA over InfiniBand or RoCE v2; over TCP sockets all-reduce bandwidth collapses.",
    "attach an `infiniband` or `roce-v2` fabric"};
const RuleInfo NET008{
    "NET008", Severity::Warning, "RDMA pool without GPUDirect RDMA",
    "A node pool on an InfiniBand / RoCE fabric uses the inbox RDMA stack (`rdma_stack: inbox`, the default on "
    "RHEL-family systems) with the proprietary kernel modules. Position: the pool's `fabric`.",
    "With the distribution's rdma-core, GPUDirect RDMA goes through Linux dma-buf, which only the open kernel modules "
    "support; nvidia-peermem needs the DOCA-OFED / MLNX_OFED stack (NVIDIA GPU Operator, GPUDirect RDMA; NVIDIA Driver "
    "Installation Guide, Kernel Modules). Without either, NCCL stages every transfer through host memory.",
    "use the open kernel modules, or `rdma_stack: doca-ofed`"};
const RuleInfo STO002{
    "STO002", Severity::Warning, "training pool without NVMe or parallel-fs storage",
    "A training pool's `storage` names no `nvme` or `parallel-fs` tier. Position: `storage` (the pool when it has none).",
    "Training reads datasets and writes checkpoints at GB/s per node; NFS and object storage alone starve the GPUs.",
    "add an nvme or parallel-fs tier"};

namespace {

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

bool glob(const std::string& name) { return name.find_first_of("*?[") != std::string::npos; }

}  // namespace

bool rdma_kind(const bp::Fabric* f) { return f && (f->kind == "infiniband" || f->kind == "roce-v2"); }

void Checker::check_node_pool(const bp::NodePool& p) {
  const std::string addr = node_address(p);
  const std::string who = "node pool '" + p.name + "'";
  const bool multi_node_training = p.role == "training" && p.count > 1;
  const auto* stack = find(stacks_, p.stack);
  const auto* gpu = cat_.gpu(p.hardware.gpu);
  const auto* fabric = find(fabrics_, p.fabric);
  check_secure_boot(p, fabric, addr, who);
  if (!gpu) {
    add(GPU001, p.origin.at("hardware.gpu"), addr,
        "unknown GPU model '" + p.hardware.gpu + "' in node pool '" + p.name + "'",
        closest(p.hardware.gpu, cat_.gpu_names()) + " (the models are listed in docs/catalog.md)");
  } else {
    if (stack) {
      check_cuda_supports(*gpu, *stack, CUDA003, p.origin.at("hardware.gpu"), addr, who);
      std::string precision = p.largest_model ? p.largest_model->precision : "";
      if (precision != "bf16" && stack->precision == "bf16") precision = "bf16";
      check_platform(*stack, *gpu, gpu->has_nvswitch(p.hardware.gpus_per_node) && gpu->fabric_manager == "node", precision,
                     p.origin.at("hardware.gpu"), addr, who);
    }
    bool mig = check_mig(p, *gpu, addr);
    if (mig && stack && gpu->has_mig() && !gpu->mig_min_driver.empty() && !stack->driver.empty() &&
        std::isdigit(static_cast<unsigned char>(stack->driver[0])) &&
        compare_versions(stack->driver, gpu->mig_min_driver) < 0)
      add(DRV006, stack->origin.at("driver"), addr,
          who + " partitions " + gpu->name + " with MIG, which needs driver " + gpu->mig_min_driver +
              " or newer (NVIDIA MIG User Guide), but stack '" + stack->name + "' pins " + stack->driver,
          "pin driver \"" + gpu->mig_min_driver + "\" or newer, or set mig: {profile: none}");
    const double node_gb = static_cast<double>(gpu->memory_gb) * p.hardware.gpus_per_node;
    if (!mig) check_model_memory(p, *gpu, node_gb, fabric, addr);
    if (p.hardware.memory_gb > 0 && p.hardware.memory_gb < node_gb)
      add(GPU009, p.origin.at("hardware.memory_gb"), addr,
          "node pool '" + p.name + "' has " + std::to_string(p.hardware.memory_gb) + " GB of host memory, less than its " +
              num(node_gb) + " GB of GPU memory",
          "give each node at least as much host memory as GPU memory (" + num(node_gb) + " GB); twice is common");
    check_ecc_nvlink(p, *gpu, addr);
    check_balance(p, *gpu, fabric, multi_node_training, addr);
    check_imex(p, *gpu, addr, who);
  }
  if (multi_node_training && !rdma_kind(fabric))
    add(NET007, p.origin.at("fabric"), addr,
        "multi-node training pool '" + p.name + "' (" + std::to_string(p.count) + " nodes) has " +
            (fabric ? "only the " + fabric->kind + " fabric '" + fabric->name + "'" : std::string("no fabric")),
        "attach an infiniband or roce-v2 fabric with 'fabric:' so NCCL can use GPUDirect RDMA");
  if (rdma_kind(fabric) && stack) {
    const std::string os = bp::operating_system(p);
    const std::string flavour = catalog::effective_kernel_modules(cat_, gpu, stack->kernel_modules, stack->driver);
    if (bp::rdma_stack(*fabric, os) == "inbox" && flavour == "proprietary")
      add(NET008, p.origin.at("fabric"), addr,
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
      add(STO002, p.origin.at("storage"), addr, "training pool '" + p.name + "' has no nvme or parallel-fs storage tier",
          "add an nvme or parallel-fs tier to its 'storage:' for datasets and checkpoints");
    for (const auto& t : p.storage) tier_training_nodes_[t] += p.count;
    if (!p.fabric.empty() && !fabric_training_pool_.count(p.fabric)) fabric_training_pool_[p.fabric] = &p;
  }
  check_mounts(p.storage, p.origin, bp::operating_system(p), addr, who, fabric);
}

/// GPU003/004/005/008; true when the pool partitions its GPUs with MIG.
bool Checker::check_mig(const bp::NodePool& p, const catalog::GpuModel& gpu, const std::string& addr) {
  if (!p.mig.enabled()) return false;
  const std::string field = !p.mig.profiles.empty() ? "mig.profiles" : !p.mig.layout.empty() ? "mig.layout" : "mig.profile";
  const SourceLoc& field_at = p.origin.at(field);
  if (!gpu.has_mig()) {
    add(GPU003, field_at, addr,
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
      add(GPU004, field_at, addr,
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
    add(GPU004, at, addr, "MIG profile '" + name + "' of node pool '" + p.name + "' does not exist on " + gpu.name,
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
    add(GPU005, at, addr,
        "node pool '" + p.name + "' sets MIG profile " + layout[0].first + " with " + std::to_string(layout[0].second) +
            " instances",
        "set mig.instances from 1 to " + std::to_string(gpu.mig_profile(layout[0].first)->max_count));
    return true;
  }
  auto fit = catalog::place_mig(gpu, layout);
  if (!fit.fits) {
    add(GPU005, at, addr, "MIG layout " + text + " of node pool '" + p.name + "' does not fit " + gpu.name + ": " + fit.problem,
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
      add(GPU008, p.origin.at(e->field), addr,
          "node pool '" + p.name + "' needs about " + num(e->inference_gb) + " GB per model replica (inference estimate: " +
              e->how.substr(e->how.find(' ') + 1) + "), more than its largest MIG instance, " + largest->name + " (" +
              std::to_string(largest->memory_gb) + " GB)",
          "use a larger MIG profile, or mig: {profile: none} to give the model whole GPUs");
  }
  return true;
}

void Checker::check_model_memory(const bp::NodePool& p, const catalog::GpuModel& gpu, double node_gb,
                                 const bp::Fabric* fabric, const std::string& addr) {
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
  add(GPU006, p.origin.at(e->field), addr,
      "node pool '" + p.name + "' needs about " + num(e->gb) + " GB of GPU memory for its largest model (" + e->how +
          "), but has " + has,
      p.role == "training" && !(p.largest_model && p.largest_model->training == "lora")
          ? "shard across more nodes on an RDMA fabric, fine-tune with training: lora, or use GPUs with more memory"
          : "use GPUs with more memory, more GPUs per node, an RDMA fabric to shard across nodes, or a smaller / quantized model");
}

void Checker::check_secure_boot(const bp::NodePool& p, const bp::Fabric* fabric, const std::string& addr,
                                const std::string& who) {
  const std::string key = bp::secure_boot_attribute(p);
  if (key.empty()) return;
  const std::string os = bp::operating_system(p);
  const bool doca = rdma_kind(fabric) && bp::rdma_stack(*fabric, os) == "doca-ofed";
  const std::string set = key + ": " + p.bios.at(key);
  if (bp::rhel_family(os)) {
    add(DRV007, p.origin.at("bios"), addr,
        who + " enables Secure Boot (" + set + ") on " + os + ", where the render builds the NVIDIA kernel modules with "
            "DKMS, signed with a key the firmware does not know, so they do not load after the reboot",
        "enrol the DKMS signing key (mokutil --import) on every node before the first reboot, boot an image with "
        "the NVIDIA modules signed by a key the firmware trusts, run Ubuntu (the render installs Canonical's signed "
        "modules there), or set " + key + ": Disabled");
  } else if (doca) {
    add(DRV007, p.origin.at("bios"), addr,
        who + " enables Secure Boot (" + set + "); the render installs Canonical's signed NVIDIA modules, but "
            "DOCA-OFED's are built by DKMS on the node and signed with a key the firmware does not know, so they do "
            "not load after the reboot",
        "set rdma_stack: inbox on fabric '" + fabric->name + "' (the kernel's own, signed RDMA modules), enrol the "
        "DKMS signing key (mokutil --import) on every node before the first reboot, or set " + key + ": Disabled");
  }
}

void Checker::check_imex(const bp::NodePool& p, const catalog::GpuModel& gpu, const std::string& addr,
                         const std::string& who) {
  constexpr int kDomainGpus = 72;  // an NVL72 rack: 18 compute trays of 4 GPUs
  if (!gpu.runs_imex()) {
    if (p.imex)
      add(IMEX001, p.origin.at("imex"), addr,
          who + " sets imex, but " + gpu.name + " GPUs share no NVLink domain across nodes",
          "remove imex; IMEX runs on GB200/GB300 compute trays");
    return;
  }
  if (!p.imex) {
    add(IMEX001, p.origin.at("hardware.gpu"), addr,
        who + " runs " + gpu.name + " compute trays, whose GPUs reach the other trays of their NVLink domain only "
              "through IMEX, but sets no imex.nodes",
        "list the rack's compute tray addresses: imex: {nodes: [10.100.1.11, 10.100.1.12, ...]} (one pool per rack)");
  } else if (static_cast<int>(p.imex->nodes.size()) < p.count) {
    add(IMEX001, p.origin.at("imex"), addr,
        who + " has " + std::to_string(p.count) + " nodes but lists " + std::to_string(p.imex->nodes.size()) +
            " IMEX node(s), so some trays are outside the domain",
        "list every compute tray of the pool under imex.nodes");
  } else if (static_cast<int>(p.imex->nodes.size()) * p.hardware.gpus_per_node > kDomainGpus) {
    add(IMEX001, p.origin.at("imex"), addr,
        who + " lists " + std::to_string(p.imex->nodes.size()) + " IMEX nodes of " +
            std::to_string(p.hardware.gpus_per_node) + " GPUs, more than the " + std::to_string(kDomainGpus) +
            " GPUs of one NVL72 NVLink domain",
        "make one node pool, with its own imex.nodes, per rack");
  }
}

void Checker::check_ecc_nvlink(const bp::NodePool& p, const catalog::GpuModel& gpu, const std::string& addr) {
  if (p.role != "training") return;
  const int total = p.count * p.hardware.gpus_per_node;
  std::vector<std::string> lacks;
  if (!gpu.ecc && total > 1) lacks.push_back("ECC memory");
  if (!gpu.nvlink && p.hardware.gpus_per_node > 1) lacks.push_back("NVLink between the GPUs of a node");
  if (lacks.empty()) return;
  add(GPU007, p.origin.at("hardware.gpu"), addr,
      "training pool '" + p.name + "' (" + std::to_string(p.count) + " x " + std::to_string(p.hardware.gpus_per_node) + " " +
          gpu.name + ") has no " + join(lacks, " and no "),
      gpu.ecc ? "use one GPU per node, or GPUs with NVLink (e.g. H100-80GB)"
              : "train on data-center GPUs with ECC (and NVLink for several GPUs per node), e.g. H100-80GB");
}

void Checker::check_balance(const bp::NodePool& p, const catalog::GpuModel& gpu, const bp::Fabric* fabric,
                            bool multi_node_training, const std::string& addr) {
  const int gpus = p.hardware.gpus_per_node;
  if (gpus > 0 && p.hardware.cpu_cores > 0 && p.hardware.cpu_cores < 8 * gpus)
    add(BAL001, p.origin.at("hardware.cpu_cores"), addr,
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
    add(BAL002, p.origin.at(nics_field), addr,
        "multi-node training pool '" + p.name + "' has " + std::to_string(nics) + " RDMA NIC(s) for " + std::to_string(gpus) +
            " " + gpu.name + " GPUs per node; rail-optimised designs give every GPU its own NIC",
        "one RDMA NIC per GPU (" + std::to_string(gpus) + " per node)");
  if (fabric->speed_gbps > 0) {
    const double per_gpu = static_cast<double>(fabric->speed_gbps) * (nics > 0 ? nics : gpus) / gpus;
    if (per_gpu < 200)
      add(BAL003, fabric->origin.at("speed_gbps"), "net.fabric." + fabric->name,
          "fabric '" + fabric->name + "' gives multi-node training pool '" + p.name + "' " + num(per_gpu) + " Gb/s per " +
              gpu.name + " GPU, below 200 Gb/s",
          "use a 400 Gb/s (NDR InfiniBand / 400GbE RoCE) fabric with one NIC per GPU");
  }
}

}  // namespace plinth::validate
