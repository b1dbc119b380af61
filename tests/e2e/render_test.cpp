// plinth render as a user runs it.
#include <catch2/catch.hpp>

#include "engine/core/hash.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_render {

TEST_CASE("plinth render prints a pool's cloud-config", "[e2e][render]") {
  auto r = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "train-a"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("#cloud-config\n", 0) == 0);
  CHECK(contains(r.out, "      Pin: version 580.126.20-*\n"));
  CHECK(contains(r.out, "\"nvidia-open-580\", \"nvidia-fabricmanager\""));  // the open modules' meta-package (R560+); R580 drops the branch from FM's name
  CHECK(contains(r.out, "\"/usr/local/sbin/plinth-nvme\", \"hot\", \"luks\", \"/etc/plinth/keys/hot.key\", \"/mnt/hot\""));
}

// Issue 14's "done means", through the binary: the example cluster's flagship pool
// (8 x H100 SXM on InfiniBand) gets everything it needs to run, and nothing that breaks it.
TEST_CASE("plinth render of the example cluster's train-a installs what an HGX H100 node needs", "[e2e][render]") {
  auto r = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "train-a"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string& ud = r.out;
  // The pinned driver, with the open kernel modules the stack chose.
  CHECK(contains(ud, "      Package: cuda-drivers cuda-drivers-* nvidia-* libnvidia-* libxnvctrl* xserver-xorg-video-nvidia-*\n"
                     "      Pin: version 580.126.20-*\n"));
  CHECK(contains(ud, "\"nvidia-open-580\", \"nvidia-fabricmanager\", \"libnvidia-nscq\"]"));
  // Fabric Manager of exactly the driver's version (the pin above covers nvidia-*), enabled for the boot after install.
  CHECK(contains(ud, "  - [\"systemctl\", \"enable\", \"nvidia-fabricmanager.service\"]\n"));
  CHECK(contains(ud, "power_state:\n  mode: reboot\n"));
  // The CUDA toolkit the validator checked: 12.4 installs 12.4.1, pinned.
  CHECK(contains(ud, "      Package: cuda-toolkit-12-4\n      Pin: version 12.4.1-*\n"));
  // GPUDirect RDMA: DOCA-OFED before the driver, nvidia-peermem loaded at boot.
  CHECK(contains(ud, "\"--no-install-recommends\", \"doca-ofed\"]"));
  CHECK(ud.find("\"doca-ofed\"]") < ud.find("\"nvidia-kernel-open-550\""));
  CHECK(contains(ud, "  - path: /etc/modules-load.d/nvidia-peermem.conf\n"));
  // Its tiers are mounted: NVMe (LUKS), Lustre over o2ib; not the old empty mount.
  CHECK(contains(ud, "  - [\"/usr/local/sbin/plinth-mount\", \"lustre\", \"shared\", \"10.210.0.10@o2ib,10.110.0.10@tcp:/shared\", \"/mnt/shared\", "));
  CHECK_FALSE(contains(ud, "\"mount\": \"\""));
  // The DCGM exporter and container toolkit are pinned (toolkit past the container-escape fixes).
  CHECK(contains(ud, "      Package: nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container1 libnvidia-container-tools\n"
                     "      Pin: version 1.17.8-*\n"));
  CHECK_FALSE(contains(ud, "dcgm-exporter:"));  // by digest, never by tag

  // The network config bonds only the named uplinks; the IB rails stay out; one default route.
  auto n = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "train-a", "--network-config"});
  REQUIRE(n.exit_code == 0);
  CHECK(contains(n.out, "  uplink0:\n    match:\n      name: \"eno1\"\n"));
  CHECK(contains(n.out, "    interfaces: [uplink0, uplink1]\n"));
  CHECK_FALSE(contains(n.out, "\"en*\""));
  CHECK(contains(n.out, "RDMA rails ibp* kept out of the bond"));
  size_t routes = 0;
  for (size_t at = n.out.find("default route"); at != std::string::npos; at = n.out.find("default route", at + 1)) routes++;
  CHECK(routes == 2);  // the header comment and VLAN 'mgmt'
  CHECK(contains(n.out, "vrfs:\n  vrf-ml:\n    table: 1001\n"));

  // And Debian's cloud-init accepts it.
  TempDir dir;
  auto schema = plinth::test::run_program({"cloud-init", "schema", "--config-file", dir.write("user-data", ud)});
  INFO(schema.out << schema.err);
  CHECK(schema.exit_code == 0);
}

// Issue 31, item 6: a p5 burst pool trains across instances over EFA, not TCP sockets.
TEST_CASE("plinth render of an EFA burst pool, from the user's directory, installs the signed EFA installer with aws-ofi-nccl",
          "[e2e][render][habits]") {
  TempDir dir;
  dir.write("cluster.yaml", slurp(source_dir() + "/blueprints/examples/cluster.yaml"));
  auto r = run_plinth({"render", "cluster.yaml", "--pool", "aws-p5"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const size_t efa = r.out.find("curl -fsSLO \\\"$base/aws-efa-installer-$v.tar.gz.sig\\\"");
  REQUIRE(efa != std::string::npos);
  CHECK(contains(r.out, "v=1.47.0; base=https://efa-installer.amazonaws.com;"));
  CHECK(r.out.find("gpg --batch --verify", efa) < r.out.find("./efa_installer.sh -y;", efa));
  CHECK(r.out.find("\"nvidia-open-580\"") < efa);
  // The GCP and Azure pools of the same blueprint have no EFA.
  for (const char* pool : {"gcp-a3", "azure-nd"}) {
    auto other = run_plinth({"render", "cluster.yaml", "--pool", pool}, dir.path());
    REQUIRE(other.exit_code == 0);
    CHECK_FALSE(contains(other.out, "efa-installer"));
  }
  // The Azure ND pool gets its InfiniBand stack instead, the GCP A3 pool (multi_node: false) nothing.
  auto nd = run_plinth({"render", "cluster.yaml", "--pool", "azure-nd"}, dir.path());
  CHECK(contains(nd.out, "\"--no-install-recommends\", \"doca-ofed\"]"));
  CHECK(contains(nd.out, "      nvidia-peermem\n"));
  // ... and Azure's NCCL topology of its VM size, with /etc/nccl.conf pointing at it.
  CHECK(contains(nd.out, "  - path: /opt/microsoft/ndv5-topo.xml\n"));
  CHECK(contains(nd.out, "      NCCL_TOPO_FILE=/opt/microsoft/ndv5-topo.xml\n"));
  auto a3 = run_plinth({"render", "cluster.yaml", "--pool", "gcp-a3"}, dir.path());
  CHECK_FALSE(contains(a3.out, "doca-ofed"));
  CHECK_FALSE(contains(a3.out, "/etc/nccl.conf"));
  // The pool on NC A100 v4 instead: Azure's ncv4 topology and graph, and no InfiniBand stack (it has none).
  dir.write("nc.yaml", replace_once(slurp(dir.path() + "/cluster.yaml"), "Standard_ND96isr_H100_v5", "Standard_NC96ads_A100_v4"));
  auto nc = run_plinth({"render", "nc.yaml", "--pool", "azure-nd"}, dir.path());
  INFO(nc.err);
  REQUIRE(nc.exit_code == 0);
  CHECK(contains(nc.out, "  - path: /opt/microsoft/ncv4-graph.xml\n"));
  CHECK(contains(nc.out, "      NCCL_TOPO_FILE=/opt/microsoft/ncv4-topo.xml\n      NCCL_GRAPH_FILE=/opt/microsoft/ncv4-graph.xml\n"));
  CHECK_FALSE(contains(nc.out, "doca-ofed"));
  CHECK_FALSE(contains(nc.out, "NCCL_IB_PCI_RELAXED_ORDERING"));
  auto schema = plinth::test::run_program({"cloud-init", "schema", "--config-file", dir.write("nc-user-data", nc.out)});
  INFO(schema.out << schema.err);
  CHECK(schema.exit_code == 0);
}

// Issue 31, item 2: a GB200 NVL72 rack's trays get IMEX, or validate says what is missing.
TEST_CASE("a GB200 rack pool, from the user's directory: validate asks for imex.nodes, render installs and starts IMEX",
          "[e2e][render][habits]") {
  TempDir dir;
  std::string text = slurp(source_dir() + "/blueprints/invalid/rule-imex001-gb200-without-imex.yaml");
  dir.write("rack.yaml", text);
  auto missing = run_plinth({"validate", "rack.yaml"}, dir.path());
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "rack.yaml:22:21: error[IMEX001]: node pool 'rack-a' runs GB200 compute trays"));
  std::string trays;
  for (int i = 11; i <= 28; ++i) trays += std::string(i > 11 ? ", " : "") + "10.100.1." + std::to_string(i);
  dir.write("rack.yaml", text + "    imex: {nodes: [" + trays + "]}\n");
  auto ok = run_plinth({"validate", "rack.yaml", "--no-policies"}, dir.path());
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  auto r = run_plinth({"render", "rack.yaml", "--pool", "rack-a"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "  - path: /etc/nvidia-imex/nodes_config.cfg\n"));
  CHECK(contains(r.out, "      10.100.1.11\n      10.100.1.12\n"));
  CHECK(contains(r.out, "      10.100.1.28\n"));
  CHECK(contains(r.out, "\"nvidia-imex\"]"));  // R580: the package drops the branch from its name
  CHECK(contains(r.out, "  - [\"systemctl\", \"enable\", \"nvidia-imex.service\"]\n"));
  CHECK(contains(r.out, "/sbsa/"));  // Grace: the sbsa repositories
}

TEST_CASE("a Secure Boot pool, from the user's directory: DRV007 while DOCA-OFED builds, then Canonical's signed modules",
          "[e2e][render][habits]") {
  TempDir dir;
  const std::string text = slurp(source_dir() + "/blueprints/invalid/rule-drv007-secure-boot-dkms.yaml");
  dir.write("secure.yaml", text);
  auto warned = run_plinth({"validate", "secure.yaml", "--no-policies"}, dir.path());
  CHECK(warned.exit_code == 0);
  CHECK(contains(warned.out + warned.err, "secure.yaml:27:11: warning[DRV007]: node pool 'train' enables Secure Boot "
                                          "(SecureBoot: Enabled); the render installs Canonical's signed NVIDIA modules, "
                                          "but DOCA-OFED's are built by DKMS"));
  // The kernel's own RDMA stack: nothing is built any more.
  std::string inbox = text;
  const std::string fabric = "oversubscription: \"1:1\"}";
  inbox.replace(inbox.find(fabric), fabric.size(), "oversubscription: \"1:1\", rdma_stack: inbox}");
  dir.write("secure.yaml", inbox);
  auto clean = run_plinth({"validate", "secure.yaml", "--no-policies"}, dir.path());
  CHECK(clean.exit_code == 0);
  CHECK_FALSE(contains(clean.out + clean.err, "DRV007"));
  auto r = run_plinth({"render", "secure.yaml", "--pool", "train"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "\"nvidia-headless-no-dkms-580-server\", \"nvidia-utils-580-server\""));
  CHECK(contains(r.out, "linux-modules-nvidia-580-server-open-$k"));
  CHECK(contains(r.out, "v=$(modinfo -F version nvidia)"));
  CHECK_FALSE(contains(r.out, "linux-headers-"));
  CHECK_FALSE(contains(r.out, "\"nvidia-open-580\""));
}

TEST_CASE("plinth render --network-config prints the VLANs and --output writes a file", "[e2e][render]") {
  auto r = run_plinth({"render", "blueprints/examples/cluster.yaml", "-pool=train-a", "--network-config"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "version: 2\n"));
  CHECK(contains(r.out, "  vlan100:  # ml-fabric 10.100.0.0/16 (training)\n    id: 100\n    link: bond0\n    mtu: 9000\n"));

  TempDir dir;
  const std::string out = dir.path() + "/user-data";
  auto w = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "aws-p5", "--output", out});
  INFO(w.err);
  REQUIRE(w.exit_code == 0);
  CHECK(w.out.empty());
  CHECK(slurp(out).rfind("#cloud-config\n", 0) == 0);
  CHECK(contains(w.err, "Wrote user-data for pool aws-p5 to " + out + " (sha256 " + plinth::sha256_hex(slurp(out)) +
                           "); the pool's user_data_hash is "));

  auto none = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "aws-p5", "--network-config"});
  CHECK(none.exit_code == 1);
  CHECK(contains(none.err, "plinth render: pool 'aws-p5' has no network config"));
}

TEST_CASE("plinth render with an unknown pool exits 1 with a did-you-mean", "[e2e][render]") {
  auto r = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "train-b"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "plinth render: unknown pool 'train-b'; did you mean 'train-a'? Pools in this blueprint: "
                        "train-a, infer-mig, prep, aws-p5, gcp-a3, azure-nd\n"));

  auto missing = run_plinth({"render", "blueprints/examples/cluster.yaml"});
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "plinth render: --pool NAME is required"));
}

TEST_CASE("plinth render --node prints a node's meta-data and writes its NoCloud seed image", "[e2e][render][seed]") {
  const std::string bp = "blueprints/examples/cluster.yaml";
  auto user_data = run_plinth({"render", bp, "--pool", "train-a"});
  auto network = run_plinth({"render", bp, "--pool", "train-a", "--network-config"});
  REQUIRE(user_data.exit_code == 0);
  REQUIRE(network.exit_code == 0);
  auto meta = run_plinth({"render", bp, "--pool", "train-a", "--node", "train-a-31", "--meta-data"});
  INFO(meta.err);
  REQUIRE(meta.exit_code == 0);
  CHECK(meta.out.rfind("instance-id: train-a-31-", 0) == 0);
  CHECK(contains(meta.out, "\nlocal-hostname: train-a-31\n"));

  TempDir dir;
  const std::string iso = dir.path() + "/train-a-31.iso";
  auto seed = run_plinth({"render", bp, "--pool", "train-a", "--node", "train-a-31", "--seed", iso});
  INFO(seed.err);
  REQUIRE(seed.exit_code == 0);
  CHECK(contains(seed.err, "Wrote the NoCloud seed of train-a-31 (volume cidata: user-data, meta-data, "
                           "network-config) to " + iso + " (sha256 " + sha256_hex(slurp(iso)) + ")"));
  IsoContents files = read_iso(iso);
  CHECK(files.volume_id == "cidata");
  CHECK(files.files["user-data"] == user_data.out);
  CHECK(files.files["meta-data"] == meta.out);
  CHECK(files.files["network-config"] == network.out);

  auto past = run_plinth({"render", bp, "--pool", "train-a", "--node", "train-a-32", "--meta-data"});
  CHECK(past.exit_code == 1);
  CHECK(contains(past.err, "plinth render: pool 'train-a' has no node 'train-a-32'; its nodes are train-a-0 to "
                           "train-a-31"));
  auto burst = run_plinth({"render", bp, "--pool", "aws-p5", "--node", "aws-p5-0", "--meta-data"});
  CHECK(burst.exit_code == 1);
  CHECK(contains(burst.err, "'aws-p5' is a burst pool"));
  auto alone = run_plinth({"render", bp, "--pool", "train-a", "--seed", iso});
  CHECK(alone.exit_code == 1);
  CHECK(contains(alone.err, "--meta-data and --seed need --node NAME"));
  auto neither = run_plinth({"render", bp, "--pool", "train-a", "--node", "train-a-0"});
  CHECK(neither.exit_code == 1);
  CHECK(contains(neither.err, "give --meta-data (print the node's meta-data) or --seed FILE"));
}

}  // namespace plinth::test::e2e_render
