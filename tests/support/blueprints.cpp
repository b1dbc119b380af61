#include "tests/support/blueprints.h"

namespace plinth::test {

std::string blueprint_header(const std::string& name, const std::string& owner) {
  return "apiVersion: plinth/v1\n"
         "kind: Blueprint\n"
         "metadata: {name: " + name + (owner.empty() ? "" : ", owner: " + owner) + "}\n";
}

std::string train_stack(const std::string& driver) {
  return "stacks:\n"
         "  train:\n"
         "    driver: \"" + driver + "\"\n"
         "    cuda: \"12.4\"\n"
         "    cudnn: \"9.1.0\"\n"
         "    frameworks: {pytorch: \"2.3.1\"}\n"
         "    images: [\"" + std::string(kPytorchImage) + "\"]\n";
}

std::string train_stack_lean() {
  return "stacks:\n"
         "  train:\n"
         "    driver: \"" + std::string(kDriver) + "\"\n"
         "    cuda: \"12.4\"\n"
         "    images: [\"" + std::string(kPytorchImage) + "\"]\n";
}

std::string train_stack_flow() { return "stacks:\n  train: {driver: \"" + std::string(kDriver) + "\", cuda: \"12.4\"}\n"; }

std::string bmc_endpoints(const std::string& base) { return "\"" + base + "/bmc/{index}\""; }

std::string bmc_block(const std::string& endpoints, const std::string& ca, const std::string& credentials) {
  return "    bmc:\n"
         "      endpoints: " + endpoints + "\n"
         "      credentials: " + credentials + "\n"
         "      ca_bundle: " + ca + "\n";
}

std::string baremetal_pool(const BaremetalPool& p) {
  return "  - name: " + p.name + "\n"
         "    provider: baremetal\n"
         "    count: " + std::to_string(p.count) + "\n"
         "    role: " + p.role + "\n"
         "    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 2048}\n"
         "    stack: train\n" +
         (p.boot ? "    boot: {method: pxe, image: \"http://pxe.example/ubuntu-24.04/\"}\n" : "") + p.extra +
         bmc_block(p.endpoints, p.ca, p.credentials) + (p.mig ? "    mig: {profile: none}\n" : "");
}

std::string repinned(std::string blueprint, const std::string& driver) {
  const std::string pin = "driver: \"" + std::string(kDriver) + "\"";
  const auto at = blueprint.find(pin);
  if (at == std::string::npos) return "";
  return blueprint.replace(at, pin.size(), "driver: \"" + driver + "\"");
}

std::string baremetal_blueprint(const std::string& name, const std::string& pools) {
  return blueprint_header(name) + train_stack() + "node_pools:\n" + pools;
}

std::string l40s_blueprint(const std::string& pool, const std::string& count, const std::string& bmc) {
  return blueprint_header("pools", "") + train_stack_flow() +
         "node_pools:\n"
         "  - name: " + pool + "\n"
         "    count: " + count + "\n"
         "    role: inference\n"
         "    hardware: {gpu: L40S, gpus_per_node: 4}\n"
         "    stack: train\n" + bmc;
}

std::string logical_blueprint(int tiers, const std::string& extra) {
  std::string s = blueprint_header("logical", "platform") + train_stack_flow() + "storage:\n  tiers:\n";
  for (int i = 0; i < tiers; ++i)
    s += "    - {name: t" + std::to_string(i) +
         ", kind: nvme, capacity_tb: 1, classification: internal, encryption: {at_rest: aes-256-xts}}\n";
  return s + extra;
}

namespace {

/// `desired` instances of `type` from `provider` in `region`, booting `image`.
BurstPool cloud_pool(const char* provider, const char* region, const char* type, int desired, const char* image,
                     std::string extra, bool spot) {
  return {.provider = provider,
          .region = region,
          .instance_type = type,
          .desired = desired,
          .spot = spot,
          .image = image,
          .extra = std::move(extra)};
}

}  // namespace

BurstPool aws_pool(int desired, std::string extra, bool spot) {
  return cloud_pool("aws", "us-east-1", "p5.48xlarge", desired, kAwsImage, std::move(extra), spot);
}

BurstPool gcp_pool(int desired, std::string extra, bool spot) {
  BurstPool p = cloud_pool("gcp", "us-central1", "a3-highgpu-8g", desired, kGcpImage, std::move(extra), spot);
  p.max = 2000;
  return p;
}

BurstPool azure_pool(int desired, std::string extra) {
  BurstPool p = cloud_pool("azure", "eastus", "Standard_ND96isr_H100_v5", desired,
                           "\"Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest\"", std::move(extra), true);
  p.resource_group = "rg-burst";
  p.ssh_public_key = "\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOPSKEYOPSKEYOPSKEYOPSKEYOPSKEYOPSKEY ops\"";
  return p;
}

std::string burst_pool(const BurstPool& p) {
  return "  - name: " + p.name + "\n"
         "    provider: " + p.provider + "\n"
         "    region: " + p.region + "\n" +
         (p.resource_group.empty() ? "" : "    resource_group: " + p.resource_group + "\n") +
         "    instance_type: " + p.instance_type + "\n" +
         (p.zones.empty() ? "" : "    zones: " + p.zones + "\n") +
         "    desired: " + std::to_string(p.desired) + "\n"
         "    max: " + std::to_string(p.max) + "\n"
         "    spot: " + (p.spot ? "true" : "false") + "\n"
         "    stack: train\n"
         "    checkpointing: {interval_minutes: 30, target: ckpt}\n"
         "    storage: [ckpt]\n"
         "    image: " + p.image + "\n" +
         (p.ssh_public_key.empty() ? "" : "    ssh_public_key: " + p.ssh_public_key + "\n") + p.extra;
}

std::string burst_blueprint(const std::vector<BurstPool>& pools, const std::string& driver, const std::string& name) {
  const std::string provider = pools.empty() ? "aws" : pools.front().provider;
  const std::string backend = provider == "aws" ? "s3" : provider == "gcp" ? "gcs" : "azure-blob";
  const std::string region = pools.empty() ? "us-east-1" : pools.front().region;
  std::string out = blueprint_header(name.empty() ? "e2e-" + provider : name) + train_stack(driver) +
                    "storage:\n"
                    "  tiers:\n"
                    "    - {name: ckpt, kind: object, backend: " + backend + ", region: " + region +
                    ", capacity_tb: 10, classification: internal,\n"
                    "       encryption: {at_rest: aes-256-gcm}}\n"
                    "burst_pools:\n";
  for (const auto& p : pools) out += burst_pool(p);
  return out;
}

}  // namespace plinth::test
