#pragma once
// The machine types and accelerator types gcp-emulator offers, with the
// figures Google publishes for them (cloud.google.com/compute/docs/gpus and
// .../accelerator-optimized-machines), and the quota metrics they consume.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plinth::gcp_emulator {

struct AcceleratorType {
  std::string name;         ///< nvidia-h100-80gb
  std::string description;  ///< NVIDIA H100 80GB
  int max_per_instance = 0;
  std::vector<int> attachable_counts;  ///< counts an N1 VM may attach; empty: only built into its machine types
  std::string quota_metric;            ///< NVIDIA_H100_GPUS (spot VMs: PREEMPTIBLE_ + this)
};

struct MachineType {
  std::string name;  ///< a3-highgpu-8g
  int cpus = 0;
  int memory_mb = 0;
  std::string accelerator;  ///< built-in GPU type ("" for none)
  int accelerator_count = 0;
  bool accepts_accelerators = false;  ///< N1: guestAccelerators may attach T4/V100
  std::string cpu_platform;
  bool shared_cpu = false;
};

/// Every machine type the emulator knows, in name order.
const std::vector<MachineType>& machine_types();
const MachineType* find_machine_type(std::string_view name);

/// Every accelerator type the emulator knows, in name order.
const std::vector<AcceleratorType>& accelerator_types();
const AcceleratorType* find_accelerator_type(std::string_view name);

/// The region of a zone: us-central1-a -> us-central1.
std::string region_of(std::string_view zone);

}  // namespace plinth::gcp_emulator
