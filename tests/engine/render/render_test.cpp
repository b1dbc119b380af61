// render_pool: pinned packages, VLANs, LUKS, DCGM, MIG, hashes, errors, and
// Debian's cloud-init accepting what we render.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "engine/blueprint/loader.h"
#include "engine/core/hash.h"
#include "engine/render/render.h"
#include "tests/support/run.h"

using namespace plinth;

namespace {

const char* kBlueprint = R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: render-test, owner: ml-platform}
stacks:
  train:
    driver: "550.54.15"
    cuda: "12.4"
    cudnn: "9.1.0"
    frameworks: {pytorch: "2.3.1"}
    images:
      - "registry.example/ml/train@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58"
      - "nvcr.io/nvidia/k8s/dcgm-exporter@sha256:69f97546c05d33cb2e92b8224e9071cd9114725f1a6361996d439e65ae9bf2b4"
  infer:
    driver: "560.35.03"
    cuda: "12.6"
    images: ["nvcr.io/nvidia/tritonserver@sha256:b7933ed6180d9e2895a9d2df885e2a8b92e998a3c16297581f5b8698daacf492"]
networks:
  vlans:
    - {name: ml-fabric, id: 100, cidr: 10.100.0.0/16, vrf: ml, purpose: training, mtu: 9000}
    - {name: mgmt, id: 10, cidr: 10.10.0.0/22, vrf: mgmt, purpose: management, mtu: 1500}
storage:
  tiers:
    - {name: hot, kind: nvme, capacity_tb: 100, classification: confidential, encryption: {at_rest: aes-256-xts}}
    - {name: scratch, kind: nvme, capacity_tb: 10, classification: internal}
    - {name: shared, kind: parallel-fs, backend: lustre, capacity_tb: 500, classification: confidential,
       encryption: {at_rest: aes-256-xts}}
    - {name: cold, kind: object, backend: s3, region: us-east-1, capacity_tb: 900, classification: internal,
       encryption: {at_rest: aes-256-gcm}}
node_pools:
  - name: train
    provider: baremetal
    count: 4
    role: training
    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 1536}
    stack: train
    boot: {method: pxe, image: "http://pxe.example/ubuntu-22.04/"}
    networks: [ml-fabric, mgmt]
    storage: [hot, scratch, shared]
    bmc: {endpoints: "https://bmc-{index}.example", credentials: env:BMC}
  - name: infer
    provider: baremetal
    count: 2
    role: inference
    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 64, memory_gb: 1024}
    stack: infer
    boot: {method: virtual-media, image: "https://images.example/ubuntu-24.04.iso"}
    storage: [scratch]
    bmc: {endpoints: "https://bmc-i-{index}.example", credentials: env:BMC}
    mig: {profile: "3g.40gb", instances: 2}
burst_pools:
  - {name: aws-p5, provider: aws, region: us-east-1, instance_type: p5.48xlarge, desired: 1, max: 4,
     spot: true, stack: train, checkpointing: {interval_minutes: 30, target: cold}, storage: [cold]}
monitoring: {dcgm: true, prometheus: true, grafana: false}
)";

bp::Blueprint load(const std::string& text = kBlueprint) {
  auto r = bp::load_string(text, "x.yaml");
  std::string diags;
  for (const auto& d : r.diagnostics) diags += format_diagnostic(d);
  INFO(diags);
  REQUIRE(r.ok());
  return r.blueprint;
}

render::CloudInit render_ok(const bp::Blueprint& b, const std::string& pool) {
  auto r = render::render_pool(b, pool);
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r.ok());
  return *r;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

std::vector<std::string> pool_names(const bp::Blueprint& b) {
  std::vector<std::string> names;
  for (const auto& p : b.node_pools) names.push_back(p.name);
  for (const auto& p : b.burst_pools) names.push_back(p.name);
  return names;
}

/// `cloud-init schema` of the installed cloud-init (22.4 on Debian 12: `-c FILE`).
test::RunResult cloud_init_schema(const std::string& user_data) {
  test::TempDir dir;
  return test::run_program({"cloud-init", "schema", "--config-file", dir.write("user-data", user_data)});
}

/// Parses a network config v2 with cloud-init's own network-state parser
/// (cloud-init 22.4 has no network-config schema command), strictly
/// (skip_broken=False), and prints the interfaces it understood.
test::RunResult cloud_init_network(const std::string& network_config) {
  const char* script = R"(import sys, yaml
from cloudinit.net.network_state import parse_net_config_data
cfg = yaml.safe_load(open(sys.argv[1]))
assert cfg.get("version") == 2, "not a network config version 2"
state = parse_net_config_data(cfg, skip_broken=False)
for iface in sorted(state.iter_interfaces(), key=lambda i: i["name"]):
    print(iface["name"], iface.get("type"), iface.get("vlan_id"), iface.get("vlan-raw-device"), iface.get("mtu"))
)";
  test::TempDir dir;
  // Debian's interpreter, the one python3-cloud-init is installed for (not a pyenv shim).
  return test::run_program({"/usr/bin/python3", dir.write("check.py", script), dir.write("network-config", network_config)});
}

}  // namespace

TEST_CASE("render pins the stack's driver, CUDA and cuDNN through the NVIDIA CUDA apt repository", "[render]") {
  auto ci = render_ok(load(), "train");
  const auto& ud = ci.user_data;
  CHECK(ud.rfind("#cloud-config\n", 0) == 0);
  CHECK(contains(ud, "      source: \"deb [signed-by=$KEY_FILE] "
                     "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/ /\"\n"
                     "      keyid: \"EB693B3035CD5710E231E123A4B469963BF863CC\"\n"));
  CHECK(contains(ud, "      Explanation: plinth: stack 'train' pins NVIDIA driver 550.54.15\n"
                     "      Package: cuda-drivers cuda-drivers-* nvidia-* libnvidia-* xserver-xorg-video-nvidia-*\n"
                     "      Pin: version 550.54.15-*\n"
                     "      Pin-Priority: 1001\n"));
  CHECK(contains(ud, "      Package: libcudnn9* cudnn9*\n      Pin: version 9.1.0.*\n"));
  CHECK(contains(ud, "      Pin: version 1.15.0-*\n"));
  CHECK(contains(ud, "  - [\"env\", \"DEBIAN_FRONTEND=noninteractive\", \"apt-get\", \"install\", \"-y\", "
                     "\"--no-install-recommends\", \"cuda-drivers-550\", \"cuda-toolkit-12-4\", \"libcudnn9-cuda-12\", "
                     "\"libcudnn9-dev-cuda-12\", \"nvidia-container-toolkit\", \"docker.io\", \"cryptsetup\", \"mdadm\", "
                     "\"xfsprogs\"]\n"));
  CHECK(contains(ud, "  - [\"docker\", \"pull\", \"registry.example/ml/train@sha256:"
                     "116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58\"]\n"));
  CHECK(contains(ud, "  - [\"nvidia-ctk\", \"runtime\", \"configure\", \"--runtime=docker\"]\n"));
  CHECK(contains(ud, "  message: \"plinth: rebooting to load NVIDIA driver 550.54.15\"\n"));
}

TEST_CASE("a stack with a CUDA patch release pins the toolkit version too, and 24.04 images use the ubuntu2404 repo",
          "[render]") {
  std::string text = kBlueprint;
  text.replace(text.find("cuda: \"12.6\""), 12, "cuda: \"12.6.1\"");
  auto ci = render_ok(load(text), "infer");
  CHECK(contains(ci.user_data, "      Package: cuda-toolkit-12-6\n      Pin: version 12.6.1-*\n"));
  CHECK(contains(ci.user_data, "/compute/cuda/repos/ubuntu2404/x86_64/ /\""));
  CHECK(contains(ci.user_data, "\"cuda-drivers-560\", \"cuda-toolkit-12-6\", \"nvidia-container-toolkit\""));
  CHECK_FALSE(contains(ci.user_data, "libcudnn"));  // the infer stack pins no cuDNN
}

TEST_CASE("node pool networks become VLAN interfaces on a bonded uplink in network config v2", "[render]") {
  auto ci = render_ok(load(), "train");
  const auto& nc = ci.network_config;
  CHECK(contains(nc, "\nversion: 2\n"));
  CHECK(contains(nc, "  bond0:\n    interfaces: [uplinks]\n    mtu: 9000\n    dhcp4: true\n"));
  // Sorted by VLAN id, whatever the pool's order.
  CHECK(contains(nc, "vlans:\n"
                     "  vlan10:  # mgmt 10.10.0.0/22 (management)\n"
                     "    id: 10\n    link: bond0\n    mtu: 1500\n    dhcp4: true\n"
                     "  vlan100:  # ml-fabric 10.100.0.0/16 (training)\n"
                     "    id: 100\n    link: bond0\n    mtu: 9000\n    dhcp4: true\n"));
  // No networks, no network config; burst pools use their cloud's networking.
  CHECK(render_ok(load(), "infer").network_config.empty());
  CHECK(render_ok(load(), "aws-p5").network_config.empty());
}

TEST_CASE("LUKS2 AES-256-XTS only for the pool's encrypted NVMe tiers, keyed from a file", "[render]") {
  auto b = load();
  auto ud = render_ok(b, "train").user_data;
  CHECK(contains(ud, "  - [\"/usr/local/sbin/plinth-luks\", \"hot\", \"/etc/plinth/keys/hot.key\", \"/mnt/hot\"]\n"));
  CHECK(contains(ud, "cryptsetup luksFormat --batch-mode --type luks2 --cipher aes-xts-plain64 --key-size 512 "
                     "--key-file \"$key\" \"$md\""));
  CHECK_FALSE(contains(ud, "plinth-luks\", \"scratch\""));  // NVMe, not encrypted
  CHECK_FALSE(contains(ud, "plinth-luks\", \"shared\""));   // encrypted, but parallel-fs
  // A pool with only the unencrypted NVMe tier, and one with only an object tier, get no LUKS at all.
  for (const char* pool : {"infer", "aws-p5"}) {
    INFO(pool);
    auto other = render_ok(b, pool).user_data;
    CHECK_FALSE(contains(other, "plinth-luks"));
    CHECK_FALSE(contains(other, "cryptsetup"));
  }
  // luks2 as the at_rest value is honoured the same way.
  std::string text = kBlueprint;
  const std::string plain = "{name: scratch, kind: nvme, capacity_tb: 10, classification: internal}";
  text.replace(text.find(plain), plain.size(),
               "{name: scratch, kind: nvme, capacity_tb: 10, classification: internal, encryption: {at_rest: luks2}}");
  CHECK(contains(render_ok(load(text), "infer").user_data,
                 "  - [\"/usr/local/sbin/plinth-luks\", \"scratch\", \"/etc/plinth/keys/scratch.key\", \"/mnt/scratch\"]\n"));
}

TEST_CASE("the DCGM exporter runs only when monitoring.dcgm is on, preferring the stack's own image", "[render]") {
  auto b = load();
  auto train = render_ok(b, "train").user_data;
  CHECK(contains(train, "  - path: /etc/systemd/system/dcgm-exporter.service\n"));
  CHECK(contains(train, "--gpus all --cap-add SYS_ADMIN --publish 9400:9400 nvcr.io/nvidia/k8s/dcgm-exporter@sha256:"
                        "69f97546c05d33cb2e92b8224e9071cd9114725f1a6361996d439e65ae9bf2b4\n"));
  CHECK(contains(train, "  - [\"systemctl\", \"enable\", \"dcgm-exporter.service\"]\n"));
  // The infer stack has no exporter image: the renderer's pinned default is pulled and run.
  auto infer = render_ok(b, "infer").user_data;
  CHECK(contains(infer, std::string("--publish 9400:9400 ") + render::kDefaultDcgmExporterImage + "\n"));
  CHECK(contains(infer, std::string("  - [\"docker\", \"pull\", \"") + render::kDefaultDcgmExporterImage + "\"]\n"));

  b.monitoring->dcgm = false;
  auto off = render_ok(b, "train").user_data;
  CHECK_FALSE(contains(off, "dcgm-exporter.service"));
  CHECK_FALSE(contains(off, "--publish 9400:9400"));
  b.monitoring.reset();
  CHECK_FALSE(contains(render_ok(b, "train").user_data, "dcgm-exporter.service"));
}

TEST_CASE("a MIG profile becomes a boot-time nvidia-smi mig layout", "[render]") {
  auto ud = render_ok(load(), "infer").user_data;
  CHECK(contains(ud, "      nvidia-smi mig -cgi '3g.40gb,3g.40gb' -C\n"));
  CHECK(contains(ud, "  - [\"systemctl\", \"enable\", \"plinth-mig.service\"]\n"));
  CHECK(contains(ud, "After=docker.service nvidia-persistenced.service plinth-mig.service\n"));
  CHECK_FALSE(contains(render_ok(load(), "train").user_data, "plinth-mig"));
}

TEST_CASE("node.json carries the pool identity", "[render]") {
  auto ud = render_ok(load(), "aws-p5").user_data;
  CHECK(contains(ud, "  - path: /etc/plinth/node.json\n"));
  CHECK(contains(ud, "        \"instance_type\": \"p5.48xlarge\",\n"));
  CHECK(contains(ud, "        \"kind\": \"burst_pool\",\n"));
  CHECK(contains(ud, "        \"pool\": \"aws-p5\",\n"));
  CHECK(contains(ud, "        \"blueprint\": \"render-test\",\n"));
}

TEST_CASE("rendering is deterministic and the hash follows every pin", "[render]") {
  auto b = load();
  auto first = render_ok(b, "train");
  CHECK(first == render_ok(load(), "train"));
  CHECK(first.hash.size() == 64);
  CHECK(first.hash == sha256_hex(first.user_data + first.network_config));

  auto changed = b;
  changed.stacks[0].driver = "550.90.07";
  auto bumped = render_ok(changed, "train");
  CHECK(bumped.hash != first.hash);
  CHECK(contains(bumped.user_data, "Pin: version 550.90.07-*"));

  changed = b;
  changed.stacks[0].cudnn = "9.1";  // a cuDNN minor series pins every patch of it
  CHECK(contains(render_ok(changed, "train").user_data, "      Package: libcudnn9* cudnn9*\n      Pin: version 9.1.*\n"));

  changed = b;
  changed.vlans[0].mtu = 4200;  // network config only
  CHECK(render_ok(changed, "train").hash != first.hash);

  // Listing the same networks and tiers in another order changes nothing.
  changed = b;
  std::reverse(changed.node_pools[0].networks.begin(), changed.node_pools[0].networks.end());
  std::reverse(changed.node_pools[0].storage.begin(), changed.node_pools[0].storage.end());
  CHECK(render_ok(changed, "train").hash == first.hash);
}

TEST_CASE("an unknown pool is an error that suggests the closest name", "[render]") {
  auto b = load();
  auto r = render::render_pool(b, "trian");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::NotFound);
  CHECK(r.error().message == "unknown pool 'trian'; did you mean 'train'? Pools in this blueprint: train, infer, aws-p5");
  auto far = render::render_pool(b, "zzzzzzzz");
  REQUIRE_FALSE(far.ok());
  CHECK(far.error().message == "unknown pool 'zzzzzzzz'. Pools in this blueprint: train, infer, aws-p5");
}

TEST_CASE("values that cannot be rendered safely are refused with a fix", "[render]") {
  auto b = load();
  b.stacks[0].driver = "550-latest";
  auto r = render::render_pool(b, "train");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "stack 'train' pins driver '550-latest'; give the exact NVIDIA driver version, e.g. \"550.54.15\"");

  b = load();
  b.stacks[0].images.push_back("registry.example/x:1; rm -rf /");
  r = render::render_pool(b, "train");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "stack 'train' lists image 'registry.example/x:1; rm -rf /', which is not a "
        "registry/repository[:tag][@sha256:digest] reference");
}

TEST_CASE("cloud-init schema accepts the user-data of every pool, and rejects a broken document", "[render][cloud-init]") {
  std::vector<std::pair<std::string, bp::Blueprint>> blueprints = {{"inline", load()}};
  for (const auto& entry : std::filesystem::directory_iterator("blueprints/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    auto r = bp::load_files({entry.path().string()});
    REQUIRE(r.ok());
    blueprints.emplace_back(entry.path().string(), r.blueprint);
  }
  REQUIRE(blueprints.size() >= 4);
  size_t pools = 0;
  for (const auto& [name, b] : blueprints) {
    for (const auto& pool : pool_names(b)) {
      INFO(name << " pool " << pool);
      auto ci = render_ok(b, pool);
      auto res = cloud_init_schema(ci.user_data);
      INFO(res.out << res.err);
      CHECK(res.exit_code == 0);
      CHECK(contains(res.out, "Valid cloud-config"));
      ++pools;
    }
  }
  CHECK(pools >= 12);

  auto broken = cloud_init_schema("#cloud-config\nruncmd: {apt: 5}\npower_state: {mode: sideways}\n");
  CHECK(broken.exit_code == 1);
  CHECK(contains(broken.err, "power_state.mode: 'sideways' is not one of"));
}

TEST_CASE("cloud-init parses every rendered network config as version 2 with the pool's VLANs", "[render][cloud-init]") {
  auto b = load();
  auto res = cloud_init_network(render_ok(b, "train").network_config);
  INFO(res.err);
  REQUIRE(res.exit_code == 0);
  CHECK(contains(res.out, "vlan10 vlan 10 bond0 1500\n"));
  CHECK(contains(res.out, "vlan100 vlan 100 bond0 9000\n"));
  CHECK(contains(res.out, "bond0 bond None None 9000\n"));

  for (const char* f : {"blueprints/examples/cluster.yaml", "blueprints/examples/lab.yaml",
                        "blueprints/examples/regulated.yaml"}) {
    auto r = bp::load_files({f});
    REQUIRE(r.ok());
    for (const auto& pool : r.blueprint.node_pools) {
      if (pool.networks.empty()) continue;
      INFO(f << " pool " << pool.name);
      auto nc = cloud_init_network(render_ok(r.blueprint, pool.name).network_config);
      INFO(nc.err);
      CHECK(nc.exit_code == 0);
      for (const auto& net : pool.networks)
        CHECK(contains(nc.out, "vlan" + std::to_string(r.blueprint.find_vlan(net)->id) + " vlan "));
    }
  }
}
