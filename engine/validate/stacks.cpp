// The rules on stacks: the driver against the CUDA toolkit it installs
// (minor-version and forward compatibility), known CUDA versions, images
// pinned by digest and container toolkit advisories.
#include <algorithm>

#include "engine/core/strings.h"
#include "engine/validate/checker.h"
#include "engine/validate/hints.h"

namespace plinth::validate {

const RuleInfo CUDA001{
    "CUDA001", Severity::Error, "driver too old for the pinned CUDA toolkit, even with compatibility",
    "A stack's `driver` is older than the Linux x86_64 driver NVIDIA lists for the toolkit that will be installed "
    "(`cuda: \"12.4\"` installs the newest 12.4.x, 12.4.1, because cuda-toolkit-12-4's components resolve to it) and "
    "also older than the minor-version compatibility minimum of its CUDA major (11.x: 450.80.02, 12.x: R525, 13.x: "
    "R580), and no forward compatibility applies. Versions compare numerically component by component. Position: "
    "`driver`.",
    "NVIDIA CUDA Toolkit release notes, tables 'CUDA Toolkit and Corresponding Driver Versions' and 'Minimum Required "
    "Driver Version for CUDA Minor Version Compatibility' (engine/catalog/data/cuda.yaml); the CUDA Compatibility "
    "guide.",
    "pin the driver named in the hint or newer, or an older CUDA, or (data-center GPUs) `cuda_compat: true` on a "
    "forward-compatible branch"};
const RuleInfo CUDA002{
    "CUDA002", Severity::Error, "unknown CUDA toolkit version",
    "A stack's `cuda` is not in the catalog (never released, a typo, or newer than the catalog). The hint names the "
    "nearest known versions. Position: `cuda`.",
    "Only versions in the CUDA release notes' driver table (engine/catalog/data/cuda.yaml) can be checked and "
    "installed.",
    "use a released version; if NVIDIA released a newer toolkit, add its row to the catalog"};
const RuleInfo CUDA005{
    "CUDA005", Severity::Warning, "driver runs the toolkit only through CUDA minor-version compatibility",
    "A stack's `driver` is older than the toolkit's own driver but not older than the minor-version compatibility "
    "minimum of its CUDA major (e.g. CUDA 12.6 on a R550 driver). Position: `driver`.",
    "CUDA Compatibility guide, 'Minor Version Compatibility': applications run, but PTX that the older driver's JIT "
    "cannot compile (kernels shipped as PTX for a newer toolkit) fails to load, and APIs newer than the driver return "
    "cudaErrorCallRequiresNewerDriver.",
    "pin the toolkit's own driver (named in the hint) or newer"};
const RuleInfo CUDA007{
    "CUDA007", Severity::Error, "CUDA forward compatibility asked for where it does not work",
    "A stack sets `cuda_compat: true` but its driver is not on a branch that runs its CUDA major through the "
    "cuda-compat package (CUDA 12.x: R470 >= 470.57, R525 >= 525.85, R535 >= 535.86, R550 >= 550.54), or a pool that "
    "needs it runs a GPU that is not a data-center product. Position: `cuda_compat` (or the pool's `hardware.gpu`).",
    "CUDA Compatibility guide, 'Forward Compatibility' (data-center GPUs only) and the NGC container release notes' "
    "driver requirements list the supported branches (cuda.yaml `forward_compat`).",
    "pin a listed branch and release, or the toolkit's own driver, or drop cuda_compat"};
const RuleInfo DRV005{
    "DRV005", Severity::Error, "container toolkit release with known container escapes",
    "A stack pins a `container_toolkit` release older than the fix of a published NVIDIA Container Toolkit advisory "
    "(software.yaml). Position: `container_toolkit`.",
    "NVIDIA security bulletins: CVE-2024-0132/0133 (fixed in 1.16.2), CVE-2025-23359 (1.17.4), CVE-2025-23266 and "
    "CVE-2025-23267 (1.17.8) let a crafted image escape to the host or tamper with it.",
    "pin the fixed release the hint names or newer, or leave container_toolkit out for Plinth's default"};
const RuleInfo DRV008{
    "DRV008", Severity::Warning, "driver branch past NVIDIA's end of support",
    "A stack's `driver` is on a data-center branch whose end of life, as NVIDIA states it (software.yaml "
    "`driver_branches`), is before the catalog's month (its version, 2026.12.x: December 2026), or on a branch below "
    "R580 that NVIDIA does not list at all. The catalog's month, not the clock, is the reference, so one Plinth gives "
    "one verdict on a blueprint in every run; a newer catalog moves it. Position: `driver`.",
    "NVIDIA Data Center Drivers, 'Supported Drivers and CUDA Toolkit Versions' (v580, R615 and R620 editions): "
    "branches past end of life get no more security or bug-fix releases; the v580 edition calls every branch it does "
    "not list (R575, R565, R560, R550, R525, ...) end of life.",
    "pin a release of a supported branch (the hint names them; docs/catalog.md lists their releases), checking "
    "that the GPUs and the CUDA toolkit still run on it"};
const RuleInfo IMG001{
    "IMG001", Severity::Warning, "container image not pinned by digest",
    "A stack image is not `name@sha256:<64 lower-case hex>`. Position: that entry of `images`.",
    "Tags move; only a digest names exactly one image (OCI image specification), which reproducible and audited "
    "clusters need.",
    "reference the image by digest (`docker buildx imagetools inspect NAME` prints it)"};

namespace {

/// "2026-12" from a catalog version "2026.12.6"; "" when it is not one.
std::string catalog_month(const std::string& version) {
  if (version.size() < 7 || version[4] != '.') return "";
  return version.substr(0, 4) + "-" + version.substr(5, 2);
}

bool pinned_by_digest(const std::string& image) {
  size_t at = image.rfind("@sha256:");
  if (at == std::string::npos || at == 0) return false;
  std::string hex = image.substr(at + 8);
  return hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

/// "CUDA 12.4.1", or "CUDA 12.4 (cuda-toolkit-12-4 installs the newest release, 12.4.1)".
std::string installs(const bp::Stack& s, const CudaNeed& n) {
  if (n.installed == s.cuda) return "CUDA " + s.cuda;
  const std::string minor = n.installed.substr(0, n.installed.rfind('.'));
  std::string package = "cuda-toolkit-" + minor;
  std::replace(package.begin(), package.end(), '.', '-');
  return "CUDA " + s.cuda + " (" + package + " installs the newest release, " + n.installed + ")";
}

}  // namespace

std::optional<CudaNeed> Checker::cuda_need(const bp::Stack& s) const {
  auto installed = cat_.installed_cuda(s.cuda);
  if (!installed) return std::nullopt;
  CudaNeed n{*installed, *cat_.min_driver_for_cuda(*installed), std::stoi(installed->substr(0, installed->find('.')))};
  return n;
}

std::string Checker::forward_branches(int major) const {
  std::vector<std::string> parts;
  for (const auto& f : cat_.forward_compat_rows())
    if (f.cuda_major == major) parts.push_back("R" + f.branch + " >= " + f.min_driver);
  return join(parts, ", ");  // "" when no branch runs it forward
}

void Checker::check_stack(const bp::Stack& s) {
  if (auto need = cuda_need(s)) {
    if (compare_versions(s.driver, need->driver) < 0) {
      const catalog::ForwardCompat* fwd = s.cuda_compat ? cat_.forward_compat(need->major, s.driver) : nullptr;
      auto compat = cat_.minor_compat_min_driver(need->major);
      if (s.cuda_compat && !fwd)
        add(CUDA007, s.origin.at("cuda_compat"), "",
            "stack '" + s.name + "' asks for CUDA forward compatibility, but driver " + s.driver + " is not on a branch that "
            "runs CUDA " + std::to_string(need->major) + ".x through cuda-compat",
            forward_branches(need->major).empty()
                ? "no driver branch runs CUDA " + std::to_string(need->major) +
                      ".x through cuda-compat (docs/catalog.md lists none); pin driver \"" + need->driver +
                      "\" or newer, or remove cuda_compat"
                : "forward compatibility for CUDA " + std::to_string(need->major) + ".x runs on " +
                      forward_branches(need->major) + "; pin one of them, or driver \"" + need->driver + "\" or newer");
      if (fwd) {
        // Forward compatibility covers it; pools check that their GPUs are data-center products.
      } else if (compat && compare_versions(s.driver, *compat) >= 0) {
        // With cuda_compat set, CUDA007 above already names the toolkit's driver.
        if (!s.cuda_compat) {
          add(CUDA005, s.origin.at("driver"), "",
              "driver " + s.driver + " in stack '" + s.name + "' runs " + installs(s, *need) + " only through CUDA minor-version "
              "compatibility (" + std::to_string(need->major) + ".x on >= " + *compat + "): PTX built for the newer toolkit "
              "fails to JIT-compile and APIs newer than the driver return cudaErrorCallRequiresNewerDriver",
              "pin driver \"" + need->driver + "\" or newer, the driver CUDA " + need->installed + " ships with");
        }
      } else {
        add(CUDA001, s.origin.at("driver"), "",
            "driver " + s.driver + " in stack '" + s.name + "' is older than " + need->driver + ", the minimum for " +
                installs(s, *need) +
                (compat ? ", and older than " + *compat + ", the minimum for CUDA " + std::to_string(need->major) +
                              ".x through minor-version compatibility"
                        : std::string()),
            "pin driver \"" + need->driver + "\" or newer, or an older CUDA" +
                (s.cuda_compat || forward_branches(need->major).empty()
                     ? std::string()
                     : "; on data-center GPUs, cuda_compat: true with " + forward_branches(need->major)));
      }
    }
  } else {
    add(CUDA002, s.origin.at("cuda"), "", "unknown CUDA version '" + s.cuda + "' in stack '" + s.name + "'",
        "use a released toolkit from docs/catalog.md, e.g. " + nearby_versions(s.cuda, cat_.cuda_versions()));
  }
  check_driver_support(s);
  for (size_t i = 0; i < s.images.size(); ++i) {
    if (pinned_by_digest(s.images[i])) continue;
    add(IMG001, s.origin.at("images." + std::to_string(i)), "",
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
      add(DRV005, s.origin.at("container_toolkit"), "",
          "stack '" + s.name + "' pins NVIDIA Container Toolkit " + s.container_toolkit + ", affected by " + join(ids, "; "),
          "pin container_toolkit \"" + fixed + "\" or newer, or leave it out for Plinth's default (" +
              cat_.container_toolkit_default() + ")");
    }
  }
}

void Checker::check_driver_support(const bp::Stack& s) {
  const std::string month = catalog_month(cat_.version());
  const std::string branch = s.driver.substr(0, s.driver.find('.'));
  if (month.empty() || branch.empty() ||
      !std::all_of(branch.begin(), branch.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return;
  const catalog::DriverBranch* row = cat_.driver_branch(branch);
  std::string why;
  if (row && !row->end_of_life.empty() && row->end_of_life < month) {
    const std::string kind = row->kind == "ltsb" ? "long-term support branch" : row->kind == "production"
                                                                                   ? "production branch"
                                                                                   : "new feature branch";
    why = "R" + branch + " (" + kind + "), which reached end of life in " + row->end_of_life + ",";
  } else if (!row && branch.size() == 3 && branch < "580") {
    why = "R" + branch + ", a branch NVIDIA's data-center support matrix does not list (it calls every such branch "
          "before R580 end of life),";
  } else {
    return;
  }
  std::vector<std::string> supported;
  for (const auto& b : cat_.driver_branches()) {
    if (b.latest.empty() || (!b.end_of_life.empty() && b.end_of_life < month)) continue;
    supported.push_back("R" + b.branch + " (" + (b.kind == "ltsb" ? "LTSB" : b.kind) +
                        (b.end_of_life.empty() ? "" : ", to " + b.end_of_life) + "; newest " + b.latest + ")");
  }
  add(DRV008, s.origin.at("driver"), "",
      "driver " + s.driver + " in stack '" + s.name + "' is on " + why +
          " and gets no more security fixes",
      supported.empty() ? "pin a release of a branch NVIDIA still supports"
                        : "pin a release of a supported branch: " + join(supported, ", "));
}

}  // namespace plinth::validate
