// plinth plan on the lab example, against state files written to a TempDir.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "engine/core/files.h"
#include "engine/state/state.h"
#include "tests/support/blueprints.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_plan {

namespace {

std::string lab_text() { return read_file(kLabExample).value(); }

}  // namespace

TEST_CASE("plan of the lab from an empty state creates everything, --detailed-exitcode exits 2") {
  TempDir dir;
  auto r = run_plinth({"plan", kLabExample, "--state", dir.path() + "/plinth.state.json", "--detailed-exitcode", "--refresh=false"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.rfind("Plinth will perform the following actions:\n\n", 0) == 0);
  CHECK(r.out.find("  + baremetal.node.lab-l40s[0, 1]  2 to create\n") != std::string::npos);
  CHECK(r.out.find("      bmc_endpoint: \"https://10.21.1.11\" ... \"https://10.21.1.12\"  (per node)\n") !=
        std::string::npos);
  CHECK(r.out.find("      bmc_credentials: (sensitive)\n") != std::string::npos);
  CHECK(r.out.find("LAB_BMC_CREDENTIALS") == std::string::npos);
  CHECK(r.out.find("  + net.vlan.lab-net (create)\n      cidr: \"10.21.0.0/24\"\n") != std::string::npos);
  CHECK(r.out.find('\x1b') == std::string::npos);  // not a terminal: no colour
  const std::string tail = "\n\nPlan: 6 to create, 0 to update, 0 to replace, 0 to destroy.\n";
  CHECK(r.out.substr(r.out.size() - tail.size()) == tail);

  auto plain = run_plinth({"plan", kLabExample, "--state", dir.path() + "/plinth.state.json", "--refresh=false"});
  CHECK(plain.exit_code == 0);
  CHECK(plain.out == r.out);
}

// The states written below hold the lab's nodes, whose BMCs (10.21.1.x) do not exist here:
// these tests plan against the state as recorded (--refresh=false). Refresh through
// a provider is covered against the Redfish emulator in apply_test.cpp.
TEST_CASE("plan against a state equal to the blueprint reports no changes and exits 0") {
  TempDir dir;
  std::string state = write_state_of(dir, kLabExample);
  auto r = run_plinth({"plan", kLabExample, "--state", state, "--detailed-exitcode", "--refresh=false"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "No changes. Infrastructure matches the blueprint.\n");
}

TEST_CASE("a changed BIOS attribute is an in-place update") {
  TempDir dir;
  std::string state = write_state_of(dir, kLabExample);
  std::string bp = dir.write("lab.yaml", replace_once(lab_text(), "bios: {SriovEnable: Enabled}",
                                                      "bios: {SriovEnable: Disabled}"));
  auto r = run_plinth({"plan", bp, "--state", state, "--detailed-exitcode", "--refresh=false"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "Plinth will perform the following actions:\n\n"
                 "  ~ baremetal.node.lab-l40s[0, 1]  2 to update in place\n"
                 "      bios.SriovEnable: \"Enabled\" -> \"Disabled\"\n"
                 "\nPlan: 0 to create, 2 to update, 0 to replace, 0 to destroy.\n");
  auto full = run_plinth({"plan", bp, "--state", state, "--refresh=false", "--no-group"});
  CHECK(full.out == "Plinth will perform the following actions:\n\n"
                    "  ~ baremetal.node.lab-l40s[0] (update in place)\n"
                    "      bios.SriovEnable: \"Enabled\" -> \"Disabled\"\n"
                    "  ~ baremetal.node.lab-l40s[1] (update in place)\n"
                    "      bios.SriovEnable: \"Enabled\" -> \"Disabled\"\n"
                    "\nPlan: 0 to create, 2 to update, 0 to replace, 0 to destroy.\n");
}

TEST_CASE("a changed stack pin replaces the pool's nodes, forced by the user-data hash") {
  TempDir dir;
  std::string state = write_state_of(dir, kLabExample);
  std::string bp = dir.write("lab.yaml", replace_once(lab_text(), "cudnn: \"9.1.0\"", "cudnn: \"9.2.0\""));
  auto r = run_plinth({"plan", bp, "--state", state, "--detailed-exitcode", "--refresh=false"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  // The hash says the user-data changed; the line under the header says why.
  CHECK(r.out.find("  -/+ baremetal.node.lab-l40s[0, 1]  2 to replace, forced by: user_data_hash\n"
                   "      # because plinth.stack.lab: cudnn \"9.1.0\" -> \"9.2.0\"\n"
                   "      user_data_hash: \"") != std::string::npos);
  CHECK(r.out.find("  # forces replacement\n") != std::string::npos);
  CHECK(r.out.find("  ~ plinth.stack.lab (update in place)\n      cudnn: \"9.1.0\" -> \"9.2.0\"\n") != std::string::npos);
  CHECK(r.out.find("\nPlan: 0 to create, 1 to update, 2 to replace, 0 to destroy.\n") != std::string::npos);
}

TEST_CASE("spelling the GPU by an alias or its nvidia-smi name changes nothing") {
  // The loader and renderer normalise GPU names to the catalog's before anything is hashed.
  TempDir dir;
  std::string state = write_state_of(dir, kLabExample);
  std::string bp = dir.write("lab.yaml", replace_once(lab_text(), "gpu: L40S", "gpu: \"NVIDIA L40S\""));
  auto r = run_plinth({"plan", bp, "--state", state, "--detailed-exitcode", "--refresh=false"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "No changes. Infrastructure matches the blueprint.\n");
  // The example cluster's H100 pool, written as nvidia-smi prints it or by its SXM5 alias.
  const std::string cluster = "blueprints/examples/cluster.yaml";
  std::string cluster_state = write_state_of(dir, cluster);
  for (const char* alias : {"\"NVIDIA H100 80GB HBM3\"", "H100-SXM5-80GB"}) {
    INFO(alias);
    std::string text = replace_once(read_file(cluster).value(), "gpu: H100-80GB", std::string("gpu: ") + alias);
    auto c = run_plinth({"plan", dir.write("cluster.yaml", text), "--state", cluster_state, "--detailed-exitcode",
                         "--refresh=false"});
    INFO(c.err);
    CHECK(c.exit_code == 0);
    CHECK(c.out == "No changes. Infrastructure matches the blueprint.\n");
  }
}

TEST_CASE("removing a pool from the blueprint plans deletes for its nodes") {
  TempDir dir;
  // The state knows a second pool that the blueprint no longer has.
  std::string two_pools = replace_once(lab_text(), "\nmonitoring:", R"(
  - name: lab-extra
    provider: baremetal
    count: 2
    role: inference
    hardware: {gpu: L40S, gpus_per_node: 4, cpu_cores: 64, memory_gb: 512}
    stack: lab
    boot: {method: pxe, image: "http://pxe.lab.example/ubuntu-22.04/"}
    networks: [lab-net]
    storage: [scratch]
    bmc: {endpoints: "https://10.21.2.{index}", credentials: env:LAB_BMC_CREDENTIALS}

monitoring:)");
  std::string state = write_state_of(dir, dir.write("old/lab.yaml", two_pools));
  auto r = run_plinth({"plan", kLabExample, "--state", state, "--detailed-exitcode", "--refresh=false"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "Plinth will perform the following actions:\n\n"
                 "  - baremetal.node.lab-extra[0, 1]  2 to destroy\n"
                 "\nPlan: 0 to create, 0 to update, 0 to replace, 2 to destroy.\n");
}

TEST_CASE("plan --json is the documented, versioned document") {
  TempDir dir;
  std::string state_path = dir.path() + "/plinth.state.json";
  auto r = run_plinth({"plan", kLabExample, "--state", state_path, "--json", "--refresh=false"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["format_version"] == "1.2");
  CHECK(j["summary"] == nlohmann::json::parse(
                            R"({"create": 6, "update": 0, "replace": 0, "delete": 0, "no_op": 0, "has_changes": true})"));
  CHECK(j["blueprint"]["name"] == "gpu-lab");
  CHECK(j["blueprint"]["files"][0]["path"] == kLabExample);
  CHECK(j["blueprint"]["files"][0]["sha256"].get<std::string>().size() == 64);
  CHECK(j["state"] == nlohmann::json{{"path", state_path}, {"lineage", ""}, {"serial", 0}});
  REQUIRE(j["resource_changes"].size() == 6);
  const auto& node = j["resource_changes"][0];
  CHECK(node["address"] == "baremetal.node.lab-l40s[0]");
  CHECK(node["index"] == 0);
  CHECK(node["provider"] == "baremetal");
  CHECK(node["action"] == "create");
  CHECK(node["source"] == "blueprints/examples/lab.yaml:32:5");

  // Every field the reference table in docs/plan.md names is present.
  std::string doc = read_file("docs/plan.md").value();
  size_t fields = 0;
  for (size_t at = doc.find("| `resource_changes[]."); at != std::string::npos;
       at = doc.find("| `resource_changes[].", at + 1)) {
    size_t start = at + 22, end = doc.find('`', start);
    std::string key = doc.substr(start, end - start);
    INFO(key);
    CHECK(node.contains(key));
    ++fields;
  }
  CHECK(fields == 9);
  for (size_t at = doc.find("| `changes[]."); at != std::string::npos; at = doc.find("| `changes[].", at + 1)) {
    size_t start = at + 13, end = doc.find('`', start);
    std::string key = doc.substr(start, end - start);
    INFO(key);
    for (const auto& c : node["changes"]) CHECK(c.contains(key));
  }
}

TEST_CASE("plan refuses a bad --lock-timeout and a corrupt state file") {
  TempDir dir;
  auto r = run_plinth({"plan", kLabExample, "--state", dir.path() + "/s.json", "--lock-timeout", "soon"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth plan: state " + dir.path() + "/s.json: --lock-timeout: invalid duration 'soon'") !=
        std::string::npos);

  std::string corrupt = dir.write("corrupt.json", "{\"format_version\": 1, \"resources\": [");
  auto c = run_plinth({"plan", kLabExample, "--state", corrupt, "--detailed-exitcode"});
  CHECK(c.exit_code == 1);
  CHECK(c.err.rfind("plinth plan: state " + corrupt + ": ", 0) == 0);
  CHECK(c.out.empty());
}

}  // namespace plinth::test::e2e_plan
