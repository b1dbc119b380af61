#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <set>

#include "engine/catalog/catalog.h"
#include "engine/catalog/embedded.h"
#include "tests/support/run.h"

using plinth::catalog::Catalog;

namespace {

const Catalog& embedded() {
  static const Catalog cat = Catalog::load_embedded().value();
  return cat;
}

// The embedded data files with `name` replaced by `text`.
std::vector<std::pair<std::string, std::string>> files_with(const std::string& name, const std::string& text) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : plinth::catalog::embedded_files())
    files.emplace_back(std::string(f.name), f.name == name ? text : std::string(f.text));
  return files;
}

std::string error_of(const std::string& name, const std::string& text) {
  auto r = Catalog::load_texts(files_with(name, text));
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace

TEST_CASE("every CUDA toolkit row of NVIDIA's release notes table agrees with the catalog") {
  YAML::Node doc = YAML::LoadFile(plinth::test::testdata_dir() + "/nvidia/cuda-driver-min.yaml");
  const YAML::Node rows = doc["toolkit_driver"]["rows"];
  REQUIRE(rows.size() == 49);
  for (const auto& row : rows) {
    auto cuda = row["cuda"].as<std::string>();
    auto release = row["release"].as<std::string>();
    auto want = row["linux_x86_64_min"].as<std::string>();
    INFO("CUDA " << cuda << " (" << release << ")");
    CHECK(embedded().min_driver_for_cuda(cuda) == want);
    // A GA release is also reachable by its major.minor ("12.4" means 12.4 GA).
    if (release.find("GA") != std::string::npos) {
      std::string minor = cuda.substr(0, cuda.find('.', cuda.find('.') + 1));
      CHECK(embedded().min_driver_for_cuda(minor) == want);
    }
  }
  // And the rows after that table (CUDA 13.1 Update 1 to 13.2 Update 2, from the 13.2 Update 2 notes;
  // 13.3 GA and Update 1, from NVIDIA's redistributable manifests).
  CHECK(embedded().cuda_versions().size() == 49 + 4 + 2);
}

TEST_CASE("CUDA versions resolve to their GA release and unknown ones to nothing") {
  CHECK(embedded().min_driver_for_cuda("12.4") == "550.54.14");
  CHECK(embedded().min_driver_for_cuda("12.4.1") == "550.54.15");
  CHECK(embedded().resolve_cuda("11.0") == "11.0.2");  // 11.0.1 was a release candidate
  CHECK(embedded().resolve_cuda("13.1") == "13.1.0");
  CHECK_FALSE(embedded().min_driver_for_cuda("12.7").has_value());
  CHECK(embedded().min_driver_for_cuda("13.2") == "595.45.04");
  CHECK(embedded().min_driver_for_cuda("13.2.2") == "595.71.05");
  CHECK(embedded().min_driver_for_cuda("13.1.1") == "590.48.01");
  CHECK(embedded().min_driver_for_cuda("13.3") == "610.43.02");  // redistrib_13.3.0.json's nvidia_driver
  CHECK(embedded().resolve_cuda("13.3") == "13.3.0");
  CHECK_FALSE(embedded().min_driver_for_cuda("13.4").has_value());  // not listed: see cuda.yaml not-covered
  CHECK_FALSE(embedded().min_driver_for_cuda("12.4.9").has_value());
  CHECK(embedded().cuda_versions().front() == "11.0.1");
  CHECK(embedded().cuda_versions().back() == "13.3.1");
}

TEST_CASE("every MIG profile of NVIDIA's MIG guide and mig-parted agrees with the catalog") {
  YAML::Node doc = YAML::LoadFile(plinth::test::testdata_dir() + "/nvidia/mig-profiles.yaml");
  int profiles = 0;
  for (const auto& kv : doc["gpus"]) {
    auto name = kv.first.as<std::string>();
    INFO("GPU " << name);
    const auto* gpu = embedded().gpu(name);
    REQUIRE(gpu != nullptr);
    CHECK(gpu->mig_max_instances == kv.second["max_instances"].as<int>());
    CHECK(gpu->mig_profiles.size() == kv.second["profiles"].size());
    for (const auto& p : kv.second["profiles"]) {
      auto pname = p["name"].as<std::string>();
      INFO("profile " << pname);
      const auto* ours = gpu->mig_profile(pname);
      REQUIRE(ours != nullptr);
      CHECK(ours->compute_slices == p["compute_slices"].as<int>());
      CHECK(ours->memory_gb == p["memory_gb"].as<int>());
      CHECK(ours->max_count == p["max_count"].as<int>());
      ++profiles;
    }
  }
  CHECK(profiles == 40);
  // The balanced layouts of mig-parted fit in each GPU's slices.
  for (const auto& kv : doc["balanced"]) {
    const auto* gpu = embedded().gpu(kv.first.as<std::string>());
    REQUIRE(gpu != nullptr);
    int compute = 0, memory = 0;
    for (const auto& p : kv.second) {
      const auto* ours = gpu->mig_profile(p.first.as<std::string>());
      REQUIRE(ours != nullptr);
      compute += ours->compute_slices * p.second.as<int>();
      memory += ours->memory_slices * p.second.as<int>();
    }
    CHECK(compute <= gpu->mig_compute_slices);
    CHECK(memory <= gpu->mig_memory_slices);
  }
}

TEST_CASE("GPU models are found by name, alias and the product name nvidia-smi reports") {
  const auto& cat = embedded();
  for (const char* n : {"A30-24GB", "A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB-NVL", "H200-141GB", "L40S", "L4", "A10G",
                        "RTX-4090", "RTX-6000-Ada", "B200", "V100-16GB", "V100-32GB", "T4", "GB200", "GH200-96GB", "GH200-144GB",
                        "B300", "GB300", "RTX-PRO-6000-Blackwell", "A40", "A10", "L40", "H800-80GB", "A800-80GB", "H200-NVL",
                        "V100-16GB-PCIe", "V100-32GB-PCIe", "H100-PCIe", "A100-40GB-PCIe", "A100-80GB-PCIe"}) {
    INFO(n);
    CHECK(cat.gpu(n) != nullptr);
  }
  CHECK(cat.gpu("NVIDIA H100 80GB HBM3")->name == "H100-80GB");
  CHECK(cat.gpu("H100-94GB")->name == "H100-94GB-NVL");
  CHECK(cat.gpu("NVIDIA GeForce RTX 4090")->name == "RTX-4090");
  CHECK(cat.gpu("H100-80") == nullptr);

  const auto* rtx = cat.gpu("RTX-4090");
  CHECK_FALSE(rtx->ecc);
  CHECK_FALSE(rtx->nvlink);
  CHECK_FALSE(rtx->has_mig());
  const auto* a30 = cat.gpu("A30-24GB");
  CHECK(a30->mig_compute_slices == 4);
  CHECK(a30->mig_memory_slices == 4);
  const auto* h100 = cat.gpu("H100-80GB");
  CHECK(h100->mig_compute_slices == 7);
  CHECK(h100->mig_memory_slices == 8);
  CHECK(h100->min_cuda == "11.8");
  CHECK(cat.gpu("B200")->min_cuda == "12.8");
  CHECK(cat.version() == "2026.12.7");
  // MIG's own minimum drivers (MIG User Guide, Deployment Considerations).
  CHECK(cat.gpu("H200-141GB")->mig_min_driver == "550.90.07");
  CHECK(h100->mig_min_driver == "525.85.12");
  CHECK(cat.gpu("A30-24GB")->mig_min_driver == "460.73.01");
  CHECK(cat.gpu("L40S")->mig_min_driver.empty());
}

TEST_CASE("load_dir reads the data files from a directory") {
  auto cat = Catalog::load_dir(plinth::test::source_dir() + "/engine/catalog/data");
  REQUIRE(cat.ok());
  CHECK(cat->gpu_names() == embedded().gpu_names());

  auto missing = Catalog::load_dir("/nonexistent/catalog");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message ==
        "catalog directory '/nonexistent/catalog' does not exist; set PLINTH_CATALOG_DIR to a folder holding cuda.yaml, "
        "gpus.yaml, software.yaml");
}

TEST_CASE("malformed catalog data gives errors naming the file and line") {
  const std::string header = "version: \"1\"\nsources:\n  notes: \"release notes\"\n";
  CHECK(error_of("cuda.yaml", header + "toolkits:\n  - {cuda: \"12.4.0\", min_driver: 550.54.14, source: notes}\n"
                                       "  - {cuda: \"12.x\", min_driver: \"1\", source: notes}\n") ==
        "invalid catalog data:\n  cuda.yaml:6: CUDA version '12.x' must be major.minor.patch, e.g. \"12.4.1\"");
  CHECK(error_of("cuda.yaml", header + "toolkits:\n  - {cuda: \"12.4.0\", min_drvier: \"550.54.14\", source: notes}\n") ==
        "invalid catalog data:\n  cuda.yaml:5: unknown key 'min_drvier' in a CUDA toolkit row; did you mean 'min_driver'?\n"
        "  cuda.yaml:5: CUDA 12.4.0 has no 'min_driver'");
  CHECK(error_of("cuda.yaml", header + "toolkits:\n  - {cuda: \"12.4.0\", min_driver: \"550.54.14\", source: blog}\n") ==
        "invalid catalog data:\n  cuda.yaml:5: the source of CUDA 12.4.0 names none of the file's sources (notes)");
  CHECK(error_of("cuda.yaml", "version: 1\ntoolkits: [\n") .find("cuda.yaml:3: YAML syntax error") != std::string::npos);
  CHECK(error_of("gpus.yaml", header + "gpus:\n  - {name: X1, product_name: X, architecture: Y, compute_capability: \"1.0\", "
                                       "form_factor: pcie, datacenter: true, min_cuda: \"11.0\", memory_gb: lots, ecc: true, "
                                       "nvlink: false, source: notes}\n")
            .find("gpus.yaml:5: 'memory_gb' of GPU model 'X1' must be a whole number >= 0") != std::string::npos);
  CHECK(error_of("gpus.yaml", header + "gpus:\n  - {name: X1, product_name: X, architecture: Y, compute_capability: \"1.0\", "
                                       "form_factor: pcie, datacenter: true, min_cuda: \"11.0\", memory_gb: 8, ecc: true, "
                                       "nvlink: false, source: notes}\n")
            .find("gpus.yaml:5: GPU model 'X1' names architecture 'Y', which gpus.yaml's 'architectures' does not list") !=
        std::string::npos);
}

TEST_CASE("the catalog needs all three data files and no others") {
  auto files = files_with("", "");
  files.erase(files.begin());  // cuda.yaml
  files.emplace_back("gpu.yaml", "version: 1\n");
  auto r = Catalog::load_texts(files);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "invalid catalog data:\n  gpu.yaml: unknown catalog file; the catalog has cuda.yaml, gpus.yaml, "
        "software.yaml (did you mean 'gpus.yaml'?)\n  cuda.yaml: missing; the catalog needs cuda.yaml, gpus.yaml, "
        "software.yaml");
}

namespace {

// mig-parted's config name for a profile: "1g.10gb+me" -> "all-1g.10gb.me".
std::string config_name(std::string profile) {
  for (char& c : profile)
    if (c == '+') c = '.';
  return "all-" + profile;
}

}  // namespace

TEST_CASE("every MIG GPU's profile counts and balanced layout are mig-parted's") {
  YAML::Node cfg = YAML::LoadFile(plinth::test::testdata_dir() + "/nvidia/mig-parted-config-default.yaml")["mig-configs"];
  int checked = 0;
  for (const auto* gpu : embedded().gpu_models()) {
    if (!gpu->has_mig()) continue;
    INFO("GPU " << gpu->name);
    for (const auto& p : gpu->mig_profiles) {
      INFO("profile " << p.name);
      const YAML::Node entries = cfg[config_name(p.name)];
      REQUIRE(entries);
      // One entry of the config (unfiltered, or filtered to this GPU's device IDs) has our count.
      bool found = false;
      for (const auto& e : entries)
        if (e["mig-devices"][p.name] && e["mig-devices"][p.name].as<int>() == p.max_count) found = true;
      CHECK(found);
      ++checked;
    }
    bool balanced = false;
    for (const auto& e : cfg["all-balanced"]) {
      std::vector<std::pair<std::string, int>> layout;
      for (const auto& kv : e["mig-devices"]) layout.emplace_back(kv.first.as<std::string>(), kv.second.as<int>());
      auto sorted = [](auto v) {
        std::sort(v.begin(), v.end());
        return v;
      };
      if (sorted(layout) == sorted(gpu->mig_balanced)) balanced = true;
    }
    CHECK(balanced);
  }
  CHECK(checked > 100);
}

TEST_CASE("mig-parted's layouts are placeable and one instance more is not") {
  YAML::Node cfg = YAML::LoadFile(plinth::test::testdata_dir() + "/nvidia/mig-parted-config-default.yaml")["mig-configs"];
  int layouts = 0;
  for (const auto& kv : cfg) {
    for (const auto& e : kv.second) {
      if (!e["mig-devices"] || e["mig-devices"].size() == 0) continue;
      std::vector<std::pair<std::string, int>> layout;
      for (const auto& d : e["mig-devices"]) layout.emplace_back(d.first.as<std::string>(), d.second.as<int>());
      // Every GPU that has all the layout's profiles with at least these counts must place it.
      for (const auto* gpu : embedded().gpu_models()) {
        bool has_all = gpu->has_mig();
        for (const auto& [name, n] : layout) {
          const auto* p = gpu->mig_profile(name);
          has_all = has_all && p && p->max_count >= n;
        }
        if (!has_all) continue;
        INFO(kv.first.as<std::string>() << " on " << gpu->name);
        auto fit = plinth::catalog::place_mig(*gpu, layout);
        CHECK(fit.fits);
        CHECK(fit.problem.empty());
        ++layouts;
        if (layout.size() == 1 && gpu->mig_profile(layout[0].first)->max_count == layout[0].second) {
          // all-<profile> at this GPU's maximum: one more instance never fits
          auto more = layout;
          more[0].second += 1;
          CHECK_FALSE(plinth::catalog::place_mig(*gpu, more).fits);
        }
      }
    }
  }
  CHECK(layouts > 100);
}

TEST_CASE("MIG placement rejects layouts whose slice sums fit but whose instances cannot be placed") {
  const auto* h100 = embedded().gpu("H100-80GB");
  // 1g instances cannot start at memory slice 7: with 3 x 1g.20gb and 2 x 1g.10gb every slice is used,
  // so the 1g.20gb instances must take slices 0-3 and 6-7.
  auto fit = plinth::catalog::place_mig(*h100, {{"1g.20gb", 3}, {"1g.10gb", 2}});
  REQUIRE(fit.fits);
  CHECK(fit.slots == std::vector<std::pair<std::string, int>>{{"1g.20gb", 0}, {"1g.20gb", 2}, {"1g.20gb", 6}, {"1g.10gb", 4},
                                                             {"1g.10gb", 5}});
  // A30: each '+me' profile takes the GPU's media engines; the slice sums (3 of 4) fit, the GPU does not.
  const auto* a30 = embedded().gpu("A30-24GB");
  auto media = plinth::catalog::place_mig(*a30, {{"1g.6gb+me", 1}, {"2g.12gb+me", 1}});
  CHECK_FALSE(media.fits);
  CHECK(media.problem == "a GPU has one set of media engines: at most one '+me' instance");
  // NVIDIA's documented mixed layouts.
  for (std::vector<std::pair<std::string, int>> ok : std::vector<std::vector<std::pair<std::string, int>>>{
           {{"4g.40gb", 1}, {"3g.40gb", 1}},
           {{"4g.40gb", 1}, {"2g.20gb", 1}, {"1g.10gb", 1}},
           {{"3g.40gb", 1}, {"2g.20gb", 1}, {"1g.10gb", 2}},
           {{"3g.40gb", 1}, {"1g.10gb", 4}},
           {{"2g.20gb", 3}, {"1g.10gb", 1}}}) {
    CHECK(plinth::catalog::place_mig(*h100, ok).fits);
  }
  CHECK(plinth::catalog::place_mig(*h100, {{"1g.10gb+me", 2}}).problem ==
        "2 x 1g.10gb+me exceeds the 1 instance(s) of 1g.10gb+me that H100-80GB allows");
  CHECK(plinth::catalog::place_mig(*h100, {{"3g.40gb", 2}, {"1g.10gb", 1}}).problem ==
        "needs 9 memory slices; H100-80GB has 8");
  CHECK(plinth::catalog::place_mig(*h100, {{"4g.40gb", 1}, {"4g.40gb", 1}}).fits == false);
}

TEST_CASE("PCIe parts are their own rows: V100 PCIe has no NVLink, H200 NVL has no 1g.35gb") {
  const auto& cat = embedded();
  CHECK(cat.gpu("Tesla V100-PCIE-16GB")->name == "V100-16GB-PCIe");
  CHECK_FALSE(cat.gpu("Tesla V100-PCIE-16GB")->nvlink);
  CHECK_FALSE(cat.gpu("Tesla V100-PCIE-32GB")->nvlink);
  CHECK(cat.gpu("Tesla V100-SXM2-32GB")->nvlink);
  CHECK(cat.gpu("NVIDIA H100 PCIe")->name == "H100-PCIe");
  CHECK(cat.gpu("NVIDIA H200 NVL")->name == "H200-NVL");
  CHECK(cat.gpu("H200-NVL")->mig_profile("1g.35gb") == nullptr);
  CHECK(cat.gpu("H200-141GB")->mig_profile("1g.35gb")->max_count == 4);
  CHECK(cat.gpu("NVIDIA A100-PCIE-40GB")->name == "A100-40GB-PCIe");
  CHECK(cat.gpu("NVIDIA A100 80GB PCIe")->name == "A100-80GB-PCIe");
}

TEST_CASE("the catalog knows which nodes have NVSwitch and run Fabric Manager") {
  const auto& cat = embedded();
  CHECK(cat.gpu("H100-80GB")->has_nvswitch(8));
  CHECK_FALSE(cat.gpu("H100-80GB")->has_nvswitch(4));  // HGX H100 4-GPU: GPUs joined directly
  CHECK(cat.gpu("H100-80GB")->fabric_manager == "node");
  CHECK_FALSE(cat.gpu("H100-PCIe")->has_nvswitch(8));
  CHECK(cat.gpu("B200")->has_nvswitch(8));
  CHECK(cat.gpu("GB200")->fabric_manager == "switch-tray");
  CHECK_FALSE(cat.gpu("V100-32GB")->has_nvswitch(8));  // DGX-1 hybrid cube-mesh
}

TEST_CASE("architectures carry BF16, kernel module flavours and end of support") {
  const auto& cat = embedded();
  CHECK_FALSE(cat.architecture("Volta")->bf16);
  CHECK_FALSE(cat.architecture("Turing")->bf16);
  CHECK(cat.architecture("Ampere")->bf16);
  CHECK(cat.kernel_modules(*cat.gpu("V100-32GB")) == "proprietary");
  CHECK(cat.kernel_modules(*cat.gpu("H100-80GB")) == "both");
  CHECK(cat.kernel_modules(*cat.gpu("GH200-96GB")) == "open");
  CHECK(cat.kernel_modules(*cat.gpu("B200")) == "open");
  CHECK(cat.architecture("Volta")->last_driver_branch == "580");
  CHECK(cat.architecture("Volta")->cuda_dropped_in == "13.0");
  CHECK(cat.gpu("B200")->min_driver == "570.133.20");
}

TEST_CASE("minor-version compatibility minimums agree with NVIDIA's table") {
  YAML::Node doc = YAML::LoadFile(plinth::test::testdata_dir() + "/nvidia/cuda-driver-min.yaml");
  for (const auto& row : doc["minor_version_compat"]["rows"]) {
    int major = row["cuda_major"].as<int>();
    auto want = row["linux_driver_min"].as<std::string>();
    INFO("CUDA " << major << ".x");
    auto ours = embedded().minor_compat_min_driver(major);
    REQUIRE(ours.has_value());
    // The catalog may be stricter within the branch (11.x: 450.80.02, the footnote's driver), never another branch.
    CHECK(ours->substr(0, want.size()) == want);
  }
  CHECK(embedded().minor_compat_min_driver(11) == "450.80.02");
  CHECK(embedded().forward_compat(12, "535.104.05") != nullptr);
  CHECK(embedded().forward_compat(12, "535.54.03") == nullptr);  // older than 535.86
  CHECK(embedded().forward_compat(12, "545.23.08") == nullptr);  // R545 is not forward compatible
  CHECK(embedded().forward_compat(13, "550.54.15") == nullptr);
}

TEST_CASE("Fabric Manager releases, container toolkit advisories and the DCGM exporter image") {
  const auto& cat = embedded();
  using plinth::catalog::FabricManager;
  CHECK(cat.fabric_manager_for("550.54.15") == FabricManager::Published);
  CHECK(cat.fabric_manager_for("550.54.16") == FabricManager::None);       // inside R550's known releases
  CHECK(cat.fabric_manager_for("535.309.01") == FabricManager::Published);  // R535's newest (April 2026)
  CHECK(cat.fabric_manager_for("580.126.20") == FabricManager::Published);
  CHECK(cat.fabric_manager_for("580.190.01") == FabricManager::Presumed);   // newer than R580's newest listed
  CHECK(cat.fabric_manager_for("580.190") == FabricManager::None);          // a desktop-style version
  CHECK(cat.fabric_manager_for("530.41.03") == FabricManager::None);        // R530: no data-center releases
  CHECK(cat.fabric_manager_for("620.10.01") == FabricManager::None);        // R620: none published yet
  const auto* r580 = cat.driver_branch("580");
  REQUIRE(r580 != nullptr);
  CHECK(r580->kind == "ltsb");
  CHECK(r580->end_of_life == "2028-06");
  CHECK(cat.driver_branch("535")->end_of_life == "2026-06");
  CHECK(cat.driver_branch("530") == nullptr);
  // Every listed branch's newest release has a Fabric Manager listed.
  for (const auto& b : cat.driver_branches())
    if (!b.latest.empty()) CHECK(cat.fabric_manager_for(b.latest) == FabricManager::Published);
  CHECK(cat.container_toolkit_default() == "1.17.8");
  CHECK(cat.container_toolkit_advisories("1.17.8").empty());
  std::vector<std::string> ids;
  for (const auto& a : cat.container_toolkit_advisories("1.15.0")) ids.push_back(a.id);
  CHECK(ids == std::vector<std::string>{"CVE-2024-0132", "CVE-2024-0133", "CVE-2025-23359", "CVE-2025-23266", "CVE-2025-23267"});
  CHECK(cat.container_toolkit_advisories("1.17.4").size() == 2);
  const std::string& img = cat.dcgm_exporter_image();
  CHECK(img.rfind("nvcr.io/nvidia/k8s/dcgm-exporter:", 0) == 0);
  CHECK(img.size() - img.rfind("@sha256:") == 8 + 64);
}

TEST_CASE("catalog consistency errors: balanced layouts, NVSwitch without Fabric Manager, an affected default toolkit") {
  auto text = [](const std::string& name) {
    for (const auto& f : plinth::catalog::embedded_files())
      if (f.name == name) return std::string(f.text);
    return std::string();
  };
  std::string gpus = text("gpus.yaml");
  auto replaced = [](std::string s, const std::string& from, const std::string& to) {
    size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  std::string bad = replaced(gpus, "balanced: {\"1g.6gb\": 2, \"2g.12gb\": 1}", "balanced: {\"2g.12gb\": 2, \"1g.6gb\": 1}");
  CHECK(error_of("gpus.yaml", bad).find("the balanced MIG layout of GPU model 'A30-24GB' does not fit the GPU: needs 5 "
                                        "compute slices; A30-24GB has 4") != std::string::npos);
  std::string nofm = replaced(gpus, "    fabric_manager: node\n", "");
  CHECK(error_of("gpus.yaml", nofm).find("GPU model 'A100-40GB' must set 'nvswitch_min_gpus' and 'fabric_manager' together") !=
        std::string::npos);
  std::string sw = replaced(text("software.yaml"), "default: \"1.17.8\"", "default: \"1.15.0\"");
  CHECK(error_of("software.yaml", sw).find("the default container toolkit 1.15.0 is affected by CVE-2024-0132 (fixed in 1.16.2)") !=
        std::string::npos);
}
