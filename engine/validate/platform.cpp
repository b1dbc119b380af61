// What runs on a GPU: the rules on a stack's driver, CUDA toolkit, kernel
// modules, precision and Fabric Manager against the GPU a node pool or a
// burst pool's instance type has.
#include <algorithm>

#include "engine/core/strings.h"
#include "engine/validate/checker.h"
#include "engine/validate/hints.h"

namespace plinth::validate {

const RuleInfo CUDA003{
    "CUDA003", Severity::Error, "node pool GPU needs a newer CUDA than its stack pins",
    "The pool's GPU architecture needs a newer toolkit than the stack's `cuda` (Volta 9.0, Turing 10.0, Ampere 11.0 / "
    "11.1 for compute capability 8.6, Ada and Hopper 11.8, Blackwell 12.8, Blackwell Ultra 12.9). Position: the pool's "
    "`hardware.gpu`.",
    "CUDA C++ Programming Guide, compute capabilities: an older toolkit cannot build or run code for the GPU "
    "(`min_cuda` in gpus.yaml).",
    "pin at least that CUDA (and its driver) in the stack"};
const RuleInfo CUDA004{
    "CUDA004", Severity::Error, "burst pool instance type's GPU needs a newer CUDA than its stack pins",
    "As CUDA003, for the GPU of a burst pool's `instance_type` (as its provider declares it). Position: `instance_type`.",
    "Same fact as CUDA003, for the GPU of the cloud instance type.",
    "pin a newer CUDA in the stack, or choose an instance type whose GPU the stack supports"};
const RuleInfo CUDA006{
    "CUDA006", Severity::Error, "CUDA release that dropped the GPU's architecture",
    "A pool's GPU architecture is no longer supported by the CUDA release its stack installs (CUDA 13.0 dropped Maxwell, "
    "Pascal and Volta: V100). Position: the pool's `hardware.gpu` (or `instance_type`).",
    "CUDA Toolkit 13.0 release notes: offline compilation and library support for compute capability below 7.5 is "
    "removed (architectures in gpus.yaml, `cuda_dropped_in`).",
    "pin a CUDA 12.x release for this pool's stack, or move it to newer GPUs"};
const RuleInfo DRV001{
    "DRV001", Severity::Error, "driver branch newer than the last one supporting the GPU",
    "A pool's stack pins a driver from a branch after the last one that supports its GPU's architecture (R580 for "
    "Maxwell, Pascal and Volta). Position: the stack's `driver`, for that pool.",
    "NVIDIA Data Center Drivers, Supported Drivers and CUDA Toolkit Versions, CUDA and Architecture Matrix "
    "(gpus.yaml `last_driver_branch`).",
    "pin a driver of the last supported branch (the hint names it), or move the pool to newer GPUs"};
const RuleInfo DRV002{
    "DRV002", Severity::Error, "driver older than the GPU's minimum",
    "A pool's stack pins a driver older than its GPU's minimum: the model's own `min_driver` where NVIDIA names one "
    "(HGX B200: 570.133.20), else the driver of the first toolkit that supports its compute capability (`min_cuda`; "
    "H100: CUDA 11.8, 520.61.05). This holds even when forward compatibility lets the toolkit run. Position: the "
    "stack's `driver`, for that pool.",
    "A kernel driver older than the GPU does not recognise it (CUDA release notes, driver table; CUDA Compatibility "
    "guide: forward compatibility does not add support for new GPUs to an old kernel driver). NVIDIA GPU Operator "
    "platform support: 'HGX B200 requires a driver container version of 570.133.20 or later' (gpus.yaml `min_driver`).",
    "pin the driver named in the hint or newer"};
const RuleInfo DRV003{
    "DRV003", Severity::Error, "NVSwitch node with a driver that has no matching Fabric Manager",
    "A node pool on an NVSwitch baseboard (e.g. 8 x H100-80GB; catalog `nvswitch_min_gpus`) or a burst pool whose "
    "instance type runs Fabric Manager pins a driver for which NVIDIA publishes no Fabric Manager of exactly that "
    "version. Reasoned by branch: a release listed in software.yaml `fabric_manager` has one; so does a release "
    "(three numbers) of a data-center branch (`driver_branches`: R470 to R620) newer than the newest release the "
    "catalog lists for it, since NVIDIA ships a Fabric Manager with every data-center release; anything else (a "
    "desktop build of the branch such as 550.107.02, a branch without data-center releases) has none. Position: the "
    "stack's `driver`, for that pool.",
    "NVIDIA Fabric Manager User Guide: Fabric Manager must run on NVSwitch systems and aborts unless its version "
    "equals the loaded driver's; without it CUDA fails with error 802, 'system not yet initialized'. NVIDIA "
    "data-center driver release notes and per-release manifests list a Fabric Manager of the release's version.",
    "pin a data-center driver release with a Fabric Manager (the hint names the newest of the branch), or add a "
    "release you have seen to software.yaml"};
const RuleInfo DRV004{
    "DRV004", Severity::Error, "kernel module flavour the GPU cannot run",
    "A stack's `kernel_modules` is a flavour a pool's GPU does not support: `open` on Maxwell, Pascal or Volta, "
    "`proprietary` on Grace Hopper and Blackwell. Position: `kernel_modules`, for that pool.",
    "NVIDIA Driver Installation Guide, 'Kernel Modules': the open modules need the GSP of Turing and newer; Grace Hopper "
    "and Blackwell GPUs run only the open modules.",
    "set kernel_modules to the flavour the hint names, or leave it out for NVIDIA's default"};
const RuleInfo GPU010{
    "GPU010", Severity::Error, "bfloat16 on a GPU without BF16",
    "A stack (`precision: bf16`) or a pool's `largest_model.precision: bf16` runs on a Volta or Turing GPU (V100, T4). "
    "Position: the pool's `hardware.gpu` (or `instance_type`).",
    "BF16 Tensor Core arithmetic arrived with Ampere (NVIDIA Ampere architecture whitepaper); `__nv_bfloat16` math "
    "needs compute capability 8.0 (CUDA Math API). Frameworks fall back to slow emulation or fail.",
    "use fp16 (with loss scaling) on these GPUs, or Ampere or newer GPUs"};

namespace {

std::string branch_of(const std::string& driver) { return driver.substr(0, driver.find('.')); }

bool numeric(const std::string& v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

}  // namespace

/// Driver, CUDA, kernel module, precision and Fabric Manager facts of `stack` on `gpus` x `gpu`.
void Checker::check_platform(const bp::Stack& s, const catalog::GpuModel& gpu, bool fabric_manager,
                             const std::string& precision, const SourceLoc& gpu_at, const std::string& addr,
                             const std::string& who) {
  const catalog::Architecture* arch = cat_.architecture(gpu.architecture);
  auto need = cuda_need(s);
  const std::string gpu_text = gpu.name + " (" + gpu.architecture + ")";
  if (arch && !arch->cuda_dropped_in.empty() && need && compare_versions(need->installed, arch->cuda_dropped_in) >= 0)
    add(CUDA006, gpu_at, addr,
        who + " runs " + gpu_text + ", which CUDA " + arch->cuda_dropped_in + " and later no longer support, but stack '" +
            s.name + "' installs CUDA " + need->installed,
        "pin a CUDA release before " + arch->cuda_dropped_in + " in the stack this pool uses, or move the pool to newer GPUs");
  if (numeric(s.driver)) {
    const std::string branch = branch_of(s.driver);
    if (arch && !arch->last_driver_branch.empty() && compare_versions(branch, arch->last_driver_branch) > 0)
      add(DRV001, s.origin.at("driver"), addr,
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
      add(DRV002, s.origin.at("driver"), addr,
          who + " runs " + gpu.name + ", which needs driver " + min_driver + " or newer" + why + ", but stack '" + s.name +
              "' pins " + s.driver,
          "pin driver \"" + min_driver + "\" or newer");
    if (fabric_manager && cat_.fabric_manager_for(s.driver) == catalog::FabricManager::None) {
      const catalog::DriverBranch* db = cat_.driver_branch(branch);
      std::string hint;
      if (db && !db->latest.empty())
        hint = "pin a data-center release of R" + branch + " with a Fabric Manager: the nearest listed are " +
               nearby_versions(s.driver, cat_.fabric_manager_drivers()) + ", the newest " + db->latest + " (any later R" +
               branch + " data-center release has one too)";
      else
        hint = "pin a data-center driver of a supported branch, e.g. " +
               nearby_versions(s.driver, cat_.fabric_manager_drivers());
      add(DRV003, s.origin.at("driver"), addr,
          who + " runs " + gpu.name + " on NVSwitch, which needs NVIDIA Fabric Manager of exactly the driver's version, "
              "but no Fabric Manager " + s.driver + " is published (stack '" + s.name + "'" +
              (db ? ": not a data-center release of R" + branch + " the catalog knows)"
                  : ": R" + branch + " has no data-center releases)"),
          hint + " (docs/catalog.md lists them)");
    }
  }
  const std::string flavours = cat_.kernel_modules(gpu);
  if (!s.kernel_modules.empty() && flavours != "both" && flavours != s.kernel_modules)
    add(DRV004, s.origin.at("kernel_modules"), addr,
        who + " runs " + gpu_text + ", which runs only the " + flavours + " NVIDIA kernel modules, but stack '" + s.name +
            "' sets kernel_modules: " + s.kernel_modules,
        "set kernel_modules: " + flavours + ", or leave it out for NVIDIA's default");
  if (s.cuda_compat && need && numeric(s.driver) && compare_versions(s.driver, need->driver) < 0 &&
      cat_.forward_compat(need->major, s.driver) && !gpu.datacenter)
    add(CUDA007, gpu_at, addr,
        who + " runs " + gpu.name + ", which is not a data-center GPU, but stack '" + s.name +
            "' relies on CUDA forward compatibility (cuda-compat) to run CUDA " + need->installed + " on driver " + s.driver,
        "pin driver \"" + need->driver + "\" or newer for this pool; forward compatibility works on data-center GPUs only");
  if (precision == "bf16" && arch && !arch->bf16)
    add(GPU010, gpu_at, addr,
        who + " declares bf16 but runs " + gpu_text + ", which has no BF16 arithmetic",
        "use fp16 with loss scaling on " + gpu.architecture + " GPUs, or Ampere or newer GPUs for bf16");
}

void Checker::check_cuda_supports(const catalog::GpuModel& gpu, const bp::Stack& stack, const RuleInfo& rule,
                                  const SourceLoc& at, const std::string& addr, const std::string& who) {
  auto cuda = cat_.resolve_cuda(stack.cuda);
  if (!cuda || compare_versions(*cuda, gpu.min_cuda) >= 0) return;
  add(rule, at, addr,
      who + " runs " + gpu.name + " (" + gpu.architecture + ", compute capability " + gpu.compute_capability +
          "), which needs CUDA " + gpu.min_cuda + " or newer, but stack '" + stack.name + "' pins CUDA " + stack.cuda,
      "pin CUDA " + gpu.min_cuda + " or newer (with its minimum driver) in stack '" + stack.name + "'");
}

}  // namespace plinth::validate
