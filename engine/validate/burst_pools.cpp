// The rules on burst pools: spot capacity and its checkpoints, and the
// cloud instance type (its GPU is checked by platform.cpp).
#include <algorithm>

#include "engine/validate/checker.h"
#include "engine/validate/hints.h"
#include "engine/core/strings.h"
#include "engine/provider/registry.h"

namespace plinth::validate {

const RuleInfo BURST001{
    "BURST001", Severity::Error, "spot burst pool without checkpointing",
    "A burst pool with `spot: true` has no `checkpointing:`. Position: `spot`.",
    "Spot / preemptible capacity is reclaimed at short notice (two minutes on AWS, 30 seconds on GCP and Azure, per "
    "each provider's spot documentation); a job without checkpoints loses everything since it started.",
    "add `checkpointing: {interval_minutes: 30, target: TIER}`, or set `spot: false`"};
const RuleInfo BURST002{
    "BURST002", Severity::Error, "spot checkpoints written to node-local NVMe",
    "A spot burst pool's `checkpointing.target` is an `nvme` tier. Position: `checkpointing.target`.",
    "Instance-store NVMe is erased when a spot instance is reclaimed (AWS EC2 instance store lifetime, GCP Local SSD, "
    "Azure temporary disk); checkpoints there vanish with the instance they were meant to outlive.",
    "checkpoint to an object, nfs or parallel-fs tier that outlives the instance"};
const RuleInfo BURST003{
    "BURST003", Severity::Warning, "a pool tied to one zone lists several",
    "A burst pool turns on a setting its provider says ties instances to one zone (AWS `placement_group`) and lists "
    "more than one place in a zone setting (`zones`, `subnets`). Position: the tying setting.",
    "Instances of a pool spread over the zones it lists, and fall back to the next one when a zone has no capacity; "
    "a cluster placement group cannot span Availability Zones (AWS EC2 User Guide, \"Placement groups\", cluster "
    "placement groups), and EFA traffic does not leave a subnet (AWS EC2 User Guide, \"Elastic Fabric Adapter\", "
    "limitations), so a training job across the pool's zones runs NCCL over the ordinary network.",
    "list one zone (or subnet) for a tightly coupled training pool, and several only for pools whose instances work "
    "on their own"};
const RuleInfo BURST004{
    "BURST004", Severity::Warning, "multi-node burst pool without its GPU NICs",
    "A burst pool that may run more than one instance (`max` above 1, and not `multi_node: false`) may launch an "
    "instance type whose GPUs reach other instances' only through GPUDirect-TCPX, -TCPXO or RDMA on extra NICs "
    "(`gpu_network` gpudirect-*: Google A3 High, A3 Mega, A3 Ultra, A4; docs/providers/gcp.md), and lists no "
    "subnetwork for them (`gpu_subnetworks`), so the instance gets its one NIC and NCCL between instances runs over "
    "TCP on it. EFA (AWS) and InfiniBand (Azure ND) pools get their fabric from the provider and the render and are "
    "not flagged. Position: `instance_type` (or the fallback setting).",
    "Google Cloud, 'GPU network bandwidth': a3-highgpu-8g gives its GPUs 4 NICs (GPUDirect-TCPX, 1,000 Gbps), "
    "a3-megagpu-8g 8 (GPUDirect-TCPXO, 1,800 Gbps), A3 Ultra and A4 8 RDMA NICs (3,200 Gbps), each GPU NIC on a VPC "
    "network of its own; NICs are attached when an instance is created, so a job across instances without them is "
    "held to the general NIC.",
    "list one subnetwork per GPU NIC in gpu_subnetworks (the hint says how many), or set multi_node: false on a pool "
    "whose jobs each fit one instance"};
const RuleInfo BURST005{
    "BURST005", Severity::Error, "GPU NIC subnetworks that do not fit the instance type",
    "A burst pool lists subnetworks for its GPU NICs (`gpu_subnetworks`) and may launch an instance type that needs "
    "more GPU NICs than the list has (a3-megagpu-8g with 4), or may launch types whose GPU NICs are of different "
    "kinds (gVNIC for GPUDirect-TCPX/TCPXO, MRDMA for GPUDirect RDMA: an A3 Mega with an A3 Ultra fallback). "
    "Position: the list.",
    "Google Cloud, 'Networking and GPU machines': A3 High has 4 GPU NICs, A3 Mega 8, A3 Ultra and A4 8 ConnectX-7 "
    "(MRDMA) NICs, each needing a subnetwork; Google Cloud VPC, 'RDMA network profile': a VPC network with the RDMA "
    "profile accepts only MRDMA NICs, and the gVNICs of the same VM must be on regular VPC networks. NICs are set "
    "when an instance is created: one made with fewer GPU NICs must be made again to gain them.",
    "list as many subnetworks as the largest GPU NIC count of the pool's machine types (docs/providers/gcp.md), and "
    "keep GPUDirect RDMA types (a3-ultragpu-8g, a4-highgpu-8g) and TCPX/TCPXO types (a3-highgpu-8g, a3-megagpu-8g) "
    "in separate pools"};
const RuleInfo IMG002{
    "IMG002", Severity::Error, "boot image the rendered user-data does not run on",
    "A burst pool's `image` is one the catalog knows (docs/catalog.md, cloud images) and either has no cloud-init to "
    "read the user-data, or boots another OS than the one the pool is rendered for (`os`, default ubuntu-22.04). "
    "Position: `image`.",
    "Everything Plinth installs on a burst node (the pinned driver, CUDA, the container toolkit, mounts, the probe) is "
    "in cloud-init user-data rendered for the pool's OS: Google's Debian images run their guest agent's startup "
    "scripts, not cloud-init, so the node boots without any of it; an Ubuntu document on Debian, or a 24.04 one on "
    "22.04, names packages and repositories that are not there.",
    "boot an image with cloud-init of the pool's OS (GCP: projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts; "
    "Azure: Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest), or set the pool's os: to the image's"};
const RuleInfo IMG003{
    "IMG003", Severity::Error, "boot image that brings its own NVIDIA driver",
    "A burst pool's `image` is one the catalog knows to come with an NVIDIA driver (Azure HPC images, Google's Deep "
    "Learning VM and Ubuntu accelerator images). Position: `image`.",
    "The render installs the stack's pinned driver from NVIDIA's packages; over a driver the image installed from the "
    "runfile, or from other packages, with Fabric Manager and DOCA already held at their versions, that leaves two "
    "drivers fighting over the kernel modules, or a package install that fails, and not the pinned stack.",
    "boot the plain OS image of the same release (Azure: Canonical's Ubuntu; GCP: ubuntu-os-cloud) and let the stack "
    "install the driver it pins"};
const RuleInfo GPU002{
    "GPU002", Severity::Error, "unknown cloud instance type",
    "A burst pool's `instance_type`, or a fallback type its provider setting lists (`instance_types`, "
    "`machine_types`), is not an instance type its `provider` declares (instance types belong to one provider), or "
    "names a GPU the catalog does not know. The hint names the closest types. Position: `instance_type` (or the "
    "fallback setting).",
    "Each provider declares the instance types it sells with their GPU model and count (the built-in clouds in "
    "providers/NAME/instance_types.yaml, from the provider's documentation; a plugin in its handshake), so the GPU "
    "rules can check a burst pool like a node pool.",
    "use a type the provider lists (plinth providers --json, or docs/providers/NAME.md), or add it to the provider"};

namespace {

/// The Ubuntu release an image reference names ("ubuntu-2204-lts", "22_04-lts-gen2", "noble"), or "".
std::string ubuntu_release(const std::string& image) {
  const std::string s = ascii_lower(image);
  for (const char* r : {"2204", "22_04", "22.04", "jammy"})
    if (s.find(r) != std::string::npos) return "ubuntu-22.04";
  for (const char* r : {"2404", "24_04", "24.04", "noble"})
    if (s.find(r) != std::string::npos) return "ubuntu-24.04";
  return "";
}

}  // namespace

/// IMG002 / IMG003: the boot image against what the render puts on it.
void Checker::check_image(const bp::BurstPool& p, const std::string& addr) {
  auto it = p.settings.find("image");
  if (it == p.settings.end() || !it->is_string()) return;
  const std::string image = it->get<std::string>();
  const catalog::CloudImage* ci = cat_.cloud_image(p.provider, image);
  if (!ci) return;
  const std::string os = bp::operating_system(p);
  const SourceLoc& at = p.origin.at("image");
  if (!ci->cloud_init) {
    add(IMG002, at, addr,
        "burst pool '" + p.name + "' boots " + image + ", a " + ci->os +
            " image without cloud-init, so none of the rendered user-data (driver, CUDA, mounts) would run",
        "boot an image with cloud-init of " + os + " (GCP: projects/ubuntu-os-cloud/global/images/family/ubuntu-" +
            (os == "ubuntu-24.04" ? std::string("2404") : std::string("2204")) + "-lts)");
  } else {
    const std::string release = ci->os == "ubuntu" ? ubuntu_release(image) : "";
    const bool other_family = os.rfind(ci->os + "-", 0) != 0;
    if (other_family || (!release.empty() && release != os))
      add(IMG002, at, addr,
          "burst pool '" + p.name + "' is rendered for " + os + " but boots " + image + " (" +
              (release.empty() ? ci->os : release) + ")",
          "set os: " + (release.empty() ? ci->os + "-..." : release) + " on the pool, or boot a " + os + " image");
  }
  if (ci->nvidia_driver)
    add(IMG003, at, addr,
        "burst pool '" + p.name + "' boots " + image + ", which comes with its own NVIDIA driver; the stack's pinned "
            "driver would be installed over it",
        "boot the plain OS image of the same release (Azure: Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:"
        "latest; GCP: projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts) and let the stack install its driver");
}

void Checker::check_burst_pool(const bp::BurstPool& p) {
  const std::string addr = burst_address(p);
  if (p.spot && !p.checkpointing)
    add(BURST001, p.origin.at("spot"), addr, "spot burst pool '" + p.name + "' has no checkpointing",
        "add checkpointing: {interval_minutes: 30, target: TIER}, or set spot: false");
  if (p.spot && p.checkpointing)
    if (const auto* t = find(tiers_, p.checkpointing->target); t && t->kind == "nvme")
      add(BURST002, p.origin.at("checkpointing.target"), addr,
          "spot burst pool '" + p.name + "' checkpoints to nvme tier '" + t->name +
              "', node-local storage that is lost when the instance is reclaimed",
          "checkpoint to an object, nfs or parallel-fs tier");
  check_mounts(p.storage, p.origin, bp::operating_system(p), addr, "burst pool '" + p.name + "'", nullptr);
  check_image(p, addr);
  const ProviderSchema* provider = schema_registry().provider(p.provider);
  if (!provider) return;  // the loader reported the unknown provider
  if (const SectionSpec* s = schema_registry().section("burst_pools", p.provider))
    for (const auto& [tie, why] : s->one_zone_settings) {
      if (!p.settings.is_object() || p.settings.value(tie, Json(false)) != Json(true)) continue;
      for (const auto& list : s->zone_settings) {
        const Json places = p.settings.value(list, Json::array());
        if (!places.is_array() || places.size() < 2) continue;
        std::vector<std::string> names;
        for (const auto& v : places) names.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        add(BURST003, p.origin.at(tie), burst_address(p),
            "burst pool '" + p.name + "' sets " + tie + ": true and lists " + std::to_string(places.size()) + " " +
                list + " (" + join(names, ", ") + "): its instances spread over them and fall back to them, but " + why,
            "list one of the " + list + " for a tightly coupled training pool, and several only for pools whose "
            "instances work on their own");
        break;
      }
    }
  std::vector<std::string> names;
  for (const auto& t : provider->instance_types) names.push_back(t.name);
  std::sort(names.begin(), names.end());  // ties in the hint break by name, not by the provider's order
  // The pool's type, then each fallback its provider takes from a setting:
  // any of them may be launched, so each is checked.
  const SectionSpec* spec = schema_registry().section("burst_pools", p.provider);
  const std::string fallbacks = spec ? spec->fallback_types : "";
  const std::vector<std::string> candidates = bp::candidate_types(p, fallbacks);
  const auto* stack = find(stacks_, p.stack);
  bool fabric_warned = false;  // BURST004 once per pool, for the first type that needs it
  bool nics_flagged = false;   // BURST005 likewise
  // The GPU NICs' subnetworks the pool lists (the provider's gpu_nic_setting).
  const std::string nic_setting = spec ? spec->gpu_nic_setting : "";
  size_t nic_entries = 0;
  if (!nic_setting.empty() && p.settings.is_object())
    if (const Json list = p.settings.value(nic_setting, Json::array()); list.is_array()) nic_entries = list.size();
  const InstanceType* first_nic_type = nullptr;  // the first type with GPU NICs, to catch a pool mixing kinds
  for (const auto& name : candidates) {
    const SourceLoc& at = p.origin.at(name == candidates.front() ? "instance_type" : fallbacks);
    const InstanceType* type = provider->instance_type(name);
    if (!type) {
      // Another provider's type (an Azure size in a GCP pool) says so rather than
      // suggesting a look-alike of this provider's.
      std::string owner;
      for (const ProviderSchema* other : schema_registry().providers())
        if (other != provider && other->instance_type(name)) owner = other->name;
      add(GPU002, at, addr, "unknown " + p.provider + " instance type '" + name + "' in burst pool '" + p.name + "'",
          owner.empty() ? closest(name, names) + " (the types are listed by plinth providers --json" +
                              (provider->docs.empty() ? std::string(")") : " and in " + provider->docs + ")")
                        : "'" + name + "' is an instance type of provider " + owner + ", not " + p.provider +
                              ": set provider: " + owner + " or use a " + p.provider + " type");
      continue;
    }
    const auto* gpu = cat_.gpu(type->gpu);
    if (!gpu) {
      add(GPU002, at, addr,
          p.provider + " instance type '" + name + "' of burst pool '" + p.name + "' names GPU '" + type->gpu +
              "', which the catalog does not know",
          "the provider must name a GPU of docs/catalog.md (name, alias or product name); " +
              did_you_mean(type->gpu, cat_.gpu_names()));
      continue;
    }
    const std::string who = "burst pool '" + p.name + "' (" + name + ")";
    const bool nic_fabric = !type->gpu_network.empty() && !render_sets_up_gpu_network(type->gpu_network);
    if (nic_fabric && nic_entries == 0 && !fabric_warned && p.max > 1 && p.multi_node) {
      fabric_warned = true;
      const std::string nics = std::to_string(type->gpu_nics);
      add(BURST004, at, addr,
          who + " may run " + std::to_string(p.max) + " instances, whose GPUs reach each other through " +
              type->gpu_network + " on " + nics + " extra NICs, but the pool lists no " +
              (nic_setting.empty() ? std::string("network for them") : nic_setting) +
              ": NCCL between instances runs over TCP on the instance's one NIC",
          (nic_setting.empty() ? std::string("run jobs that span instances on an AWS EFA or Azure ND pool")
                               : "list " + nics + " subnetworks in " + nic_setting +
                                     " (one per GPU NIC, docs/providers/gcp.md)") +
              ", or set multi_node: false if each job fits one instance");
    }
    if (nic_fabric && nic_entries > 0 && !nics_flagged) {
      auto rdma = [](const InstanceType* t) { return t->gpu_network == "gpudirect-rdma"; };  // MRDMA, else gVNIC
      if (!first_nic_type) first_nic_type = type;
      if (nic_entries < static_cast<size_t>(type->gpu_nics)) {
        nics_flagged = true;
        add(BURST005, p.origin.at(nic_setting), addr,
            who + " has " + std::to_string(type->gpu_nics) + " GPU NICs (" + type->gpu_network + "), but " +
                nic_setting + " lists " + std::to_string(nic_entries) + " subnetwork" + (nic_entries == 1 ? "" : "s"),
            "list " + std::to_string(type->gpu_nics) + " subnetworks in " + nic_setting + ", one per GPU NIC");
      } else if (rdma(first_nic_type) != rdma(type)) {
        nics_flagged = true;
        add(BURST005, p.origin.at(nic_setting), addr,
            "burst pool '" + p.name + "' may launch " + first_nic_type->name + " and " + name +
                ", whose GPU NICs are of different kinds (gVNIC for GPUDirect-TCPX/TCPXO, MRDMA for GPUDirect "
                "RDMA), but lists one set of " + nic_setting,
            "keep GPUDirect RDMA types and TCPX/TCPXO types in separate pools, each with its own " + nic_setting);
      }
    }
    if (stack) {
      check_cuda_supports(*gpu, *stack, CUDA004, at, addr, who);
      check_platform(*stack, *gpu, type->fabric_manager, stack->precision, at, addr, who);
    }
  }
}

}  // namespace plinth::validate
