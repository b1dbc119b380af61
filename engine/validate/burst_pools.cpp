// The rules on burst pools: spot capacity and its checkpoints, and the
// cloud instance type (its GPU is checked by platform.cpp).
#include "engine/validate/checker.h"
#include "engine/validate/hints.h"

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
const RuleInfo GPU002{
    "GPU002", Severity::Error, "unknown cloud instance type",
    "A burst pool's `instance_type` is not in the catalog for its `provider` (instance types belong to one provider). "
    "The hint names the closest types. Position: `instance_type`.",
    "The instance type's GPU model and count come from engine/catalog/data/instance_types.yaml (provider "
    "documentation).",
    "use a type from catalog.md, or add it to instance_types.yaml"};

void Checker::check_burst_pool(const bp::BurstPool& p) {
  const std::string addr = burst_address(p);
  const std::string who = "burst pool '" + p.name + "' (" + p.instance_type + ")";
  if (p.spot && !p.checkpointing)
    add(BURST001, p.origin.at("spot"), addr, "spot burst pool '" + p.name + "' has no checkpointing",
        "add checkpointing: {interval_minutes: 30, target: TIER}, or set spot: false");
  if (p.spot && p.checkpointing)
    if (const auto* t = find(tiers_, p.checkpointing->target); t && t->kind == "nvme")
      add(BURST002, p.origin.at("checkpointing.target"), addr,
          "spot burst pool '" + p.name + "' checkpoints to nvme tier '" + t->name +
              "', node-local storage that is lost when the instance is reclaimed",
          "checkpoint to an object, nfs or parallel-fs tier");
  check_mounts(p.storage, p.origin, bp::operating_system(p), addr, "burst pool '" + p.name + "'");
  const auto* type = cat_.instance_type(p.provider, p.instance_type);
  if (!type) {
    add(GPU002, p.origin.at("instance_type"), addr,
        "unknown " + p.provider + " instance type '" + p.instance_type + "' in burst pool '" + p.name + "'",
        closest(p.instance_type, cat_.instance_type_names(p.provider)) + " (the types are listed in docs/catalog.md)");
    return;
  }
  const auto* stack = find(stacks_, p.stack);
  const auto* gpu = cat_.gpu(type->gpu);
  if (stack && gpu) {
    check_cuda_supports(*gpu, *stack, CUDA004, p.origin.at("instance_type"), addr, who);
    check_platform(*stack, *gpu, type->fabric_manager, stack->precision, p.origin.at("instance_type"), addr, who);
  }
}

}  // namespace plinth::validate
