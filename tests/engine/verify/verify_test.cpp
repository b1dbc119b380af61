// plinth verify's reading of facts and its rules, on probe text as nodes write it.
#include <catch2/catch.hpp>

#include <set>

#include "engine/blueprint/loader.h"
#include "engine/verify/verify.h"

using namespace plinth;

namespace {

const char* kBlueprint = R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: fleet, owner: ml}
stacks:
  hopper: {driver: "580.105.08", cuda: "13.0"}
storage:
  tiers:
    - {name: scratch, kind: nvme, capacity_tb: 30, classification: internal, encryption: {at_rest: luks2}}
node_pools:
  - name: hgx
    provider: baremetal
    count: 2
    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 112, memory_gb: 2048}
    stack: hopper
    storage: [scratch]
    bmc: {endpoints: ["https://10.0.0.1", "https://10.0.0.2"], credentials: env:BMC}
monitoring: {dcgm: true, prometheus: true}
)";

bp::Blueprint load(const std::string& text = kBlueprint) {
  auto r = bp::load_string(text, "fleet.yaml");
  std::string diags;
  for (const auto& d : r.diagnostics) diags += format_diagnostic(d);
  INFO(diags);
  REQUIRE(r.ok());
  return r.blueprint;
}

const catalog::Catalog& cat() {
  auto c = catalog::default_catalog();
  REQUIRE(c);
  return **c;
}

constexpr long long kNow = 1796500000;

struct NodeText {
  std::string name = "hgx-0";
  std::string pool = "hgx";
  std::string driver = "580.105.08";
  int gpus = 8;
  std::string product = "NVIDIA H100 80GB HBM3";
  std::string mig_mode = "Disabled";
  int mig_devices = 0;
  bool fabric_manager = true;
  bool encrypted = true;
  bool mounted = true;
  long long timestamp = kNow - 60;

  std::string text() const {
    const std::string n = "node=\"" + name + "\"";
    std::string t = "# HELP plinth_probe_info x\n# TYPE plinth_probe_info gauge\n";
    t += "plinth_probe_info{" + n + ",format=\"1\",pool=\"" + pool + "\",stack=\"hopper\",blueprint=\"fleet\"} 1\n";
    t += "plinth_probe_timestamp_seconds{" + n + "} " + std::to_string(timestamp) + "\n";
    t += "plinth_gpu_driver_info{" + n + ",driver_version=\"" + driver + "\",cuda_version=\"13.0\"} 1\n";
    t += "plinth_gpus{" + n + "} " + std::to_string(gpus) + "\n";
    for (int g = 0; g < gpus; ++g) {
      t += "plinth_gpu_info{" + n + ",gpu=\"" + std::to_string(g) + "\",uuid=\"GPU-" + std::to_string(g) +
           "\",product=\"" + product + "\",memory_mib=\"81559\",ecc_mode=\"Enabled\",mig_mode=\"" + mig_mode + "\"} 1\n";
      t += "plinth_gpu_mig_devices{" + n + ",gpu=\"" + std::to_string(g) + "\"} " + std::to_string(mig_devices) + "\n";
      for (int m = 0; m < mig_devices; ++m)
        t += "plinth_gpu_mig_device_info{" + n + ",gpu=\"" + std::to_string(g) + "\",gpu_instance=\"" +
             std::to_string(m + 1) + "\",compute_instance=\"0\",multiprocessors=\"16\",memory_mib=\"9856\"} 1\n";
    }
    t += "plinth_service_active{" + n + ",service=\"nvidia-fabricmanager\"} " + (fabric_manager ? "1" : "0") + "\n";
    t += "plinth_service_active{" + n + ",service=\"auditd\"} 1\n";
    t += "plinth_mount_info{" + n + ",mountpoint=\"/\",fstype=\"ext4\",source=\"/dev/sda2\"} 1\n";
    if (mounted) {
      t += "plinth_mount_info{" + n +
           ",mountpoint=\"/mnt/scratch\",fstype=\"xfs\",source=\"/dev/mapper/plinth-scratch\"} 1\n";
      t += "plinth_mount_encrypted{" + n + ",mountpoint=\"/mnt/scratch\"} " + (encrypted ? "1" : "0") + "\n";
    }
    return t;
  }
};

verify::Outcome run(const std::vector<NodeText>& nodes, const std::string& blueprint = kBlueprint,
                    const std::string& extra = "") {
  std::string text;
  for (const auto& n : nodes) text += n.text();
  text += extra;
  auto samples = verify::parse_text(text, "facts.prom");
  REQUIRE(samples);
  verify::Options opt;
  opt.now = kNow;
  auto out = verify::compare(load(blueprint), cat(), *samples, opt);
  REQUIRE(out);
  return *out;
}

std::set<std::string> codes(const verify::Outcome& o) {
  std::set<std::string> c;
  for (const auto& f : o.findings) c.insert(f.code + " " + f.address);
  return c;
}

NodeText node(int i) {
  NodeText n;
  n.name = "hgx-" + std::to_string(i);
  return n;
}

}  // namespace

TEST_CASE("parse_text reads the exposition format and names file:line:column in errors", "[verify]") {
  auto ok = verify::parse_text(
      "# HELP m x\n# TYPE m gauge\nm{a=\"b\\\"c\",d=\"e\\\\f\\ng\",} 2.5 1700000000\n\nup 1\nx{} +Inf\n", "f.prom");
  REQUIRE(ok);
  REQUIRE(ok->size() == 3);
  CHECK((*ok)[0].name == "m");
  CHECK((*ok)[0].label("a") == "b\"c");
  CHECK((*ok)[0].label("d") == "e\\f\ng");
  CHECK((*ok)[0].value == 2.5);
  CHECK((*ok)[1].name == "up");
  CHECK(std::isinf((*ok)[2].value));

  auto unclosed = verify::parse_text("up 1\nm{a=\"b} 1\n", "f.prom");
  REQUIRE(!unclosed);
  CHECK(unclosed.error().message.find("f.prom:2:") == 0);
  CHECK(unclosed.error().message.find("not closed") != std::string::npos);
  auto no_value = verify::parse_text("m{a=\"b\"} many\n", "f.prom");
  REQUIRE(!no_value);
  CHECK(no_value.error().message.find("f.prom:1:10: expected a sample value") == 0);
  auto bad_name = verify::parse_text("9m 1\n", "f.prom");
  REQUIRE(!bad_name);
  CHECK(bad_name.error().message.find("f.prom:1:1:") == 0);
}

TEST_CASE("nodes that run what their pool declares give no finding", "[verify]") {
  auto o = run({node(0), node(1)});
  CHECK(o.findings.empty());
  CHECK(o.nodes_declared == 2);
  CHECK(o.nodes_seen == 2);
  CHECK(o.nodes_matching == 2);
  CHECK_FALSE(o.failed());
  REQUIRE(o.observations.size() == 3);
  CHECK(o.observations[0].fact == "encryption_at_rest");
  CHECK(o.observations[0].nodes == 2);
  CHECK(o.observations[0].of == 2);
  CHECK(o.observations[0].observed_at == "2026-12-05T19:45:40Z");
  CHECK(o.observations[1].fact == "audit_logging");
  CHECK(o.observations[2].fact == "configuration");
  CHECK(o.observations[2].nodes == 2);
}

TEST_CASE("each drift is named with its rule, node and pool location", "[verify]") {
  NodeText drifted = node(0);
  drifted.driver = "580.95.05";
  NodeText no_fm = node(1);
  no_fm.fabric_manager = false;
  auto o = run({drifted, no_fm});
  CHECK(codes(o) == std::set<std::string>{"VER003 hgx-0", "VER005 hgx-1"});
  CHECK(o.nodes_matching == 0);
  REQUIRE(o.failed());
  CHECK(o.findings[0].message.find("runs NVIDIA driver 580.95.05, the stack pins 580.105.08") != std::string::npos);
  CHECK(o.findings[0].loc.str() == "fleet.yaml:10:5");
  CHECK_FALSE(o.findings[0].hint.empty());
}

TEST_CASE("MIG instances on a pool without MIG, and a layout other than the pool's, are VER006", "[verify]") {
  NodeText mig = node(0);
  mig.mig_mode = "Enabled";
  mig.mig_devices = 2;
  auto o = run({mig, node(1)});
  CHECK(codes(o) == std::set<std::string>{"VER006 hgx-0"});
  CHECK(o.findings[0].message.find("2 GPU instances") != std::string::npos);

  std::string with_mig = kBlueprint;
  with_mig.replace(with_mig.find("    storage: [scratch]\n    bmc"), 0, "    mig: {profile: \"3g.40gb\", instances: 2}\n");
  NodeText right = node(0);
  right.mig_mode = "Enabled";
  right.mig_devices = 2;
  NodeText wrong = node(1);
  wrong.mig_mode = "Enabled";
  wrong.mig_devices = 3;
  o = run({right, wrong}, with_mig);
  CHECK(codes(o) == std::set<std::string>{"VER006 hgx-1"});
  // Profile names (nvidia-smi mig -lgi, DCGM's GPU_I_PROFILE) are compared when the node reports them.
  o = run({right, node(1)}, with_mig,
          "plinth_gpu_mig_profile_instances{node=\"hgx-0\",gpu=\"0\",profile=\"1g.10gb\"} 2\n");
  CHECK(codes(o) == std::set<std::string>{"VER006 hgx-0", "VER006 hgx-1"});
}

TEST_CASE("missing, undeclared and surplus nodes are findings", "[verify]") {
  NodeText stranger = node(5);
  NodeText other = node(0);
  other.name = "old-0";
  other.pool = "old";
  auto o = run({node(0), stranger, other});
  CHECK(codes(o) == std::set<std::string>{"VER001 hgx-1", "VER002 hgx-5", "VER002 old-0"});
  CHECK(o.nodes_seen == 1);
}

TEST_CASE("GPU count and model, mounts and encryption at rest", "[verify]") {
  NodeText lost = node(0);
  lost.gpus = 7;
  lost.encrypted = false;
  NodeText wrong = node(1);
  wrong.product = "NVIDIA A100-SXM4-80GB";
  wrong.mounted = false;
  auto o = run({lost, wrong});
  CHECK(codes(o) == std::set<std::string>{"VER004 hgx-0", "VER010 hgx-0", "VER004 hgx-1", "VER009 hgx-1"});
  CHECK(o.observations[0].fact == "encryption_at_rest");
  CHECK(o.observations[0].nodes == 0);
  CHECK(o.observations[0].of == 1);
}

TEST_CASE("the DCGM exporter's labels speak for the GPUs where it reports them", "[verify]") {
  std::string dcgm;
  for (int g = 0; g < 8; ++g)
    dcgm += "DCGM_FI_DEV_GPU_TEMP{gpu=\"" + std::to_string(g) + "\",UUID=\"GPU-" + std::to_string(g) +
            "\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"hgx-1\",DCGM_FI_DRIVER_VERSION=\"580.82.07\"} 33\n";
  dcgm += "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-0\",Hostname=\"hgx-1\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"13\"} 0\n";
  auto o = run({node(0)}, kBlueprint, dcgm);
  CHECK(codes(o) == std::set<std::string>{"VER003 hgx-1", "VER006 hgx-1", "VER013 hgx-1"});
}

TEST_CASE("an inactive NVLink is a warning naming the GPU and how many of its links are down", "[verify]") {
  std::string links;
  for (int l = 0; l < 18; ++l)
    links += "plinth_gpu_nvlink_up{node=\"hgx-1\",gpu=\"3\",link=\"" + std::to_string(l) + "\"} " +
             (l == 7 ? "0" : "1") + "\n";
  auto o = run({node(0), node(1)}, kBlueprint, links);
  CHECK(codes(o) == std::set<std::string>{"VER007 hgx-1"});
  CHECK(o.findings[0].message.find("GPU 3 (1 of 18 down)") != std::string::npos);
  CHECK(o.nodes_matching == 2);
}

TEST_CASE("stale facts and unknown probe formats are warnings", "[verify]") {
  NodeText old = node(0);
  old.timestamp = kNow - 7200;
  auto o = run({old, node(1)});
  CHECK(codes(o) == std::set<std::string>{"VER012 hgx-0"});
  CHECK_FALSE(o.failed());
  CHECK(o.nodes_matching == 2);
}

TEST_CASE("an unknown --pool is an error with the pools' names", "[verify]") {
  verify::Options opt;
  opt.pool = "hgz";
  auto o = verify::compare(load(), cat(), {}, opt);
  REQUIRE(!o);
  CHECK(o.error().message.find("did you mean 'hgx'") != std::string::npos);
  opt.pool = "hgx";
  auto ok = verify::compare(load(), cat(), {}, opt);
  REQUIRE(ok);
  CHECK(ok->nodes_declared == 2);
}

TEST_CASE("every rule has a unique ID, a title and a fix, and every format renders", "[verify]") {
  std::set<std::string> ids;
  for (const auto& r : verify::rules()) {
    CHECK(ids.insert(r.id).second);
    CHECK_FALSE(r.title.empty());
    CHECK_FALSE(r.fix.empty());
  }
  NodeText drifted = node(0);
  drifted.driver = "550.54.15";
  auto o = run({drifted});
  o.source = "facts.prom";
  for (const auto& f : o.findings) CHECK(ids.count(f.code));
  for (const auto& f : verify::formats()) {
    auto text = verify::render(o, "fleet <&>", f);
    REQUIRE(text);
    CHECK(text->find("VER003") != std::string::npos);
    if (f == "html") CHECK(text->find("fleet &lt;&amp;&gt;") != std::string::npos);
  }
  auto sarif = nlohmann::json::parse(*verify::render(o, "fleet", "sarif"));
  CHECK(sarif["runs"][0]["results"][0]["ruleId"] == "VER003");
  CHECK(sarif["runs"][0]["results"][1]["ruleId"] == "VER001");
  CHECK(sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 10);
  CHECK_FALSE(verify::render(o, "fleet", "yaml"));
}
