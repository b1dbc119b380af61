// render_pool: what a node needs to run, pinned to what was validated, in the
// form Debian's cloud-init (`cloud-init schema`) and netplan (`netplan
// generate`) accept, for every OS, NVSwitch, kernel module, RDMA and file
// system variant.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include <yaml-cpp/yaml.h>

#include "engine/blueprint/loader.h"
#include "engine/catalog/catalog.h"
#include "engine/core/hash.h"
#include "engine/render/render.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

using namespace plinth;
using plinth::test::contains;

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
    driver: "560.35.05"
    cuda: "12.6"
    images: ["nvcr.io/nvidia/tritonserver@sha256:b7933ed6180d9e2895a9d2df885e2a8b92e998a3c16297581f5b8698daacf492"]
networks:
  vlans:
    - {name: ml-fabric, id: 100, cidr: 10.100.0.0/16, vrf: ml, purpose: training, mtu: 9000}
    - {name: storage-net, id: 110, cidr: 10.110.0.0/16, vrf: ml, purpose: storage, mtu: 9000}
    - {name: mgmt, id: 10, cidr: 10.10.0.0/22, vrf: mgmt, purpose: management, mtu: 1500}
  fabrics:
    - {name: ib, kind: infiniband, speed_gbps: 400, topology: rail-optimized, oversubscription: "1:1"}
storage:
  tiers:
    - {name: hot, kind: nvme, capacity_tb: 100, classification: confidential, encryption: {at_rest: aes-256-xts}}
    - {name: scratch, kind: nvme, capacity_tb: 10, classification: internal}
    - {name: shared, kind: parallel-fs, backend: lustre, export: "10.110.0.10@o2ib:/shared", capacity_tb: 500,
       classification: confidential, encryption: {at_rest: aes-256-xts}}
    - {name: cold, kind: object, backend: s3, region: us-east-1, capacity_tb: 900, classification: internal,
       encryption: {at_rest: aes-256-gcm}}
node_pools:
  - name: train
    provider: baremetal
    count: 4
    role: training
    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 1536}
    stack: train
    fabric: ib
    boot: {method: pxe, image: "http://pxe.example/ubuntu-22.04/"}
    networks: [ml-fabric, storage-net, mgmt]
    storage: [hot, scratch, shared]
    interfaces: {bond: [eno1, eno2]}
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

/// kBlueprint with `from` replaced by `to` (which must occur).
std::string with(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

render::CloudInit render_ok(const bp::Blueprint& b, const std::string& pool) {
  auto r = render::render_pool(b, pool);
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r.ok());
  return *r;
}

std::string render_error(const bp::Blueprint& b, const std::string& pool) {
  auto r = render::render_pool(b, pool);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

/// The runcmd line installing packages with apt (the n-th such line).
std::string apt_line(const std::string& ud, int n) {
  size_t at = 0;
  for (int i = 0; i <= n; ++i) {
    at = ud.find("\"apt-get\", \"install\", \"-y\", \"--no-install-recommends\"", at + (i ? 1 : 0));
    if (at == std::string::npos) return "";
  }
  size_t start = ud.rfind('\n', at) + 1;
  return ud.substr(start, ud.find('\n', at) - start);
}

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

/// `netplan generate` (netplan.io) on a network config v2: the same YAML under
/// `network:` in a throw-away root, so netplan parses and validates it fully
/// (bonds, VLANs, VRFs, DHCP overrides) and writes systemd-networkd files.
test::RunResult netplan_generate(const std::string& network_config) {
  test::TempDir dir;
  std::string doc = "network:\n";
  size_t start = 0;
  while (start < network_config.size()) {
    size_t nl = network_config.find('\n', start);
    std::string line = network_config.substr(start, nl - start);
    if (!line.empty() && line[0] != '#') doc += "  " + line + "\n";
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  std::string file = dir.write("etc/netplan/50-plinth.yaml", doc);
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto r = test::run_program({"netplan", "generate", "--root-dir", dir.path()});
  if (r.exit_code == 0) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path() + "/run/systemd/network"))
      r.out += e.path().filename().string() + "\n" + test::slurp(e.path().string()) + "\n";
  }
  return r;
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
                     "      Package: cuda-drivers cuda-drivers-* nvidia-* libnvidia-* libxnvctrl* xserver-xorg-video-nvidia-*\n"
                     "      Pin: version 550.54.15-*\n"
                     "      Pin-Priority: 1001\n"));
  CHECK(contains(ud, "      Package: libcudnn9* cudnn9*\n      Pin: version 9.1.0.*\n"));
  CHECK(contains(ud, "  - [\"docker\", \"pull\", \"registry.example/ml/train@sha256:"
                     "116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58\"]\n"));
  CHECK(contains(ud, "  - [\"nvidia-ctk\", \"runtime\", \"configure\", \"--runtime=docker\"]\n"));
  CHECK(contains(ud, "  message: \"plinth: rebooting to load NVIDIA driver 550.54.15 (proprietary kernel modules)\"\n"));
}

TEST_CASE("the CUDA toolkit is pinned to the release the rules validated: 12.4 installs 12.4.1", "[render]") {
  // cuda-toolkit-12-4's components resolve to the newest 12.4.x; validation checks the driver
  // against that release (Catalog::installed_cuda), and the renderer pins the same one.
  auto ud = render_ok(load(), "train").user_data;
  CHECK(contains(ud, "      Explanation: plinth: stack 'train' pins CUDA 12.4 (installs 12.4.1)\n"
                     "      Package: cuda-toolkit-12-4\n      Pin: version 12.4.1-*\n"));
  // A patch release pins exactly that release; 24.04 images use the ubuntu2404 repository.
  auto infer = render_ok(load(with(kBlueprint, "cuda: \"12.6\"", "cuda: \"12.6.1\"")), "infer").user_data;
  CHECK(contains(infer, "      Package: cuda-toolkit-12-6\n      Pin: version 12.6.1-*\n"));
  CHECK(contains(infer, "/compute/cuda/repos/ubuntu2404/x86_64/ /\""));
  CHECK_FALSE(contains(infer, "libcudnn"));  // the infer stack pins no cuDNN
}

TEST_CASE("NVSwitch nodes install and enable the Fabric Manager of exactly the driver's version", "[render][nvswitch]") {
  auto ud = render_ok(load(), "train").user_data;  // 8 x H100-80GB: HGX H100 baseboard
  CHECK(contains(apt_line(ud, 1), "\"cuda-drivers-550\", \"nvidia-fabricmanager-550\", \"libnvidia-nscq-550\"]"));
  // nvidia-fabricmanager-550 is under the nvidia-* pin: it installs as 550.54.15, like the driver.
  CHECK(contains(ud, "Package: cuda-drivers cuda-drivers-* nvidia-* libnvidia-*"));
  CHECK(contains(ud, "  - [\"systemctl\", \"enable\", \"nvidia-fabricmanager.service\"]\n"));
  CHECK(contains(ud, "\"nvswitch\": {\n          \"fabric_manager\": true,\n          \"nvlink_subnet_manager\": false\n"));
  // Four H100s are joined directly (HGX 4-GPU): no NVSwitch, no Fabric Manager.
  auto four = render_ok(load(with(kBlueprint, "gpus_per_node: 8, cpu_cores: 96", "gpus_per_node: 4, cpu_cores: 96")), "train").user_data;
  CHECK_FALSE(contains(four, "nvidia-fabricmanager-"));
  CHECK_FALSE(contains(four, "\"enable\", \"nvidia-fabricmanager"));
  // PCIe cards never have one.
  auto pcie = render_ok(load(with(kBlueprint, "{gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96", "{gpu: L40S, gpus_per_node: 8, cpu_cores: 96")),
                        "train").user_data;
  CHECK_FALSE(contains(pcie, "nvidia-fabricmanager-"));
  CHECK_FALSE(contains(pcie, "\"enable\", \"nvidia-fabricmanager"));
  // Cloud instance types from the catalog: p5.48xlarge runs Fabric Manager, g6e does not.
  CHECK(contains(render_ok(load(), "aws-p5").user_data, "nvidia-fabricmanager-550"));
  auto g6e = render_ok(load(with(kBlueprint, "instance_type: p5.48xlarge", "instance_type: g6e.12xlarge")), "aws-p5").user_data;
  CHECK_FALSE(contains(g6e, "nvidia-fabricmanager-"));
  CHECK_FALSE(contains(g6e, "\"enable\", \"nvidia-fabricmanager"));
}

TEST_CASE("from R580 Fabric Manager and NSCQ drop the branch from their names, on Ubuntu and RHEL", "[render][nvswitch]") {
  const std::string r580 = with(kBlueprint, "driver: \"550.54.15\"", "driver: \"580.126.20\"");
  auto ud = render_ok(load(r580), "train").user_data;
  CHECK(contains(apt_line(ud, 1), "\"nvidia-open-580\", \"nvidia-fabricmanager\", \"libnvidia-nscq\"]"));
  CHECK(contains(ud, "      Pin: version 580.126.20-*\n"));  // nvidia-* and libnvidia-* hold them at the driver's version
  CHECK_FALSE(contains(ud, "nvidia-fabricmanager-580"));
  auto rhel_train = render_ok(load(with(with(r580, "oversubscription: \"1:1\"}", "oversubscription: \"1:1\", rdma_stack: inbox}"),
                                        "    storage: [hot, scratch, shared]\n", "    storage: [hot, scratch, shared]\n    os: rhel-9\n")),
                              "train").user_data;
  CHECK(contains(rhel_train, "\"nvidia-fabricmanager-580.126.20\", \"libnvidia-nscq-580.126.20\""));
  // Before R580 the branch stays in the name.
  CHECK(contains(apt_line(render_ok(load(), "train").user_data, 1), "\"nvidia-fabricmanager-550\", \"libnvidia-nscq-550\"]"));
}

TEST_CASE("GB200 compute trays run IMEX with the domain's tray addresses", "[render][imex]") {
  const std::string gb200 =
      with(with(with(kBlueprint, "driver: \"550.54.15\"\n    cuda: \"12.4\"", "driver: \"580.126.20\"\n    cuda: \"12.8\""),
                "{gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96", "{gpu: GB200, gpus_per_node: 4, cpu_cores: 96"),
           "    interfaces: {bond: [eno1, eno2]}\n",
           "    interfaces: {bond: [eno1, eno2]}\n    imex: {nodes: [10.100.1.11, 10.100.1.12, 10.100.1.13, 10.100.1.14]}\n");
  auto ud = render_ok(load(gb200), "train").user_data;
  CHECK(contains(ud, "  - path: /etc/nvidia-imex/nodes_config.cfg\n"));
  CHECK(contains(ud, "      10.100.1.11\n      10.100.1.12\n      10.100.1.13\n      10.100.1.14\n"));
  CHECK(contains(apt_line(ud, 1), "\"nvidia-imex\"]"));
  CHECK(contains(ud, "  - [\"systemctl\", \"enable\", \"nvidia-imex.service\"]\n"));
  CHECK_FALSE(contains(apt_line(ud, 1), "fabricmanager"));  // the rack's switch trays run it
  CHECK_FALSE(contains(ud, "\"enable\", \"nvidia-fabricmanager.service\""));
  CHECK(contains(ud, "\"imex\": {\n"));             // node.json says so
  // R570 names the package by branch; RHEL by version.
  auto r570 = render_ok(load(with(gb200, "driver: \"580.126.20\"", "driver: \"570.133.20\"")), "train").user_data;
  CHECK(contains(apt_line(r570, 1), "\"nvidia-imex-570\"]"));
  auto rhel = render_ok(load(with(with(gb200, "oversubscription: \"1:1\"}", "oversubscription: \"1:1\", rdma_stack: inbox}"),
                                  "    interfaces: {bond: [eno1, eno2]}\n", "    interfaces: {bond: [eno1, eno2]}\n    os: rhel-9\n")),
                        "train").user_data;
  CHECK(contains(rhel, "\"nvidia-imex-580.126.20\""));
  // Without imex the pool renders no IMEX (rule IMEX001 refuses such a GB200 pool); H100 pools never get it.
  auto h100 = render_ok(load(), "train").user_data;
  CHECK_FALSE(contains(h100, "nodes_config.cfg"));
  CHECK_FALSE(contains(h100, "\"nvidia-imex.service\"]"));
}

TEST_CASE("HGX B200 adds the NVLink Subnet Manager and ib_umad of fourth-generation NVSwitch", "[render][nvswitch]") {
  std::string text = with(with(kBlueprint, "{gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 1536}",
                               "{gpu: B200, gpus_per_node: 8, cpu_cores: 112, memory_gb: 2048}"),
                          "driver: \"550.54.15\"\n    cuda: \"12.4\"", "driver: \"570.133.20\"\n    cuda: \"12.8\"");
  auto ud = render_ok(load(text), "train").user_data;
  CHECK(contains(apt_line(ud, 1), "\"nvidia-open-570\", \"nvidia-fabricmanager-570\", \"libnvidia-nscq-570\", \"nvlsm\"]"));
  CHECK(contains(ud, "  - path: /etc/modules-load.d/plinth-nvlsm.conf\n"));
  CHECK(contains(ud, "      ib_umad\n"));
}

TEST_CASE("the kernel module flavour follows the stack, else NVIDIA's default for the branch and GPU", "[render][kernel-modules]") {
  // R550 defaults to the proprietary modules: cuda-drivers-550 alone.
  auto r550 = render_ok(load(), "train").user_data;
  CHECK(contains(apt_line(r550, 1), "\"--no-install-recommends\", \"cuda-drivers-550\", "));
  CHECK(contains(r550, "\"kernel_modules\": \"proprietary\""));
  // Asking for open on R550: NVIDIA's nvidia-kernel-open-550 next to cuda-drivers-550.
  auto open550 = render_ok(load(with(kBlueprint, "    cudnn: \"9.1.0\"\n", "    cudnn: \"9.1.0\"\n    kernel_modules: open\n")), "train").user_data;
  CHECK(contains(apt_line(open550, 1), "\"nvidia-kernel-open-550\", \"cuda-drivers-550\", "));
  CHECK(contains(open550, "rebooting to load NVIDIA driver 550.54.15 (open kernel modules)"));
  // From R560 the open modules are the default: nvidia-open-560.
  auto r560 = render_ok(load(), "infer").user_data;
  CHECK(contains(apt_line(r560, 0), "\"--no-install-recommends\", \"nvidia-open-560\", "));
  // Proprietary on R560 when asked for.
  auto prop560 = render_ok(load(with(kBlueprint, "    cuda: \"12.6\"\n", "    cuda: \"12.6\"\n    kernel_modules: proprietary\n")), "infer")
                     .user_data;
  CHECK(contains(apt_line(prop560, 0), "\"--no-install-recommends\", \"cuda-drivers-560\", "));
  // Blackwell runs only the open modules: asking for proprietary cannot be rendered.
  std::string b200 = with(with(with(kBlueprint, "{gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 64, memory_gb: 1024}",
                                    "{gpu: B200, gpus_per_node: 8, cpu_cores: 112, memory_gb: 2048}"),
                               "driver: \"560.35.05\"\n    cuda: \"12.6\"", "driver: \"570.133.20\"\n    cuda: \"12.8\"\n    kernel_modules: proprietary"),
                          "    mig: {profile: \"3g.40gb\", instances: 2}\n", "");
  CHECK(render_error(load(b200), "infer") ==
        "pool 'infer' runs B200, which supports only the open NVIDIA kernel modules, but stack 'infer' asks for proprietary; "
        "set kernel_modules: open (or leave it out for NVIDIA's default)");
}

TEST_CASE("Secure Boot on Ubuntu installs Canonical's signed precompiled modules, checked against the pin, no DKMS",
          "[render][kernel-modules]") {
  // The inbox RDMA stack (the kernel's own, signed modules), R580, Secure Boot on.
  const std::string secure =
      with(with(with(kBlueprint, "oversubscription: \"1:1\"}", "oversubscription: \"1:1\", rdma_stack: inbox}"),
                "driver: \"550.54.15\"\n    cuda: \"12.4\"", "driver: \"580.126.20\"\n    cuda: \"12.4\""),
           "interfaces: {bond: [eno1, eno2]}", "interfaces: {bond: [eno1, eno2]}\n    bios: {SecureBoot: Enabled}");
  auto ud = render_ok(load(secure), "train").user_data;
  // The userspace without DKMS, from Ubuntu's archive, held at the driver by the pin; Fabric Manager from NVIDIA's.
  CHECK(contains(apt_line(ud, 1), "\"--no-install-recommends\", \"nvidia-headless-no-dkms-580-server\", "
                                  "\"nvidia-utils-580-server\", \"nvidia-fabricmanager\", \"libnvidia-nscq\"]"));
  CHECK(contains(ud, "Package: cuda-drivers cuda-drivers-* nvidia-* libnvidia-* libxnvctrl* xserver-xorg-video-nvidia-*\n"
                     "      Pin: version 580.126.20-*\n"));
  // The signed modules for the running kernel (open: R580's default on H100), the signatures on amd64, then the check.
  CHECK(contains(ud, "apt-get install -y --no-install-recommends \\\"linux-modules-nvidia-580-server-open-$k\\\"\\n"));
  CHECK(contains(ud, "\\\"linux-signatures-nvidia-$k\\\""));
  CHECK(contains(ud, "v=$(modinfo -F version nvidia)\\nif [ \\\"$v\\\" != '580.126.20' ]; then"));
  CHECK(contains(ud, "plinth: Ubuntu's signed NVIDIA modules for kernel $k are driver $v, but the stack pins 580.126.20; "
                     "pin the release Ubuntu publishes for this kernel (apt-cache policy "
                     "linux-modules-nvidia-580-server-open-$k) or turn Secure Boot off"));
  // Nothing builds: no DKMS package, no kernel headers.
  CHECK_FALSE(contains(ud, "nvidia-open-580"));
  CHECK_FALSE(contains(ud, "cuda-drivers-580\""));
  CHECK_FALSE(contains(ud, "linux-headers-"));
  // The modules come after the userspace, before CUDA.
  CHECK(ud.find("nvidia-headless-no-dkms-580-server") < ud.find("linux-modules-nvidia-580-server-open"));
  CHECK(ud.find("linux-modules-nvidia-580-server-open") < ud.find("\"cuda-toolkit-12-4\""));

  // The proprietary modules: Canonical's objects and the package that links them with the signatures.
  auto prop = render_ok(load(with(secure, "    cudnn: \"9.1.0\"\n", "    cudnn: \"9.1.0\"\n    kernel_modules: proprietary\n")),
                        "train").user_data;
  CHECK(contains(prop, "--no-install-recommends \\\"linux-objects-nvidia-580-server-$k\\\" "
                       "\\\"linux-modules-nvidia-580-server-$k\\\"\\n"));
  // DOCA-OFED still builds with DKMS, so the headers stay (and DRV007 says why).
  auto doca = render_ok(load(with(secure, ", rdma_stack: inbox}", "}")), "train").user_data;
  CHECK(contains(doca, "linux-headers-$(uname -r)"));
  CHECK(contains(doca, "linux-modules-nvidia-580-server-open-$k"));
  // Secure Boot off, or RHEL: the DKMS packages as before.
  auto off = render_ok(load(with(secure, "bios: {SecureBoot: Enabled}", "bios: {SecureBoot: Disabled}")), "train").user_data;
  CHECK(contains(apt_line(off, 1), "\"nvidia-open-580\""));
  CHECK_FALSE(contains(off, "linux-modules-nvidia"));
  auto rhel = render_ok(load(with(secure, "bios: {SecureBoot: Enabled}", "bios: {SecureBoot: Enabled}\n    os: rocky-9")),
                        "train").user_data;
  CHECK(contains(rhel, "\"nvidia-driver:580-open\""));
  CHECK_FALSE(contains(rhel, "linux-modules-nvidia"));
}

TEST_CASE("Grace superchips use the sbsa repositories", "[render]") {
  std::string text = with(with(kBlueprint, "{gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 64, memory_gb: 1024}",
                               "{gpu: GH200-96GB, gpus_per_node: 1, cpu_cores: 72, memory_gb: 480}"),
                          "    mig: {profile: \"3g.40gb\", instances: 2}\n", "");
  auto ud = render_ok(load(text), "infer").user_data;
  CHECK(contains(ud, "/compute/cuda/repos/ubuntu2404/sbsa/ /\""));
  CHECK(contains(ud, "\"arch\": \"sbsa\""));
  CHECK(contains(ud, "\"kernel_modules\": \"open\""));  // GH200 runs only the open modules
}

TEST_CASE("only the named interfaces are bonded, RDMA rails stay apart, one default route, VRFs", "[render][network]") {
  const auto nc = render_ok(load(), "train").network_config;
  CHECK(contains(nc, "ethernets:\n  uplink0:\n    match:\n      name: \"eno1\"\n    mtu: 9000\n"
                     "  uplink1:\n    match:\n      name: \"eno2\"\n    mtu: 9000\n"));
  CHECK_FALSE(contains(nc, "\"en*\""));  // the old catch-all that swallowed RoCE rails
  CHECK(contains(nc, "  bond0:\n    interfaces: [uplink0, uplink1]\n    mtu: 9000\n    dhcp4: false\n"));
  CHECK(contains(nc, "# RDMA rails ib* kept out of the bond"));
  // The management VLAN carries the only default route; the others take addresses, not routes.
  CHECK(contains(nc, "  vlan10:  # mgmt 10.10.0.0/22 (management), default route\n"
                     "    id: 10\n    link: bond0\n    mtu: 1500\n    dhcp4: true\n  vlan100:"));
  CHECK(contains(nc, "  vlan100:  # ml-fabric 10.100.0.0/16 (training)\n"
                     "    id: 100\n    link: bond0\n    mtu: 9000\n    dhcp4: true\n"
                     "    dhcp4-overrides:\n      use-routes: false\n      use-dns: false\n"));
  // The IB rails take an IPoIB address (DHCP) for Lustre over o2ib, without routes either.
  CHECK(contains(nc, "  rail0:  # IPoIB rail on fabric ib (Lustre over o2ib)\n    match:\n      name: \"ib*\"\n"
                     "    dhcp4: true\n    dhcp4-overrides:\n      use-routes: false\n      use-dns: false\n"));
  const std::regex routes("use-routes: false");
  CHECK(std::distance(std::sregex_iterator(nc.begin(), nc.end(), routes), std::sregex_iterator()) == 3);
  // The VLANs' VRF: ml holds both data VLANs; the default-route VLAN stays in the main table.
  CHECK(contains(nc, "vrfs:\n  vrf-ml:\n    table: 1001\n    interfaces: [vlan100, vlan110]\n"));
  CHECK_FALSE(contains(nc, "vrf-mgmt"));
  // Without interfaces:, the on-board ports (eno*) are bonded.
  auto b = load();
  b.node_pools[0].interfaces.reset();
  CHECK(contains(render_ok(b, "train").network_config, "  uplink0:\n    match:\n      name: \"eno*\"\n"));
  // No networks, no network config; burst pools use their cloud's networking.
  CHECK(render_ok(load(), "infer").network_config.empty());
  CHECK(render_ok(load(), "aws-p5").network_config.empty());
}

TEST_CASE("RoCE rails get their own interfaces with addresses but no routes", "[render][network]") {
  std::string text = with(with(kBlueprint, "    - {name: ib, kind: infiniband, speed_gbps: 400, topology: rail-optimized, oversubscription: \"1:1\"}",
                               "    - {name: ib, kind: roce-v2, speed_gbps: 400, topology: rail-optimized, oversubscription: \"1:1\", pfc: true, ecn: true}"),
                          "interfaces: {bond: [eno1, eno2]}", "interfaces: {bond: [eno1, eno2], rdma: [ens1f0np0, ens2f0np0]}");
  const auto nc = render_ok(load(text), "train").network_config;
  CHECK(contains(nc, "  rail0:  # RoCE rail on fabric ib\n    match:\n      name: \"ens1f0np0\"\n    mtu: 9000\n    dhcp4: true\n"
                     "    dhcp4-overrides:\n      use-routes: false\n      use-dns: false\n"));
  CHECK(contains(nc, "  bond0:\n    interfaces: [uplink0, uplink1]\n"));
  auto res = netplan_generate(nc);
  INFO(res.err);
  CHECK(res.exit_code == 0);
  CHECK(contains(res.out, "Name=ens1f0np0"));
}

TEST_CASE("RDMA pools get DOCA-OFED before the driver and load nvidia-peermem", "[render][rdma]") {
  auto ud = render_ok(load(), "train").user_data;
  // The source goes into sources.list.d only with its key (runcmd): cloud-init's package_update runs
  // in between and would fail on a source whose key is not there yet (status: error).
  CHECK_FALSE(contains(ud, "  - path: /etc/apt/sources.list.d/doca.list\n"));
  CHECK(contains(ud, "  - path: /etc/plinth/apt/doca.list\n"));
  const size_t key = ud.find("gpg --dearmor --yes -o /etc/apt/keyrings/doca.gpg && install -m 0644 "
                             "/etc/plinth/apt/doca.list /etc/apt/sources.list.d/doca.list && apt-get update");
  CHECK(key != std::string::npos);
  CHECK(key > ud.find("runcmd:\n"));
  CHECK(contains(ud, "deb [signed-by=/etc/apt/keyrings/doca.gpg] https://linux.mellanox.com/public/repo/doca/2.9.2/ubuntu22.04/x86_64/ ./"));
  CHECK(contains(ud, "      nvidia-peermem\n"));
  // DOCA-OFED is installed in its own step, before the driver whose DKMS build links nvidia-peermem against it.
  CHECK(contains(apt_line(ud, 0), "\"--no-install-recommends\", \"doca-ofed\"]"));
  CHECK(contains(apt_line(ud, 1), "\"cuda-drivers-550\""));
  CHECK(ud.find("doca-ofed") < ud.find("\"cuda-drivers-550\""));
  // The inbox stack instead: rdma-core, no DOCA repository, no peermem.
  auto inbox = render_ok(load(with(kBlueprint, "oversubscription: \"1:1\"}", "oversubscription: \"1:1\", rdma_stack: inbox}")), "train").user_data;
  CHECK(contains(apt_line(inbox, 0), "\"rdma-core\", \"ibverbs-providers\", \"ibverbs-utils\", \"infiniband-diags\", \"perftest\"]"));
  CHECK_FALSE(contains(inbox, "doca"));
  CHECK_FALSE(contains(inbox, "nvidia-peermem"));
  // Pools without an RDMA fabric get neither.
  CHECK_FALSE(contains(render_ok(load(), "infer").user_data, "doca"));
}

TEST_CASE("burst instances with EFA get the signed EFA installer and aws-ofi-nccl after the driver", "[render][efa]") {
  auto ud = render_ok(load(), "aws-p5").user_data;  // p5.48xlarge: 32 EFA interfaces
  const std::string step =
      "  - [\"sh\", \"-c\", \"set -e; v=1.47.0; base=https://efa-installer.amazonaws.com; d=$(mktemp -d); cd \\\"$d\\\"; ";
  const size_t efa = ud.find(step);
  REQUIRE(efa != std::string::npos);
  // The tarball is unpacked only after its signature checks out against AWS's key.
  const size_t verify = ud.find("gpg --batch --verify \\\"aws-efa-installer-$v.tar.gz.sig\\\" \\\"aws-efa-installer-$v.tar.gz\\\"", efa);
  CHECK(verify != std::string::npos);
  CHECK(verify < ud.find("tar -xf", efa));
  CHECK(ud.find("./efa_installer.sh -y;", efa) != std::string::npos);
  CHECK(ud.find("--skip-plugin") == std::string::npos);  // the plugin NCCL needs is installed
  // After the driver and CUDA (the kernel module builds against the headers installed first).
  CHECK(ud.find("\"cuda-drivers-550\"") < efa);
  // Instance types without EFA, and node pools, get none.
  auto g5 = render_ok(load(with(kBlueprint, "instance_type: p5.48xlarge", "instance_type: g5.2xlarge")), "aws-p5").user_data;
  CHECK_FALSE(contains(g5, "efa-installer"));
  CHECK_FALSE(contains(render_ok(load(), "train").user_data, "efa-installer"));
  // RHEL runs the same installer.
  auto rhel = render_ok(load(with(kBlueprint, "spot: true, stack: train,", "spot: true, stack: train, os: rhel-9,")), "aws-p5").user_data;
  CHECK(contains(rhel, "./efa_installer.sh -y;"));
}

TEST_CASE("Azure ND burst pools get the InfiniBand stack: DOCA-OFED with nvidia-peermem, rdma-core on RHEL", "[render][rdma]") {
  const std::string nd = with(kBlueprint, "  - {name: aws-p5, provider: aws, region: us-east-1, instance_type: p5.48xlarge,",
                              "  - {name: aws-p5, provider: azure, region: eastus, resource_group: rg, instance_type: Standard_ND96isr_H100_v5,");
  auto ud = render_ok(load(nd), "aws-p5").user_data;
  CHECK(contains(apt_line(ud, 0), "\"--no-install-recommends\", \"doca-ofed\"]"));
  CHECK(ud.find("\"doca-ofed\"]") < ud.find("\"nvidia-fabricmanager-550\""));  // before the driver, for peermem
  CHECK(contains(ud, "      nvidia-peermem\n"));
  CHECK(contains(ud, "\"kind\": \"infiniband\""));  // node.json
  CHECK_FALSE(contains(ud, "efa-installer"));
  auto rhel = render_ok(load(with(nd, "spot: true, stack: train,", "spot: true, stack: train, os: rhel-9,")), "aws-p5").user_data;
  CHECK(contains(rhel, "\"dnf\", \"install\", \"-y\", \"rdma-core\", \"libibverbs-utils\""));
  CHECK_FALSE(contains(rhel, "doca"));
  // Google's A3 types need GPUDirect-TCPX, which Plinth does not set up (BURST004): nothing RDMA is rendered.
  auto a3 = render_ok(load(with(kBlueprint, "  - {name: aws-p5, provider: aws, region: us-east-1, instance_type: p5.48xlarge,",
                                "  - {name: aws-p5, provider: gcp, region: us-central1, instance_type: a3-highgpu-8g,")),
                      "aws-p5").user_data;
  CHECK_FALSE(contains(a3, "doca"));
  CHECK_FALSE(contains(a3, "efa-installer"));
  CHECK_FALSE(contains(a3, "/etc/nccl.conf"));
}

TEST_CASE("Azure ND burst pools get Azure's NCCL topology file and /etc/nccl.conf pointing at it", "[render][rdma]") {
  const std::string nd = with(kBlueprint, "  - {name: aws-p5, provider: aws, region: us-east-1, instance_type: p5.48xlarge,",
                              "  - {name: aws-p5, provider: azure, region: eastus, resource_group: rg, instance_type: Standard_ND96isr_H100_v5,");
  auto ud = render_ok(load(nd), "aws-p5").user_data;
  // Azure/azhpc-images' ndv5-topo.xml, where Azure's HPC images put it: GPU 0001:00:00.0 beside NIC 0101:00:00.0.
  REQUIRE(contains(ud, "  - path: /opt/microsoft/ndv5-topo.xml\n    owner: \"root:root\"\n    permissions: \"0644\"\n"
                       "    content: |\n      <system version=\"1\">\n"));
  CHECK(contains(ud, "            <pci busid=\"0001:00:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>\n"
                     "            <pci busid=\"0101:00:00.0\" class=\"0x020700\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>\n"));
  CHECK(contains(ud, "  - path: /etc/nccl.conf\n    owner: \"root:root\"\n    permissions: \"0644\"\n    content: |\n"
                     "      NCCL_IB_PCI_RELAXED_ORDERING=1\n      NCCL_TOPO_FILE=/opt/microsoft/ndv5-topo.xml\n"
                     "      NCCL_IGNORE_CPU_AFFINITY=1\n"));
  // The written file is the vendored one, byte for byte.
  YAML::Node doc = YAML::Load(ud);
  std::string written;
  for (const auto& f : doc["write_files"])
    if (f["path"].as<std::string>() == "/opt/microsoft/ndv5-topo.xml") written = f["content"].as<std::string>();
  CHECK(written == test::slurp("providers/azure/topology/ndv5-topo.xml"));
  // ND A100 v4: the ndv4 file. AWS types: none.
  auto v4 = render_ok(load(with(nd, "Standard_ND96isr_H100_v5", "Standard_ND96amsr_A100_v4")), "aws-p5").user_data;
  CHECK(contains(v4, "  - path: /opt/microsoft/ndv4-topo.xml\n"));
  CHECK(contains(v4, "      NCCL_TOPO_FILE=/opt/microsoft/ndv4-topo.xml\n"));
  CHECK_FALSE(contains(render_ok(load(), "aws-p5").user_data, "/etc/nccl.conf"));
  CHECK_FALSE(contains(v4, "NCCL_GRAPH_FILE"));
}

TEST_CASE("Azure NC A100 v4 burst pools get Azure's ncv4 topology and graph, and /etc/nccl.conf without InfiniBand",
          "[render][rdma]") {
  const std::string nc = with(kBlueprint, "  - {name: aws-p5, provider: aws, region: us-east-1, instance_type: p5.48xlarge,",
                              "  - {name: aws-p5, provider: azure, region: eastus, resource_group: rg, instance_type: Standard_NC96ads_A100_v4,");
  auto ud = render_ok(load(nc), "aws-p5").user_data;
  // As Azure/azhpc-images' components/customizations/ncv4.sh sets it: topology, graph, no relaxed ordering (no IB).
  CHECK(contains(ud, "  - path: /etc/nccl.conf\n    owner: \"root:root\"\n    permissions: \"0644\"\n    content: |\n"
                     "      NCCL_TOPO_FILE=/opt/microsoft/ncv4-topo.xml\n      NCCL_GRAPH_FILE=/opt/microsoft/ncv4-graph.xml\n"
                     "      NCCL_IGNORE_CPU_AFFINITY=1\n"));
  CHECK_FALSE(contains(ud, "NCCL_IB_PCI_RELAXED_ORDERING"));
  // Both written files are the vendored ones, byte for byte: four GPUs, NVLink-bridged in pairs.
  YAML::Node doc = YAML::Load(ud);
  std::map<std::string, std::string> written;
  for (const auto& f : doc["write_files"]) written[f["path"].as<std::string>()] = f["content"].as<std::string>();
  CHECK(written["/opt/microsoft/ncv4-topo.xml"] == test::slurp("providers/azure/topology/ncv4-topo.xml"));
  CHECK(written["/opt/microsoft/ncv4-graph.xml"] == test::slurp("providers/azure/topology/ncv4-graph.xml"));
  CHECK(contains(written["/opt/microsoft/ncv4-graph.xml"], "<graphs version=\"1\">"));
  // The one- and two-GPU NC A100 v4 sizes get none (Azure's images map no file to them).
  CHECK_FALSE(contains(render_ok(load(with(nc, "Standard_NC96ads_A100_v4", "Standard_NC48ads_A100_v4")), "aws-p5").user_data,
                       "/etc/nccl.conf"));
}

TEST_CASE("parallel-fs and NFS tiers are mounted with their transport encryption", "[render][storage]") {
  auto ud = render_ok(load(), "train").user_data;
  CHECK(contains(ud, "  - [\"/usr/local/sbin/plinth-mount\", \"lustre\", \"shared\", \"10.110.0.10@o2ib:/shared\", \"/mnt/shared\", "
                     "\"flock,_netdev,nofail\"]\n"));
  // Issue 31, item 1: rails written as a glob (ib*, the default) are not "ib0": plinth-mount picks
  // the first matching interface with an IPv4 (IPoIB) address before the first Lustre mount.
  CHECK_FALSE(contains(ud, "o2ib0(ib0)"));
  CHECK_FALSE(contains(ud, "  - path: /etc/modprobe.d/plinth-lnet.conf\n"));
  CHECK(contains(ud, "  - path: /etc/plinth/lnet-rails\n"));
  CHECK(contains(ud, "plinth-mount before the first Lustre mount\n      ib*\n"));
  // A rail named outright is LNet's interface, written once.
  auto named = render_ok(load(with(kBlueprint, "interfaces: {bond: [eno1, eno2]}", "interfaces: {bond: [eno1, eno2], rdma: [ibp12s0, ibp75s0]}")),
                         "train").user_data;
  CHECK(contains(named, "      options lnet networks=\"o2ib0(ibp12s0)\"\n"));
  CHECK_FALSE(contains(named, "  - path: /etc/plinth/lnet-rails\n"));
  // A server with a tcp NID too: a pool without an RDMA fabric mounts over the VLAN holding that
  // address (tcp0 on vlan110), never over o2ib.
  auto both = with(kBlueprint, "export: \"10.110.0.10@o2ib:/shared\"", "export: \"10.210.0.10@o2ib,10.110.0.10@tcp:/shared\"");
  auto tcp = render_ok(load(with(both, "    storage: [scratch]\n    bmc: {endpoints: \"https://bmc-i-{index}.example\"",
                                 "    networks: [storage-net, mgmt]\n    storage: [scratch, shared]\n    bmc: {endpoints: \"https://bmc-i-{index}.example\"")),
                       "infer").user_data;
  CHECK(contains(tcp, "      options lnet networks=\"tcp0(vlan110)\"\n"));
  CHECK_FALSE(contains(tcp, "  - path: /etc/plinth/lnet-rails\n"));
  CHECK(contains(render_ok(load(both), "train").user_data, "  - path: /etc/plinth/lnet-rails\n"));
  CHECK(contains(ud, "\"fs\": \"lustre\",\n            \"kind\": \"parallel-fs\",\n            \"luks\": false,\n            \"mount\": \"/mnt/shared\""));
  // Lustre encrypted in transit: shared-key (SSK) keys named on the mount.
  auto ssk = render_ok(load(with(kBlueprint, "\n       classification: confidential, encryption: {at_rest: aes-256-xts}}",
                                 "\n       classification: confidential, encryption: {at_rest: aes-256-xts, in_transit: tls1.3}}")),
                       "train").user_data;
  CHECK(contains(ssk, "\"flock,_netdev,nofail,skpath=/etc/plinth/keys/lustre-shared\"]"));
  // NFS with RPC-with-TLS on Ubuntu 24.04; refused on 22.04, whose kernel cannot.
  std::string nfs = with(with(kBlueprint, "{name: shared, kind: parallel-fs, backend: lustre, export: \"10.110.0.10@o2ib:/shared\"",
                              "{name: shared, kind: nfs, export: \"nfs.example:/export/shared\""),
                         "\n       classification: confidential, encryption: {at_rest: aes-256-xts}}",
                         "\n       classification: confidential, encryption: {at_rest: aes-256-xts, in_transit: tls1.3}}");
  CHECK(render_error(load(nfs), "train") ==
        "storage tier 'shared' of pool 'train' encrypts NFS in transit (RPC-with-TLS, xprtsec=tls), which needs Linux 6.5 or "
        "newer and ktls-utils; run the pool on os: ubuntu-24.04, or drop encryption.in_transit");
  auto noble = render_ok(load(with(nfs, "image: \"http://pxe.example/ubuntu-22.04/\"", "image: \"http://pxe.example/ubuntu-24.04/\"")),
                         "train").user_data;
  CHECK(contains(noble, "\"nfs\", \"shared\", \"nfs.example:/export/shared\", \"/mnt/shared\", \"vers=4.2,hard,nconnect=8,_netdev,nofail,xprtsec=tls\"]"));
  CHECK(contains(apt_line(noble, 2), "\"nfs-common\", \"ktls-utils\""));
  CHECK(contains(noble, "  - [\"systemctl\", \"enable\", \"--now\", \"tlshd.service\"]\n"));
  // GPFS: the cluster's cipherList must encrypt.
  auto gpfs = render_ok(load(with(with(kBlueprint, "backend: lustre, export: \"10.110.0.10@o2ib:/shared\"", "backend: gpfs, export: \"fs1\""),
                                  "\n       classification: confidential, encryption: {at_rest: aes-256-xts}}",
                                  "\n       classification: confidential, encryption: {at_rest: aes-256-xts, in_transit: tls1.3}}")),
                        "train").user_data;
  CHECK(contains(gpfs, "\"gpfs\", \"shared\", \"fs1\", \"/mnt/shared\", \"cipher\"]"));
  CHECK(contains(gpfs, "mmchconfig cipherList=AES256-GCM-SHA384"));
  // A tier without an export cannot be mounted.
  CHECK(render_error(load(with(kBlueprint, "export: \"10.110.0.10@o2ib:/shared\", ", "")), "train")
            .rfind("storage tier 'shared' of pool 'train' has no 'export' to mount", 0) == 0);
}

TEST_CASE("NVMe tiers: LUKS2 AES-256-XTS when encrypted, plain XFS otherwise", "[render][storage]") {
  auto b = load();
  auto ud = render_ok(b, "train").user_data;
  CHECK(contains(ud, "  - [\"/usr/local/sbin/plinth-nvme\", \"hot\", \"luks\", \"/etc/plinth/keys/hot.key\", \"/mnt/hot\"]\n"));
  CHECK(contains(ud, "  - [\"/usr/local/sbin/plinth-nvme\", \"scratch\", \"plain\", \"-\", \"/mnt/scratch\"]\n"));
  CHECK(contains(ud, "cryptsetup luksFormat --batch-mode --type luks2 --cipher aes-xts-plain64 --key-size 512 "
                     "--key-file \"$key\" \"$md\""));
  CHECK_FALSE(contains(render_ok(b, "aws-p5").user_data, "plinth-nvme"));
}

TEST_CASE("the container toolkit default has no known container escapes, a stack may pin its own", "[render][versions]") {
  const auto& cat = **catalog::default_catalog();
  auto ud = render_ok(load(), "train").user_data;
  CHECK(contains(ud, "      Explanation: plinth: NVIDIA container toolkit 1.17.8\n"));
  CHECK(contains(ud, "      Pin: version 1.17.8-*\n"));
  CHECK(cat.container_toolkit_advisories("1.17.8").empty());
  CHECK_FALSE(contains(ud, "1.15.0"));
  auto pinned = render_ok(load(with(kBlueprint, "    cudnn: \"9.1.0\"\n", "    cudnn: \"9.1.0\"\n    container_toolkit: \"1.18.0\"\n")), "train");
  CHECK(contains(pinned.user_data, "      Pin: version 1.18.0-*\n"));
}

TEST_CASE("the DCGM exporter default is pinned by digest, a stack's own exporter image wins", "[render][versions]") {
  auto b = load();
  auto train = render_ok(b, "train").user_data;
  CHECK(contains(train, "--gpus all --cap-add SYS_ADMIN --publish 9400:9400 nvcr.io/nvidia/k8s/dcgm-exporter@sha256:"
                        "69f97546c05d33cb2e92b8224e9071cd9114725f1a6361996d439e65ae9bf2b4\n"));
  auto infer = render_ok(b, "infer").user_data;
  const std::string image = (*catalog::default_catalog())->dcgm_exporter_image();
  CHECK(std::regex_search(image, std::regex("@sha256:[0-9a-f]{64}$")));
  CHECK(contains(infer, "--publish 9400:9400 " + image + "\n"));
  CHECK(contains(infer, "  - [\"docker\", \"pull\", \"" + image + "\"]\n"));
  b.monitoring->dcgm = false;
  CHECK_FALSE(contains(render_ok(b, "train").user_data, "dcgm-exporter.service"));
}

TEST_CASE("RHEL and Rocky get dnf repositories, module streams and a version lock", "[render][rhel]") {
  std::string text = with(kBlueprint, "image: \"http://pxe.example/ubuntu-22.04/\"", "image: \"http://pxe.example/rocky-9.4-x86_64.iso\"");
  auto ud = render_ok(load(text), "train").user_data;
  CHECK_FALSE(contains(ud, "\napt:\n"));
  CHECK(contains(ud, "yum_repos:\n  cuda-rhel9-x86_64:\n    name: \"NVIDIA CUDA rhel9 x86_64\"\n"
                     "    baseurl: \"https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/\"\n"
                     "    enabled: true\n    gpgcheck: true\n"
                     "    gpgkey: \"https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/D42D0685.pub\"\n"));
  CHECK(contains(ud, "  - [\"dnf\", \"module\", \"enable\", \"-y\", \"nvidia-driver:550-dkms\"]\n"));
  // DKMS comes from EPEL, which needs CRB (Rocky 9): both before the first package that needs them.
  const size_t crb = ud.find("  - [\"dnf\", \"config-manager\", \"--set-enabled\", \"crb\"]\n");
  const size_t epel = ud.find("  - [\"dnf\", \"install\", \"-y\", \"epel-release\"]\n");
  REQUIRE(crb != std::string::npos);
  REQUIRE(epel != std::string::npos);
  CHECK(crb < epel);
  CHECK(epel < ud.find("kernel-devel-$(uname -r)"));
  CHECK(contains(ud, "  - [\"dnf\", \"install\", \"-y\", \"cuda-drivers-550-550.54.15\", \"nvidia-fabric-manager-550.54.15\", "
                     "\"libnvidia-nscq-550-550.54.15\"]\n"));
  CHECK(contains(ud, "\"cuda-toolkit-12-4-12.4.1\""));
  CHECK(contains(ud, "  - [\"dnf\", \"versionlock\", \"add\", \"*nvidia*550.54.15*\""));
  CHECK(contains(ud, "\"rdma-core\", \"libibverbs-utils\""));  // RHEL's own RDMA stack
  CHECK(contains(ud, "podman run --rm --name dcgm-exporter --device nvidia.com/gpu=all"));
  CHECK(contains(ud, "\"os\": \"rocky-9\""));
  // os: wins over the image name; open modules use the -open stream.
  auto open = render_ok(load(with(with(text, "interfaces: {bond: [eno1, eno2]}", "interfaces: {bond: [eno1, eno2]}\n    os: rhel-8"),
                                  "    cudnn: \"9.1.0\"\n", "    cudnn: \"9.1.0\"\n    kernel_modules: open\n")),
                        "train").user_data;
  CHECK(contains(open, "/compute/cuda/repos/rhel8/x86_64/"));
  CHECK(contains(open, "\"nvidia-driver:550-open\""));
  // RHEL proper: CodeReady Builder through subscription-manager, EPEL from Fedora's release package.
  CHECK(contains(open, "  - [\"sh\", \"-c\", \"subscription-manager repos --enable "
                       "\\\"codeready-builder-for-rhel-8-$(arch)-rpms\\\"\"]\n"));
  CHECK(contains(open, "  - [\"dnf\", \"install\", \"-y\", "
                       "\"https://dl.fedoraproject.org/pub/epel/epel-release-latest-8.noarch.rpm\"]\n"));
  // DOCA-OFED's repository is per RHEL minor release, which Plinth does not know.
  CHECK(render_error(load(with(text, "oversubscription: \"1:1\"}", "oversubscription: \"1:1\", rdma_stack: doca-ofed}")), "train")
            .find("set rdma_stack: inbox") != std::string::npos);
}

TEST_CASE("mixed MIG layouts are created where the placement search put them", "[render][mig]") {
  auto ud = render_ok(load(), "infer").user_data;
  CHECK(contains(ud, "      nvidia-smi mig -cgi '3g.40gb:0,3g.40gb:4' -C\n"));
  CHECK(contains(ud, "  - [\"systemctl\", \"enable\", \"plinth-mig.service\"]\n"));
  auto balanced = render_ok(load(with(kBlueprint, "mig: {profile: \"3g.40gb\", instances: 2}", "mig: {layout: all-balanced}")), "infer");
  CHECK(contains(balanced.user_data, "MIG layout of pool infer: 2 x 1g.10gb + 1 x 2g.20gb + 1 x 3g.40gb on every GPU."));
  // 3g.40gb at slice 0 would leave the second 1g.10gb only slice 7, where no 1g instance starts.
  CHECK(contains(balanced.user_data, "      nvidia-smi mig -cgi '3g.40gb:4,2g.20gb:0,1g.10gb:2,1g.10gb:3' -C\n"));
  auto mixed = render_ok(load(with(kBlueprint, "mig: {profile: \"3g.40gb\", instances: 2}", "mig: {profiles: {\"1g.20gb\": 3, \"1g.10gb\": 2}}")),
                         "infer");
  CHECK(contains(mixed.user_data, "nvidia-smi mig -cgi '1g.20gb:0,1g.20gb:2,1g.20gb:6,1g.10gb:4,1g.10gb:5' -C\n"));
  CHECK_FALSE(contains(render_ok(load(), "train").user_data, "plinth-mig"));
}

TEST_CASE("a GPU alias renders the same bytes as its catalog name", "[render]") {
  auto name = render_ok(load(), "train");
  auto alias = render_ok(load(with(kBlueprint, "{gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96", "{gpu: \"NVIDIA H100 80GB HBM3\", gpus_per_node: 8, cpu_cores: 96")),
                         "train");
  CHECK(alias == name);
  CHECK(contains(alias.user_data, "\"gpu\": \"H100-80GB\""));
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
  CHECK(render_error(b, "train") == "stack 'train' pins driver '550-latest'; give the exact NVIDIA driver version, e.g. \"550.54.15\"");
  b = load();
  b.stacks[0].images.push_back("registry.example/x:1; rm -rf /");
  CHECK(render_error(b, "train") ==
        "stack 'train' lists image 'registry.example/x:1; rm -rf /', which is not a "
        "registry/repository[:tag][@sha256:digest] reference");
  b = load();
  b.tiers[2].remote = "host:/x; reboot";
  CHECK(render_error(b, "train") ==
        "storage tier 'shared' of pool 'train' has export 'host:/x; reboot', which cannot be used safely in a mount command");
}

namespace {

/// One rendering variant for the cloud-init / netplan matrix.
struct Variant {
  std::string name;
  std::string os;       ///< os: value
  std::string gpu;      ///< hardware line
  std::string modules;  ///< kernel_modules ("" = default)
  std::string fabric;   ///< fabric line
  std::string tier;     ///< the network tier
  std::string stack;    ///< driver + cuda
  std::string bios;     ///< a bios line ("" = none)
};

std::string variant_text(const Variant& v) {
  std::string t = kBlueprint;
  t = with(t, "{gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 1536}", v.gpu);
  t = with(t, "interfaces: {bond: [eno1, eno2]}", "interfaces: {bond: [eno1, eno2], rdma: [ens1f0np0, ens2f0np0]}\n    os: " + v.os +
                                                     (v.bios.empty() ? "" : "\n    bios: " + v.bios));
  t = with(t, "    - {name: ib, kind: infiniband, speed_gbps: 400, topology: rail-optimized, oversubscription: \"1:1\"}", v.fabric);
  t = with(t, "    - {name: shared, kind: parallel-fs, backend: lustre, export: \"10.110.0.10@o2ib:/shared\", capacity_tb: 500,\n"
              "       classification: confidential, encryption: {at_rest: aes-256-xts}}",
           v.tier);
  t = with(t, "driver: \"550.54.15\"\n    cuda: \"12.4\"", v.stack + (v.modules.empty() ? "" : "\n    kernel_modules: " + v.modules));
  return t;
}

const std::string kIb = "    - {name: ib, kind: infiniband, speed_gbps: 400, topology: rail-optimized, oversubscription: \"1:1\"}";
const std::string kRoce =
    "    - {name: ib, kind: roce-v2, speed_gbps: 400, topology: rail-optimized, oversubscription: \"1:1\", pfc: true, ecn: true}";
const std::string kLustre =
    "    - {name: shared, kind: parallel-fs, backend: lustre, export: \"10.110.0.10@o2ib:/shared\", capacity_tb: 500,\n"
    "       classification: confidential, encryption: {at_rest: aes-256-xts, in_transit: tls1.3}}";
const std::string kGpfs =
    "    - {name: shared, kind: parallel-fs, backend: gpfs, export: \"fs1\", capacity_tb: 500,\n"
    "       classification: confidential, encryption: {at_rest: aes-256-xts, in_transit: tls1.3}}";
const std::string kNfs =
    "    - {name: shared, kind: nfs, export: \"nfs.example:/export/shared\", capacity_tb: 500,\n"
    "       classification: confidential, encryption: {at_rest: aes-256-xts}}";
const std::string kNfsTls =
    "    - {name: shared, kind: nfs, export: \"nfs.example:/export/shared\", capacity_tb: 500,\n"
    "       classification: confidential, encryption: {at_rest: aes-256-xts, in_transit: tls1.3}}";
const std::string kH100x8 = "{gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 112, memory_gb: 2048}";
const std::string kL40Sx4 = "{gpu: L40S, gpus_per_node: 4, cpu_cores: 64, memory_gb: 512}";
const std::string kB200x8 = "{gpu: B200, gpus_per_node: 8, cpu_cores: 112, memory_gb: 2048}";
const std::string kR550 = "driver: \"550.54.15\"\n    cuda: \"12.4\"";
const std::string kR570 = "driver: \"570.133.20\"\n    cuda: \"12.8\"";
const std::string kR580 = "driver: \"580.126.20\"\n    cuda: \"12.4\"";
const std::string kRoceInbox = "    - {name: ib, kind: roce-v2, speed_gbps: 400, topology: rail-optimized, oversubscription: \"1:1\", "
                               "pfc: true, ecn: true, rdma_stack: inbox}";

/// Every OS, NVSwitch or not, open and proprietary modules, InfiniBand and RoCE,
/// Lustre / GPFS / NFS: each value appears, and the risky combinations all do.
const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
      {"ubuntu 22.04, NVSwitch, proprietary, IB, Lustre+SSK", "ubuntu-22.04", kH100x8, "", kIb, kLustre, kR550},
      {"ubuntu 22.04, NVSwitch, open, RoCE, GPFS", "ubuntu-22.04", kH100x8, "open", kRoce, kGpfs, kR550},
      {"ubuntu 22.04, PCIe, proprietary, RoCE, NFS", "ubuntu-22.04", kL40Sx4, "proprietary", kRoce, kNfs, kR550},
      {"ubuntu 24.04, NVSwitch B200, open, IB, NFS+TLS", "ubuntu-24.04", kB200x8, "", kIb, kNfsTls, kR570},
      {"ubuntu 24.04, PCIe, open, IB, Lustre", "ubuntu-24.04", kL40Sx4, "open", kIb, kLustre, kR570},
      {"ubuntu 24.04, NVSwitch, proprietary, RoCE, GPFS", "ubuntu-24.04", kH100x8, "proprietary", kRoce, kGpfs, kR570},
      {"rhel 9, NVSwitch, proprietary, IB, Lustre", "rhel-9", kH100x8, "", kIb, kLustre, kR550},
      {"rhel 9, NVSwitch B200, open, RoCE, NFS", "rhel-9", kB200x8, "", kRoce, kNfs, kR570},
      {"rocky 9, PCIe, open, IB, GPFS", "rocky-9", kL40Sx4, "open", kIb, kGpfs, kR550},
      {"rocky 8, NVSwitch, proprietary, RoCE, Lustre", "rocky-8", kH100x8, "proprietary", kRoce, kLustre, kR550},
      {"rhel 8, PCIe, proprietary, IB, NFS", "rhel-8", kL40Sx4, "", kIb, kNfs, kR550},
      {"ubuntu 22.04, Secure Boot, NVSwitch, open, RoCE inbox, NFS", "ubuntu-22.04", kH100x8, "open", kRoceInbox, kNfs,
       kR580, "{SecureBoot: Enabled}"},
      {"ubuntu 24.04, Secure Boot, PCIe, proprietary, IB, Lustre", "ubuntu-24.04", kL40Sx4, "proprietary", kIb, kLustre,
       kR580, "{SecureBootEnable: \"On\"}"},
  };
  return all;
}

}  // namespace

TEST_CASE("cloud-init schema accepts every rendered variant (OS x NVSwitch x modules x RDMA x file system)", "[render][cloud-init]") {
  int checked = 0;
  for (const auto& v : variants()) {
    INFO(v.name);
    auto b = load(variant_text(v));
    auto ci = render_ok(b, "train");
    auto res = cloud_init_schema(ci.user_data);
    INFO(res.out << res.err);
    CHECK(res.exit_code == 0);
    CHECK(contains(res.out, "Valid cloud-config"));
    ++checked;
  }
  CHECK(checked == 13);
  auto broken = cloud_init_schema("#cloud-config\nruncmd: {apt: 5}\npower_state: {mode: sideways}\n");
  CHECK(broken.exit_code == 1);
  CHECK(contains(broken.err, "power_state.mode: 'sideways' is not one of"));
}

TEST_CASE("cloud-init schema accepts the user-data of every pool of the example blueprints", "[render][cloud-init]") {
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
}

TEST_CASE("netplan generates systemd-networkd files from every rendered network config", "[render][network]") {
  auto res = netplan_generate(render_ok(load(), "train").network_config);
  INFO(res.err);
  REQUIRE(res.exit_code == 0);
  CHECK(contains(res.out, "10-netplan-vrf-ml.netdev\n[NetDev]\nName=vrf-ml\nKind=vrf\n\n[VRF]\nTable=1001\n"));
  CHECK(contains(res.out, "10-netplan-bond0.netdev\n[NetDev]\nName=bond0\nMTUBytes=9000\nKind=bond\n"));
  CHECK(contains(res.out, "Name=eno1"));
  CHECK_FALSE(contains(res.out, "Name=en*"));
  for (const auto& v : variants()) {
    INFO(v.name);
    auto nc = netplan_generate(render_ok(load(variant_text(v)), "train").network_config);
    INFO(nc.err);
    CHECK(nc.exit_code == 0);
  }
  for (const char* f : {"blueprints/examples/cluster.yaml", "blueprints/examples/lab.yaml", "blueprints/examples/regulated.yaml"}) {
    auto r = bp::load_files({f});
    REQUIRE(r.ok());
    for (const auto& pool : r.blueprint.node_pools) {
      if (pool.networks.empty()) continue;
      INFO(f << " pool " << pool.name);
      auto nc = netplan_generate(render_ok(r.blueprint, pool.name).network_config);
      INFO(nc.err);
      CHECK(nc.exit_code == 0);
      for (const auto& net : pool.networks) CHECK(contains(nc.out, "Name=vlan" + std::to_string(r.blueprint.find_vlan(net)->id) + "\n"));
    }
  }
}

TEST_CASE("every node runs plinth-probe from a timer, told its pool, stack and blueprint", "[render][verify]") {
  for (const char* pool : {"train", "aws-p5"}) {
    auto ud = render_ok(load(), pool).user_data;
    YAML::Node doc = YAML::Load(ud);
    std::map<std::string, YAML::Node> files;
    for (const YAML::Node& f : doc["write_files"]) files[f["path"].as<std::string>()] = YAML::Node(f);
    REQUIRE(files.count("/usr/local/sbin/plinth-probe"));
    CHECK(files["/usr/local/sbin/plinth-probe"]["content"].as<std::string>() == std::string(render::probe_script()));
    CHECK(files["/usr/local/sbin/plinth-probe"]["permissions"].as<std::string>() == "0755");
    CHECK(files["/etc/plinth/probe.conf"]["content"].as<std::string>() ==
          "# plinth: what this node was provisioned as, for plinth-probe (docs/verify.md)\npool=" + std::string(pool) +
              "\nstack=train\nblueprint=render-test\n");
    CHECK(contains(files["/etc/systemd/system/plinth-probe.timer"]["content"].as<std::string>(), "OnUnitActiveSec=5min"));
    CHECK(contains(files["/etc/systemd/system/plinth-probe.service"]["content"].as<std::string>(),
                   "ExecStart=/usr/local/sbin/plinth-probe"));
    CHECK(contains(ud, "  - [\"systemctl\", \"enable\", \"plinth-probe.timer\"]\n"));
    // Ubuntu nodes of a blueprint that declares Prometheus get the node exporter, whose textfile
    // collector reads /var/lib/prometheus/node-exporter, where the probe writes.
    CHECK(contains(ud, "\"prometheus-node-exporter\""));
  }
  auto without = render_ok(load(with(kBlueprint, "prometheus: true", "prometheus: false")), "train").user_data;
  CHECK_FALSE(contains(without, "prometheus-node-exporter"));
  CHECK(contains(without, "/usr/local/sbin/plinth-probe"));
}

namespace plinth::test::render_shellcheck {
namespace {

/// The shell a user-data document runs: each write_files entry whose content
/// starts with "#!" (by its shebang), and each runcmd entry of the form
/// [sh|bash, -c, SCRIPT]; named for the messages.
std::vector<std::pair<std::string, std::string>> shell_scripts(const std::string& user_data) {
  std::vector<std::pair<std::string, std::string>> out;
  YAML::Node doc = YAML::Load(user_data);
  for (const auto& f : doc["write_files"]) {
    std::string content = f["content"].as<std::string>("");
    if (content.rfind("#!", 0) == 0) out.emplace_back(f["path"].as<std::string>(), content);
  }
  int n = 0;
  for (const auto& c : doc["runcmd"]) {
    ++n;
    if (!c.IsSequence() || c.size() < 3) continue;
    std::string shell = c[0].as<std::string>();
    if ((shell == "sh" || shell == "bash" || shell == "/bin/sh" || shell == "/bin/bash") && c[1].as<std::string>() == "-c")
      out.emplace_back("runcmd #" + std::to_string(n), "#!/bin/" + std::string(shell.find("bash") != std::string::npos ? "bash" : "sh") +
                                                          "\n" + c[2].as<std::string>() + "\n");
  }
  return out;
}

}  // namespace

TEST_CASE("shellcheck finds nothing in the scripts of every rendered variant and every example pool", "[render][shellcheck]") {
  // Issue 31: every shell script the render writes (plinth-mount, plinth-nvme, plinth-mig,
  // plinth-probe, the sh -c steps of runcmd), per OS and variant.
  std::vector<std::pair<std::string, std::string>> docs;
  for (const auto& v : variants()) docs.emplace_back(v.name, render_ok(load(variant_text(v)), "train").user_data);
  for (const auto& entry : std::filesystem::directory_iterator("blueprints/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    auto r = bp::load_files({entry.path().string()});
    REQUIRE(r.ok());
    for (const auto& pool : pool_names(r.blueprint))
      docs.emplace_back(entry.path().string() + " pool " + pool, render_ok(r.blueprint, pool).user_data);
  }
  size_t checked = 0;
  std::set<std::string> names;
  for (const auto& [what, ud] : docs)
    for (const auto& [name, script] : shell_scripts(ud)) {
      INFO(what << ": " << name);
      test::TempDir dir;
      auto res = test::run_program({"shellcheck", "--severity=style", dir.write("script", script)});
      INFO(res.out << res.err);
      CHECK(res.exit_code == 0);
      names.insert(name);
      ++checked;
    }
  CHECK(checked >= 40);
  for (const char* must : {"/usr/local/sbin/plinth-mount", "/usr/local/sbin/plinth-nvme", "/usr/local/sbin/plinth-mig",
                           "/usr/local/sbin/plinth-probe"})
    CHECK(names.count(must) == 1);
}

}  // namespace plinth::test::render_shellcheck
