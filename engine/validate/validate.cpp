#include "engine/validate/validate.h"

#include "engine/provider/registry.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "engine/core/strings.h"

namespace plinth::validate {

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> all = {
      {"BURST001", Severity::Error, "spot burst pool without checkpointing",
       "Spot/preemptible capacity is reclaimed with two minutes' notice on AWS and 30 s on GCP and Azure; a training job "
       "without checkpoints loses all progress since it started."},
      {"CUDA001", Severity::Error, "driver older than the pinned CUDA toolkit's minimum",
       "NVIDIA CUDA Toolkit release notes, table 'CUDA Toolkit and Corresponding Driver Versions' "
       "(engine/catalog/data/cuda.yaml): a toolkit needs at least the driver it shipped with."},
      {"CUDA002", Severity::Error, "unknown CUDA toolkit version",
       "Only versions in the CUDA release notes' driver table (engine/catalog/data/cuda.yaml) can be checked and installed."},
      {"CUDA003", Severity::Error, "node pool GPU needs a newer CUDA than its stack pins",
       "Each GPU architecture needs a minimum CUDA toolkit (Hopper/Ada 11.8, Blackwell 12.8; CUDA C++ Programming Guide, "
       "compute capabilities; engine/catalog/data/gpus.yaml min_cuda)."},
      {"CUDA004", Severity::Error, "burst pool instance type's GPU needs a newer CUDA than its stack pins",
       "Same fact as CUDA003, for the GPU of the cloud instance type (engine/catalog/data/instance_types.yaml)."},
      {"GPU001", Severity::Error, "unknown GPU model",
       "Every GPU rule needs the model's facts from engine/catalog/data/gpus.yaml."},
      {"GPU002", Severity::Error, "unknown cloud instance type",
       "The instance type's GPU model and count come from engine/catalog/data/instance_types.yaml (provider documentation)."},
      {"GPU003", Severity::Error, "MIG on a GPU without MIG",
       "NVIDIA MIG User Guide, 'Supported GPUs': only A30, A100, H100, H200 and Blackwell data-center GPUs support MIG."},
      {"GPU004", Severity::Error, "MIG profile the GPU does not offer",
       "NVIDIA MIG User Guide, 'Supported MIG Profiles', and mig-parted's config-default.yaml list each GPU's profiles."},
      {"GPU005", Severity::Error, "MIG layout exceeds the GPU's instances, compute slices or memory slices",
       "NVIDIA MIG User Guide: A100/H100/H200/B200 have 7 compute and 8 memory slices, A30 has 4 and 4; each profile "
       "has a maximum count per GPU (mig-parted all-<profile> configs)."},
      {"GPU006", Severity::Error, "GPU memory per node below the pool's largest model",
       "The model's weights must fit the node's GPU memory (memory per GPU x GPUs per node, gpus.yaml memory_gb)."},
      {"GPU007", Severity::Warning, "multi-node training on GPUs without ECC or NVLink",
       "GeForce GPUs such as the RTX 4090 have no ECC (silent bit flips corrupt long runs) and no NVLink (all-reduce "
       "inside a node goes over PCIe); NVIDIA datasheets, gpus.yaml ecc/nvlink."},
      {"GPU008", Severity::Error, "largest model does not fit one MIG instance",
       "A MIG instance is an isolated GPU with only its profile's memory (the '<M>gb' of the name); CUDA and NCCL do "
       "not pool memory across MIG instances (NVIDIA MIG User Guide, 'CUDA Device Enumeration' and limitations)."},
      {"GPU009", Severity::Warning, "host memory smaller than the node's GPU memory",
       "Loading and checkpointing stage tensors in host memory; NVIDIA's DGX systems carry more host memory than GPU "
       "memory (DGX H100: 2 TB for 8 x 80 GB). The check fires only below 1x."},
      {"IMG001", Severity::Warning, "container image not pinned by digest",
       "A tag can be moved to another image; only name@sha256:<64 hex> names exactly one image (OCI image spec, "
       "content-addressable digests), which reproducible and audited clusters need."},
      {"NET001", Severity::Error, "VLAN id outside 1-4094",
       "IEEE 802.1Q: the VLAN id is 12 bits; 0 and 4095 are reserved."},
      {"NET002", Severity::Error, "duplicate VLAN id",
       "Two VLANs with one 802.1Q id are one broadcast domain; switches cannot tell them apart."},
      {"NET003", Severity::Error, "invalid CIDR", "RFC 4632: address/prefix, e.g. 10.100.0.0/16."},
      {"NET004", Severity::Error, "overlapping CIDRs in one VRF",
       "Overlapping subnets in one routing table (VRF) make routes ambiguous; separate VRFs may reuse addresses."},
      {"NET005", Severity::Warning, "RoCE fabric without PFC and ECN",
       "RoCE v2 needs a lossless or congestion-controlled network (PFC, IEEE 802.1Qbb; ECN for DCQCN); NVIDIA's RoCE "
       "configuration guides enable both."},
      {"NET006", Severity::Warning, "oversubscribed fabric carrying a training pool",
       "Distributed training's all-reduce runs at the speed of the slowest link; NVIDIA's DGX SuperPOD reference "
       "architecture uses non-blocking (1:1) fabrics for compute traffic."},
      {"NET007", Severity::Warning, "multi-node training pool without an RDMA fabric",
       "NCCL across nodes needs GPUDirect RDMA over InfiniBand or RoCE v2 for usable all-reduce bandwidth; over plain "
       "TCP it falls back to sockets."},
      {"STO001", Severity::Warning, "NFS tier serving more than 20 training nodes",
       "A single NFS server becomes the bottleneck when many training nodes read data and write checkpoints at once; "
       "parallel file systems (Lustre, GPFS, WEKA) scale out."},
      {"STO002", Severity::Warning, "training pool without NVMe or parallel-fs storage",
       "Training reads datasets and writes checkpoints at GB/s per node; NFS and object storage alone starve the GPUs."},
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

  void check_stack(const bp::Stack& s) {
    if (auto min = cat_.min_driver_for_cuda(s.cuda)) {
      if (compare_versions(s.driver, *min) < 0)
        add("CUDA001", s.origin.at("driver"), "",
            "driver " + s.driver + " in stack '" + s.name + "' is older than " + *min + ", the minimum for CUDA " + s.cuda,
            "pin driver \"" + *min + "\" or newer, or an older CUDA");
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
  }

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

  void check_node_pool(const bp::NodePool& p) {
    const std::string addr = node_address(p);
    const bool multi_node_training = p.role == "training" && p.count > 1;
    const auto* stack = find(stacks_, p.stack);
    const auto* gpu = cat_.gpu(p.hardware.gpu);
    if (!gpu) {
      add("GPU001", p.origin.at("hardware.gpu"), addr,
          "unknown GPU model '" + p.hardware.gpu + "' in node pool '" + p.name + "'",
          closest(p.hardware.gpu, cat_.gpu_names()) + " (the models are listed in docs/catalog.md)");
    } else {
      if (stack) check_cuda_supports(*gpu, *stack, "CUDA003", p.origin.at("hardware.gpu"), addr, "node pool '" + p.name + "'");
      check_mig(p, *gpu, addr);
      double node_gb = static_cast<double>(gpu->memory_gb) * p.hardware.gpus_per_node;
      if (p.largest_model_gb && *p.largest_model_gb > node_gb)
        add("GPU006", p.origin.at("largest_model_gb"), addr,
            "node pool '" + p.name + "' declares a " + num(*p.largest_model_gb) + " GB model, but a node has only " +
                num(node_gb) + " GB of GPU memory (" + std::to_string(p.hardware.gpus_per_node) + " x " + gpu->name + ")",
            "use GPUs with more memory, more GPUs per node, or a smaller (sharded or quantized) model");
      if (p.hardware.memory_gb > 0 && p.hardware.memory_gb < node_gb)
        add("GPU009", p.origin.at("hardware.memory_gb"), addr,
            "node pool '" + p.name + "' has " + std::to_string(p.hardware.memory_gb) + " GB of host memory, less than its " +
                num(node_gb) + " GB of GPU memory",
            "give each node at least as much host memory as GPU memory (" + num(node_gb) + " GB); twice is common");
      if (multi_node_training && (!gpu->ecc || !gpu->nvlink)) {
        std::string lacks = !gpu->ecc && !gpu->nvlink ? "ECC memory and NVLink" : !gpu->ecc ? "ECC memory" : "NVLink";
        add("GPU007", p.origin.at("hardware.gpu"), addr,
            "multi-node training pool '" + p.name + "' uses " + gpu->name + ", which has no " + lacks,
            "train across nodes on data-center GPUs with ECC and NVLink (e.g. H100-80GB), or keep this pool to one node");
      }
    }
    if (multi_node_training) {
      const auto* fabric = find(fabrics_, p.fabric);
      bool rdma = fabric && (fabric->kind == "infiniband" || fabric->kind == "roce-v2");
      if (!rdma)
        add("NET007", p.origin.at("fabric"), addr,
            "multi-node training pool '" + p.name + "' (" + std::to_string(p.count) + " nodes) has " +
                (fabric ? "only the " + fabric->kind + " fabric '" + fabric->name + "'" : std::string("no fabric")),
            "attach an infiniband or roce-v2 fabric with 'fabric:' so NCCL can use GPUDirect RDMA");
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

  void check_mig(const bp::NodePool& p, const catalog::GpuModel& gpu, const std::string& addr) {
    if (p.mig.profile == "none") return;
    if (!gpu.has_mig()) {
      add("GPU003", p.origin.at("mig.profile"), addr,
          "node pool '" + p.name + "' asks for MIG profile '" + p.mig.profile + "', but " + gpu.name + " does not support MIG",
          "set mig: {profile: none}, or use a MIG-capable GPU (A30, A100, H100, H200, B200)");
      return;
    }
    const auto* prof = gpu.mig_profile(p.mig.profile);
    if (!prof) {
      std::string hint = closest(p.mig.profile, gpu.mig_profile_names());
      add("GPU004", p.origin.at("mig.profile"), addr,
          "MIG profile '" + p.mig.profile + "' of node pool '" + p.name + "' does not exist on " + gpu.name,
          (hint.rfind("did you mean", 0) == 0 ? hint + " " : "") + gpu.name + " offers " + join(gpu.mig_profile_names(), ", "));
      return;
    }
    const int n = p.mig.instances;
    const SourceLoc& at = p.origin.fields.count("mig.instances") ? p.origin.at("mig.instances") : p.origin.at("mig.profile");
    const std::string layout = std::to_string(n) + " x " + prof->name;
    auto too_many = [&](const std::string& what) {
      add("GPU005", at, addr, "MIG layout " + layout + " of node pool '" + p.name + "' " + what,
          "use at most " + std::to_string(prof->max_count) + " instance(s) of " + prof->name + " per GPU");
    };
    if (n < 1) {
      add("GPU005", at, addr,
          "node pool '" + p.name + "' sets MIG profile " + prof->name + " with " + std::to_string(n) + " instances",
          "set mig.instances from 1 to " + std::to_string(prof->max_count));
      return;
    } else if (n * prof->compute_slices > gpu.mig_compute_slices) {
      too_many("needs " + std::to_string(n * prof->compute_slices) + " compute slices; " + gpu.name + " has " +
               std::to_string(gpu.mig_compute_slices));
      return;
    } else if (n * prof->memory_slices > gpu.mig_memory_slices) {
      too_many("needs " + std::to_string(n * prof->memory_slices) + " memory slices; " + gpu.name + " has " +
               std::to_string(gpu.mig_memory_slices));
      return;
    } else if (n > prof->max_count || n > gpu.mig_max_instances) {
      too_many("exceeds the " + std::to_string(std::min(prof->max_count, gpu.mig_max_instances)) + " instance(s) of " +
               prof->name + " that " + gpu.name + " allows");
      return;
    }
    if (p.largest_model_gb && *p.largest_model_gb > prof->memory_gb)
      add("GPU008", p.origin.at("largest_model_gb"), addr,
          "node pool '" + p.name + "' declares a " + num(*p.largest_model_gb) + " GB model, larger than one " + prof->name +
              " MIG instance (" + std::to_string(prof->memory_gb) + " GB)",
          "use a larger MIG profile, or mig: {profile: none} to give the model whole GPUs");
  }

  void check_burst_pool(const bp::BurstPool& p) {
    const std::string addr = burst_address(p);
    if (p.spot && !p.checkpointing)
      add("BURST001", p.origin.at("spot"), addr, "spot burst pool '" + p.name + "' has no checkpointing",
          "add checkpointing: {interval_minutes: 30, target: TIER}, or set spot: false");
    const auto* type = cat_.instance_type(p.provider, p.instance_type);
    if (!type) {
      add("GPU002", p.origin.at("instance_type"), addr,
          "unknown " + p.provider + " instance type '" + p.instance_type + "' in burst pool '" + p.name + "'",
          closest(p.instance_type, cat_.instance_type_names(p.provider)) + " (the types are listed in docs/catalog.md)");
      return;
    }
    const auto* stack = find(stacks_, p.stack);
    const auto* gpu = cat_.gpu(type->gpu);
    if (stack && gpu)
      check_cuda_supports(*gpu, *stack, "CUDA004", p.origin.at("instance_type"), addr,
                          "burst pool '" + p.name + "' (" + p.instance_type + ")");
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
