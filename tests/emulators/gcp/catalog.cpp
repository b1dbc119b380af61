#include "tests/emulators/gcp/catalog.h"

#include <algorithm>

namespace plinth::gcp_emulator {
namespace {

std::vector<MachineType> build_machine_types() {
  std::vector<MachineType> v;
  auto gpu = [&](std::string name, int cpus, int memory_gb, std::string acc, int count, std::string platform) {
    v.push_back({std::move(name), cpus, memory_gb * 1024, std::move(acc), count, false, std::move(platform), false});
  };
  // A3: H100 80GB (High and Mega), H200 141GB (Ultra).
  gpu("a3-highgpu-1g", 26, 234, "nvidia-h100-80gb", 1, "Intel Sapphire Rapids");
  gpu("a3-highgpu-2g", 52, 468, "nvidia-h100-80gb", 2, "Intel Sapphire Rapids");
  gpu("a3-highgpu-4g", 104, 936, "nvidia-h100-80gb", 4, "Intel Sapphire Rapids");
  gpu("a3-highgpu-8g", 208, 1872, "nvidia-h100-80gb", 8, "Intel Sapphire Rapids");
  gpu("a3-megagpu-8g", 208, 1872, "nvidia-h100-mega-80gb", 8, "Intel Sapphire Rapids");
  gpu("a3-ultragpu-8g", 224, 2952, "nvidia-h200-141gb", 8, "Intel Emerald Rapids");
  // A4: B200.
  gpu("a4-highgpu-8g", 224, 3968, "nvidia-b200", 8, "Intel Emerald Rapids");
  // A2 Standard (A100 40GB) and Ultra (A100 80GB).
  gpu("a2-highgpu-1g", 12, 85, "nvidia-tesla-a100", 1, "Intel Cascade Lake");
  gpu("a2-highgpu-2g", 24, 170, "nvidia-tesla-a100", 2, "Intel Cascade Lake");
  gpu("a2-highgpu-4g", 48, 340, "nvidia-tesla-a100", 4, "Intel Cascade Lake");
  gpu("a2-highgpu-8g", 96, 680, "nvidia-tesla-a100", 8, "Intel Cascade Lake");
  gpu("a2-megagpu-16g", 96, 1360, "nvidia-tesla-a100", 16, "Intel Cascade Lake");
  gpu("a2-ultragpu-1g", 12, 170, "nvidia-a100-80gb", 1, "Intel Cascade Lake");
  gpu("a2-ultragpu-2g", 24, 340, "nvidia-a100-80gb", 2, "Intel Cascade Lake");
  gpu("a2-ultragpu-4g", 48, 680, "nvidia-a100-80gb", 4, "Intel Cascade Lake");
  gpu("a2-ultragpu-8g", 96, 1360, "nvidia-a100-80gb", 8, "Intel Cascade Lake");
  // G2: L4.
  gpu("g2-standard-4", 4, 16, "nvidia-l4", 1, "Intel Cascade Lake");
  gpu("g2-standard-8", 8, 32, "nvidia-l4", 1, "Intel Cascade Lake");
  gpu("g2-standard-12", 12, 48, "nvidia-l4", 1, "Intel Cascade Lake");
  gpu("g2-standard-16", 16, 64, "nvidia-l4", 1, "Intel Cascade Lake");
  gpu("g2-standard-24", 24, 96, "nvidia-l4", 2, "Intel Cascade Lake");
  gpu("g2-standard-32", 32, 128, "nvidia-l4", 1, "Intel Cascade Lake");
  gpu("g2-standard-48", 48, 192, "nvidia-l4", 4, "Intel Cascade Lake");
  gpu("g2-standard-96", 96, 384, "nvidia-l4", 8, "Intel Cascade Lake");
  // N1 takes attached T4/V100 GPUs; E2 takes none.
  for (int n : {1, 2, 4, 8, 16, 32, 64, 96})
    v.push_back({"n1-standard-" + std::to_string(n), n, n * 3840, "", 0, true, "Intel Skylake", false});
  v.push_back({"e2-medium", 2, 4096, "", 0, false, "AMD Rome", true});
  v.push_back({"e2-standard-2", 2, 8192, "", 0, false, "AMD Rome", false});
  v.push_back({"e2-standard-4", 4, 16384, "", 0, false, "AMD Rome", false});
  std::sort(v.begin(), v.end(), [](const MachineType& a, const MachineType& b) { return a.name < b.name; });
  return v;
}

std::vector<AcceleratorType> build_accelerator_types() {
  std::vector<AcceleratorType> v = {
      {"nvidia-a100-80gb", "NVIDIA A100 80GB", 8, {}, "NVIDIA_A100_80GB_GPUS"},
      {"nvidia-b200", "NVIDIA B200", 8, {}, "NVIDIA_B200_GPUS"},
      {"nvidia-h100-80gb", "NVIDIA H100 80GB", 8, {}, "NVIDIA_H100_GPUS"},
      {"nvidia-h100-mega-80gb", "NVIDIA H100 80GB MEGA", 8, {}, "NVIDIA_H100_MEGA_GPUS"},
      {"nvidia-h200-141gb", "NVIDIA H200 141GB", 8, {}, "NVIDIA_H200_GPUS"},
      {"nvidia-l4", "NVIDIA L4", 8, {}, "NVIDIA_L4_GPUS"},
      {"nvidia-tesla-a100", "NVIDIA A100 40GB", 16, {}, "NVIDIA_A100_GPUS"},
      {"nvidia-tesla-t4", "NVIDIA T4", 4, {1, 2, 4}, "NVIDIA_T4_GPUS"},
      {"nvidia-tesla-v100", "NVIDIA V100", 8, {1, 2, 4, 8}, "NVIDIA_V100_GPUS"},
  };
  return v;
}

}  // namespace

const std::vector<MachineType>& machine_types() {
  static const std::vector<MachineType> v = build_machine_types();
  return v;
}

const MachineType* find_machine_type(std::string_view name) {
  for (const auto& m : machine_types())
    if (m.name == name) return &m;
  return nullptr;
}

const std::vector<AcceleratorType>& accelerator_types() {
  static const std::vector<AcceleratorType> v = build_accelerator_types();
  return v;
}

const AcceleratorType* find_accelerator_type(std::string_view name) {
  for (const auto& a : accelerator_types())
    if (a.name == name) return &a;
  return nullptr;
}

std::string region_of(std::string_view zone) {
  auto dash = zone.rfind('-');
  return std::string(dash == std::string_view::npos ? zone : zone.substr(0, dash));
}

}  // namespace plinth::gcp_emulator
