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
  CHECK(embedded().cuda_versions().size() == 49);
}

TEST_CASE("CUDA versions resolve to their GA release and unknown ones to nothing") {
  CHECK(embedded().min_driver_for_cuda("12.4") == "550.54.14");
  CHECK(embedded().min_driver_for_cuda("12.4.1") == "550.54.15");
  CHECK(embedded().resolve_cuda("11.0") == "11.0.2");  // 11.0.1 was a release candidate
  CHECK(embedded().resolve_cuda("13.1") == "13.1.0");
  CHECK_FALSE(embedded().min_driver_for_cuda("12.7").has_value());
  CHECK_FALSE(embedded().min_driver_for_cuda("13.2").has_value());
  CHECK_FALSE(embedded().min_driver_for_cuda("12.4.9").has_value());
  CHECK(embedded().cuda_versions().front() == "11.0.1");
  CHECK(embedded().cuda_versions().back() == "13.1.0");
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
                        "RTX-4090", "RTX-6000-Ada", "B200", "V100-16GB", "V100-32GB", "T4"}) {
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
  CHECK(cat.version() == "2026.12.1");
}

TEST_CASE("instance types carry their GPU model and count") {
  const auto& cat = embedded();
  struct Want {
    const char* provider;
    const char* name;
    const char* gpu;
    int count;
  };
  for (const Want& w : {Want{"aws", "p4d.24xlarge", "A100-40GB", 8}, {"aws", "p4de.24xlarge", "A100-80GB", 8},
                        {"aws", "p5.48xlarge", "H100-80GB", 8}, {"aws", "g5.xlarge", "A10G", 1}, {"aws", "g5.12xlarge", "A10G", 4},
                        {"aws", "g5.48xlarge", "A10G", 8}, {"aws", "g6.24xlarge", "L4", 4}, {"gcp", "a2-highgpu-4g", "A100-40GB", 4},
                        {"gcp", "a2-ultragpu-8g", "A100-80GB", 8}, {"gcp", "a3-highgpu-8g", "H100-80GB", 8},
                        {"gcp", "g2-standard-24", "L4", 2}, {"gcp", "g2-standard-96", "L4", 8},
                        {"azure", "Standard_ND96asr_v4", "A100-40GB", 8}, {"azure", "Standard_ND96amsr_A100_v4", "A100-80GB", 8},
                        {"azure", "Standard_ND96isr_H100_v5", "H100-80GB", 8}, {"azure", "Standard_NC48ads_A100_v4", "A100-80GB", 2}}) {
    INFO(w.provider << " " << w.name);
    const auto* t = cat.instance_type(w.provider, w.name);
    REQUIRE(t != nullptr);
    CHECK(t->gpu == w.gpu);
    CHECK(t->gpu_count == w.count);
    CHECK(cat.gpu(t->gpu) != nullptr);
  }
  CHECK(cat.instance_type("gcp", "p5.48xlarge") == nullptr);
  CHECK(cat.providers() == std::vector<std::string>{"aws", "azure", "gcp"});
}

TEST_CASE("every AWS instance type is in the EC2 API's InstanceType enum") {
  YAML::Node model = YAML::LoadFile(plinth::test::testdata_dir() + "/aws-ec2/botocore-model/service-2.json");
  std::set<std::string> known;
  for (const auto& e : model["shapes"]["InstanceType"]["enum"]) known.insert(e.as<std::string>());
  REQUIRE(known.size() > 100);
  for (const auto& name : embedded().instance_type_names("aws")) {
    INFO(name);
    CHECK(known.count(name) == 1);
  }
}

TEST_CASE("load_dir reads the data files from a directory") {
  auto cat = Catalog::load_dir(plinth::test::source_dir() + "/engine/catalog/data");
  REQUIRE(cat.ok());
  CHECK(cat->gpu_names() == embedded().gpu_names());

  auto missing = Catalog::load_dir("/nonexistent/catalog");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message ==
        "catalog directory '/nonexistent/catalog' does not exist; set PLINTH_CATALOG_DIR to a folder holding cuda.yaml, "
        "gpus.yaml, instance_types.yaml");
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
  CHECK(error_of("instance_types.yaml", header + "instance_types:\n  aws:\n    - {name: p9.huge, gpu: Quantum-9000, gpu_count: 8, vcpus: 1, "
                                                 "memory_gb: 1, source: notes}\n") ==
        "invalid catalog data:\n  instance_types.yaml:6: aws instance type 'p9.huge' names GPU 'Quantum-9000', which gpus.yaml does not list");
  CHECK(error_of("gpus.yaml", header + "gpus:\n  - {name: X1, product_name: X, architecture: Y, compute_capability: \"1.0\", "
                                       "min_cuda: \"11.0\", memory_gb: lots, ecc: true, nvlink: false, source: notes}\n")
            .find("gpus.yaml:5: 'memory_gb' of GPU model 'X1' must be a whole number >= 0") != std::string::npos);
}

TEST_CASE("the catalog needs all three data files and no others") {
  auto files = files_with("", "");
  files.erase(files.begin());  // cuda.yaml
  files.emplace_back("gpu.yaml", "version: 1\n");
  auto r = Catalog::load_texts(files);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "invalid catalog data:\n  gpu.yaml: unknown catalog file; the catalog has cuda.yaml, gpus.yaml, instance_types.yaml "
        "(did you mean 'gpus.yaml'?)\n  cuda.yaml: missing; the catalog needs cuda.yaml, gpus.yaml, instance_types.yaml");
}
