// plinth verify end to end: the probe script (as `plinth verify --probe-script` prints it) run on
// simulated nodes and on real nvidia-smi -q -x outputs, a real Prometheus server scraping what the
// nodes report (probe files and real DCGM exporter scrapes, tests/data/third_party/gpu-telemetry/), and the installed
// plinth asking it from the user's own blueprint directory.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/net/http.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"

namespace plinth::test::e2e_verify {
namespace {

namespace fs = std::filesystem;

std::string data(const std::string& name) { return testdata_dir() + "/gpu-telemetry/" + name; }

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

void make_executable(const std::string& path) { REQUIRE(chmod(path.c_str(), 0755) == 0); }

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  close(fd);
  return ntohs(a.sin_port);
}

/// The probe as the installed plinth prints it, written to `dir`/plinth-probe.
std::string probe_script(const TempDir& dir) {
  auto r = run_plinth({"verify", "--probe-script"}, dir.path());
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out.rfind("#!/bin/sh\n", 0) == 0);
  const std::string path = dir.write("plinth-probe", r.out);
  make_executable(path);
  return path;
}

/// A node's root file system as the probe reads it (PLINTH_PROBE_ROOT): Ubuntu 22.04, the pool's
/// probe.conf, a LUKS2 mapping plinth-scratch mounted at /mnt/scratch, and a `systemctl` that calls
/// the units in `active` active.
struct SimulatedNode {
  std::string root, bin;
  SimulatedNode(const TempDir& dir, const std::string& name, const std::string& pool, const std::string& active,
                const std::string& stack = "hopper") {
    root = dir.path() + "/" + name + "/root";
    bin = dir.path() + "/" + name + "/bin";
    const std::string base = name + "/root/";
    dir.write(base + "etc/os-release", "NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\n");
    dir.write(base + "etc/plinth/probe.conf", "pool=" + pool + "\nstack=" + stack + "\nblueprint=hgx-fleet\n");
    dir.write(base + "proc/sys/kernel/osrelease", "5.15.0-125-generic\n");
    dir.write(base + "proc/sys/kernel/hostname", name + "\n");
    dir.write(base + "proc/mounts",
              "/dev/sda2 / ext4 rw,relatime 0 0\nproc /proc proc rw 0 0\ntmpfs /run tmpfs rw 0 0\n"
              "/dev/mapper/plinth-scratch /mnt/scratch xfs rw,relatime 0 0\n");
    dir.write(base + "proc/modules", "nvidia_uvm 1 0 - Live 0x0\nnvidia 1 0 - Live 0x0\n");
    dir.write(base + "sys/block/dm-0/dm/name", "plinth-scratch\n");
    dir.write(base + "sys/block/dm-0/dm/uuid",
              "CRYPT-LUKS2-5f0c2d7e9a8b4c3d-plinth-scratch\n");
    make_executable(dir.write(name + "/bin/systemctl",
                              "#!/bin/sh\n[ \"$1\" = is-active ] || exit 1\ncase \" " + active +
                                  " \" in *\" ${2%.service} \"*) echo active; exit 0 ;; esac\necho inactive\nexit 3\n"));
  }
  /// Runs the probe with `extra_path` (a fake nvidia-smi's folder) first on PATH; its output.
  RunResult probe(const std::string& script, const std::string& extra_path = "") const {
    return run_program({"/bin/sh", script, "--stdout"}, "",
                       {{"PLINTH_PROBE_ROOT", root},
                        {"PATH", (extra_path.empty() ? "" : extra_path + ":") + bin + ":/usr/bin:/bin"}});
  }
};

/// A fake nvidia-smi printing a real `nvidia-smi -q -x` output; with `tables`, also the GPU
/// instance table (`mig -lgi`) and link states (`nvlink --status`) in the layout nvidia-smi prints
/// them (the MIG User Guide's and nvidia-smi's own examples), for the A100 of the MIG fixture;
/// failing for anything else.
std::string fake_nvidia_smi(const TempDir& dir, const std::string& xml, bool tables = false) {
  const std::string folder = dir.path() + "/smi-" + fs::path(xml).stem().string() + (tables ? "-tables" : "");
  std::string script = "#!/bin/sh\n[ \"$1 $2\" = \"-q -x\" ] && exec cat '" + xml + "'\n";
  if (tables) {
    script += "if [ \"$1 $2\" = \"mig -lgi\" ]; then cat <<'END'\n"
              "+-------------------------------------------------------+\n"
              "| GPU instances:                                        |\n"
              "| GPU   Name             Profile  Instance   Placement  |\n"
              "|                          ID       ID       Start:Size |\n"
              "|=======================================================|\n";
    for (const char* row : {"|   0  MIG 1g.20gb         15        3          0:1     |\n",
                            "|   0  MIG 1g.20gb         15        4          2:1     |\n",
                            "|   0  MIG 1g.20gb         15        5          4:1     |\n",
                            "|   0  MIG 1g.20gb         15        6          6:1     |\n"})
      script += std::string(row) + "+-------------------------------------------------------+\n";
    script += "END\nexit 0; fi\n"
              "if [ \"$1 $2\" = \"nvlink --status\" ]; then printf '%s\\n' "
              "'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-513536b6-7d19-9063-b049-1e69664bb298)' "
              "'\t Link 0: 25 GB/s' '\t Link 1: <inactive>' '\t Link 2: 25 GB/s'; exit 0; fi\n";
  }
  make_executable(dir.write(fs::path(folder).filename().string() + "/nvidia-smi", script + "exit 6\n"));
  return folder;
}

RunResult promtool(const std::string& text) { return run_program({"promtool", "check", "metrics"}, "", {}, text); }

std::string line_of(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

/// A real Prometheus server scraping `targets` (URL paths on `server`) every second.
class Prometheus {
 public:
  Prometheus(const std::string& server, const std::vector<std::string>& paths) {
    port_ = free_port();
    std::string config = "global: {scrape_interval: 1s, scrape_timeout: 1s}\nscrape_configs:\n  - job_name: nodes\n"
                         "    static_configs:\n";
    const std::string host = server.substr(server.find("://") + 3);
    for (const auto& p : paths)
      config += "      - targets: [\"" + host + "\"]\n        labels: {__metrics_path__: \"" + p + "\"}\n";
    config += "    relabel_configs:\n      - {source_labels: [__metrics_path__], target_label: instance}\n";
    const std::string cfg = dir_.write("prometheus.yml", config);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      int log = ::open((dir_.path() + "/log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(log, 1);
      dup2(log, 2);
      const std::string data_dir = "--storage.tsdb.path=" + dir_.path() + "/data";
      const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
      const std::string config_flag = "--config.file=" + cfg;
      execl("/usr/bin/prometheus", "prometheus", config_flag.c_str(), data_dir.c_str(), listen.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Prometheus() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return slurp(dir_.path() + "/log"); }

  /// The number of series `query` returns, -1 when Prometheus does not answer.
  int series(const std::string& query) {
    net::Request req;
    req.url = url() + "/api/v1/query?query=" + net::percent_encode(query);
    auto r = client_.send(req);
    if (!r || r->status != 200) return -1;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || !j.contains("data")) return -1;
    return static_cast<int>(j["data"]["result"].size());
  }
  /// Waits until `query` returns `n` series.
  void wait_for(const std::string& query, int n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (series(query) != n) {
      INFO("prometheus log: " << log());
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  net::Client client_;
};

const char* kBlueprint = R"(# Four HGX H100 nodes; plinth verify asks the Prometheus that scrapes them.
apiVersion: plinth/v1
kind: Blueprint
metadata: {name: hgx-fleet, owner: ml-platform}
stacks:
  hopper:
    driver: "580.105.08"
    cuda: "13.0"
storage:
  tiers:
    - {name: scratch, kind: nvme, capacity_tb: 30, classification: internal, encryption: {at_rest: luks2}}
node_pools:
  - name: hgx
    provider: baremetal
    count: 4
    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 112, memory_gb: 2048}
    stack: hopper
    storage: [scratch]
    bmc:
      endpoints: ["https://10.0.0.1", "https://10.0.0.2", "https://10.0.0.3", "https://10.0.0.4"]
      credentials: env:BMC
monitoring: {dcgm: true, prometheus: true, prometheus_url: "PROMETHEUS"}
)";

/// What node hgx-I serves: its probe's output (run on a simulated node) and the real H100 DCGM
/// exporter scrape with the node's host name.
struct Fleet {
  TempDir nodes, served;
  std::string script = probe_script(nodes);

  void node(int i, const std::string& active_units, const std::string& dcgm_driver = "580.105.08",
            bool mig = false) {
    const std::string name = "hgx-" + std::to_string(i);
    SimulatedNode sim(nodes, name, "hgx", active_units);
    auto out = sim.probe(script);
    INFO(out.err);
    REQUIRE(out.exit_code == 0);
    served.write(name + ".txt", out.out);
    std::string dcgm = replace_all(slurp(data("dcgm-exporter-h100-8gpu.prom")), "ip-100-64-171-120.ec2.internal", name);
    dcgm = replace_all(dcgm, "DCGM_FI_DRIVER_VERSION=\"580.105.08\"", "DCGM_FI_DRIVER_VERSION=\"" + dcgm_driver + "\"");
    if (mig) {  // the MIG instance series of the real A100 MIG scrape, on this node's GPU 0
      std::istringstream in(slurp(data("dcgm-exporter-a100-mig.prom")));
      std::string line;
      while (std::getline(in, line))
        if (line.find("GPU_I_PROFILE=") != std::string::npos) dcgm += replace_all(line, "ub20-a100-k8s", name) + "\n";
    }
    served.write("dcgm-" + name + ".txt", dcgm);
  }
  std::vector<std::string> paths(int nodes_served) const {
    std::vector<std::string> p;
    for (int i = 0; i < nodes_served; ++i)
      p.insert(p.end(), {"/hgx-" + std::to_string(i) + ".txt", "/dcgm-hgx-" + std::to_string(i) + ".txt"});
    return p;
  }
};

const std::string kHealthy = "nvidia-fabricmanager nvidia-persistenced dcgm-exporter auditd";

}  // namespace

TEST_CASE("the probe passes shellcheck, reports no GPU without one, and its output passes promtool", "[habits][verify]") {
  TempDir dir;
  const std::string script = probe_script(dir);
  auto sc = run_program({"shellcheck", "--shell=sh", script});
  INFO(sc.out << sc.err);
  CHECK(sc.exit_code == 0);
  SimulatedNode node(dir, "cpu-0", "prep", "auditd");
  auto out = node.probe(script);
  INFO(out.err);
  REQUIRE(out.exit_code == 0);
  CHECK(line_of(out.out, "plinth_gpus{") == "plinth_gpus{node=\"cpu-0\"} 0");
  CHECK(line_of(out.out, "plinth_probe_info{") ==
        "plinth_probe_info{node=\"cpu-0\",format=\"1\",pool=\"prep\",stack=\"hopper\",blueprint=\"hgx-fleet\"} 1");
  CHECK(line_of(out.out, "plinth_mount_encrypted{node=\"cpu-0\",mountpoint=\"/mnt/scratch\"}") ==
        "plinth_mount_encrypted{node=\"cpu-0\",mountpoint=\"/mnt/scratch\"} 1");
  CHECK(line_of(out.out, "plinth_service_active{node=\"cpu-0\",service=\"auditd\"}").back() == '1');
  CHECK(line_of(out.out, "plinth_mount_info{node=\"cpu-0\",mountpoint=\"/run\"").empty());  // tmpfs holds no data
  auto check = promtool(out.out);
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);

  // Written for the node exporter: the file is replaced whole, the directory made.
  const std::string textfile = dir.path() + "/textfile/plinth.prom";
  auto written = run_program({"/bin/sh", script}, "",
                             {{"PLINTH_PROBE_ROOT", node.root}, {"PLINTH_PROBE_DIR", dir.path() + "/textfile"},
                              {"PATH", node.bin + ":/usr/bin:/bin"}});
  CHECK(written.exit_code == 0);
  CHECK(slurp(textfile).find("plinth_gpus{node=\"cpu-0\"} 0") != std::string::npos);
}

TEST_CASE("the probe turns real nvidia-smi -q -x outputs into facts plinth verify reads", "[habits][verify]") {
  TempDir dir;
  const std::string script = probe_script(dir);
  SimulatedNode node(dir, "a100-0", "a100", "auditd nvidia-persistenced", "ampere");

  auto v100 = node.probe(script, fake_nvidia_smi(dir, data("nvidia-smi-v100s-8gpu.xml")));
  INFO(v100.err);
  REQUIRE(v100.exit_code == 0);
  CHECK(line_of(v100.out, "plinth_gpus{") == "plinth_gpus{node=\"a100-0\"} 8");
  CHECK(line_of(v100.out, "plinth_gpu_driver_info{") ==
        "plinth_gpu_driver_info{node=\"a100-0\",driver_version=\"460.73.01\",cuda_version=\"11.2\"} 1");
  CHECK(line_of(v100.out, "plinth_gpu_info{node=\"a100-0\",gpu=\"7\"") ==
        "plinth_gpu_info{node=\"a100-0\",gpu=\"7\",uuid=\"GPU-1d955959-c95b-4f40-2cac-100d3006ffe2\","
        "product=\"Tesla V100S-PCIE-32GB\",memory_mib=\"32510\",ecc_mode=\"Enabled\",mig_mode=\"N/A\"} 1");
  CHECK(promtool(v100.out).exit_code == 0);

  auto a100 = node.probe(script, fake_nvidia_smi(dir, data("nvidia-smi-a100-sxm4-mig.xml"), true));
  REQUIRE(a100.exit_code == 0);
  CHECK(line_of(a100.out, "plinth_gpus{") == "plinth_gpus{node=\"a100-0\"} 1");
  CHECK(line_of(a100.out, "plinth_gpu_info{") ==
        "plinth_gpu_info{node=\"a100-0\",gpu=\"0\",uuid=\"GPU-513536b6-7d19-9063-b049-1e69664bb298\","
        "product=\"NVIDIA A100-SXM4-80GB\",memory_mib=\"81920\",ecc_mode=\"Enabled\",mig_mode=\"Enabled\"} 1");
  CHECK(line_of(a100.out, "plinth_gpu_mig_devices{") == "plinth_gpu_mig_devices{node=\"a100-0\",gpu=\"0\"} 4");
  CHECK(line_of(a100.out, "plinth_gpu_mig_device_info{node=\"a100-0\",gpu=\"0\",gpu_instance=\"6\"") ==
        "plinth_gpu_mig_device_info{node=\"a100-0\",gpu=\"0\",gpu_instance=\"6\",compute_instance=\"0\","
        "multiprocessors=\"14\",memory_mib=\"19968\"} 1");
  CHECK(line_of(a100.out, "plinth_gpu_mig_profile_instances{") ==
        "plinth_gpu_mig_profile_instances{node=\"a100-0\",gpu=\"0\",profile=\"1g.20gb\"} 4");
  CHECK(line_of(a100.out, "plinth_gpu_nvlink_up{node=\"a100-0\",gpu=\"0\",link=\"1\"}") ==
        "plinth_gpu_nvlink_up{node=\"a100-0\",gpu=\"0\",link=\"1\"} 0");
  CHECK(line_of(a100.out, "plinth_gpu_nvlink_up{node=\"a100-0\",gpu=\"0\",link=\"2\"}") ==
        "plinth_gpu_nvlink_up{node=\"a100-0\",gpu=\"0\",link=\"2\"} 1");
  auto check = promtool(a100.out);
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);

  // The A100 node against a pool of one A100 with four MIG instances per GPU, then without MIG.
  TempDir user;
  user.write("probe.prom", a100.out);
  const std::string bp = R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: a100-lab, owner: ml-platform}
stacks:
  ampere: {driver: "535.54.03", cuda: "12.2"}
storage:
  tiers:
    - {name: scratch, kind: nvme, capacity_tb: 8, classification: internal, encryption: {at_rest: luks2}}
node_pools:
  - name: a100
    provider: baremetal
    count: 1
    role: inference
    hardware: {gpu: A100-80GB, gpus_per_node: 1, cpu_cores: 32, memory_gb: 256}
    stack: ampere
    storage: [scratch]
    bmc: {endpoints: ["https://10.0.1.1"], credentials: env:BMC}
    mig: {profile: "1g.20gb", instances: 4}
)";
  user.write("lab.yaml", bp);
  auto ok = run_plinth({"verify", "lab.yaml", "--from", "probe.prom"}, user.path());
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("1 of 1 declared nodes report, 1 match; 0 error(s), 1 warning(s)") != std::string::npos);
  CHECK(ok.out.find("warning[VER007]: node a100-0 (pool a100) has inactive NVLinks: GPU 0 (1 of 3 down)") !=
        std::string::npos);
  user.write("lab.yaml", replace_all(bp, "    mig: {profile: \"1g.20gb\", instances: 4}\n", ""));
  auto no_mig = run_plinth({"verify", "lab.yaml", "--from", "probe.prom", "--format", "json"}, user.path());
  CHECK(no_mig.exit_code == 1);
  auto j = nlohmann::json::parse(no_mig.out);
  REQUIRE(j["findings"].size() == 2);
  CHECK(j["findings"][0]["rule"] == "VER006");
  CHECK(j["findings"][0]["message"] == "node a100-0 (pool a100) has a MIG layout the blueprint does not declare (GPU 0: 4 x "
                                       "1g.20gb); the pool declares no MIG");
  CHECK(j["findings"][0]["location"] == "lab.yaml:10:5");
  CHECK(j["findings"][1]["rule"] == "VER007");
}

TEST_CASE("plinth verify asks a real Prometheus and names each node that is not what the blueprint says",
          "[habits][verify]") {
  Fleet fleet;
  fleet.node(0, kHealthy, "580.95.05");                   // an unattended upgrade moved the driver
  fleet.node(1, "nvidia-persistenced dcgm-exporter auditd");  // Fabric Manager stopped
  fleet.node(2, kHealthy, "580.105.08", true);            // a MIG layout nobody declared
  // hgx-3 is not scraped: Prometheus has never seen it.
  FileServer server(fleet.served.path());
  Prometheus prom(server.base(), fleet.paths(3));
  prom.wait_for("plinth_probe_info", 3);
  prom.wait_for("group by (Hostname) (DCGM_FI_DEV_GPU_TEMP)", 3);
  prom.wait_for("DCGM_FI_DEV_XID_ERRORS", 1);

  TempDir user;  // the user's blueprint directory, outside the source tree
  user.write("fleet.yaml", replace_all(kBlueprint, "PROMETHEUS", prom.url()));
  auto r = run_plinth({"verify", "fleet.yaml", "--format", "json", "--report", "sarif:verify.sarif", "--report",
                       "markdown:verify.md"},
                      user.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> found;
  for (const auto& f : j["findings"]) found.insert(f["rule"].get<std::string>() + " " + f["node"].get<std::string>());
  CHECK(found == std::set<std::string>{"VER003 hgx-0", "VER005 hgx-1", "VER006 hgx-2", "VER001 hgx-3"});
  CHECK(j["source"] == "Prometheus at " + prom.url());
  CHECK(j["nodes_seen"] == 3);
  CHECK(j["nodes_matching"] == 0);
  auto sarif = nlohmann::json::parse(slurp(user.path() + "/verify.sarif"));
  CHECK(sarif["runs"][0]["results"].size() == 4);
  CHECK(slurp(user.path() + "/verify.md").find("| VER005 | error | hgx-1 |") != std::string::npos);

  // The text a person reads: rule, node, the pool's file:line:column and the fix.
  auto text = run_plinth({"verify", "fleet.yaml", "--pool", "hgx"}, user.path());
  CHECK(text.exit_code == 1);
  CHECK(text.out.find("fleet.yaml:13:5: error[VER003]: node hgx-0 (pool hgx) runs NVIDIA driver 580.95.05, the stack "
                      "pins 580.105.08") != std::string::npos);
  CHECK(text.out.find("error[VER006]: node hgx-2 (pool hgx) has a MIG layout the blueprint does not declare (GPU 0: 1 x "
                      "1g.5gb)") != std::string::npos);

  // The audit shows what was observed, with its time, under the controls it supports.
  auto audit = run_plinth({"audit", "fleet.yaml", "--verify", "--framework", "hipaa", "--soft-fail"}, user.path(),
                          {{"PLINTH_PROMETHEUS_URL", prom.url()}});
  INFO(audit.err);
  REQUIRE(audit.exit_code == 0);
  auto report = nlohmann::json::parse(audit.out);
  CHECK(report["observed"]["source"] == "Prometheus at " + prom.url());
  CHECK(report["observed"]["findings"].size() == 4);
  std::string observed_164_312_a;
  for (const auto& c : report["frameworks"][0]["controls"])
    if (c["id"] == "164.312(a)(1)" && c.contains("observed")) observed_164_312_a = c["observed"][0];
  CHECK(std::regex_search(observed_164_312_a,
                          std::regex("^Tiers declared encrypted at rest are mounted on dm-crypt \\(LUKS2\\) on 3 of 3 "
                                     "nodes that mount them \\(observed 20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\\)$")));
}

TEST_CASE("plinth verify exits 0 when every node reports what the blueprint declares", "[habits][verify]") {
  Fleet fleet;
  for (int i = 0; i < 4; ++i) fleet.node(i, kHealthy);
  FileServer server(fleet.served.path());
  Prometheus prom(server.base(), fleet.paths(4));
  prom.wait_for("plinth_probe_info", 4);
  prom.wait_for("group by (Hostname) (DCGM_FI_DEV_GPU_TEMP)", 4);
  TempDir user;
  user.write("fleet.yaml", replace_all(kBlueprint, "PROMETHEUS", prom.url()));
  auto r = run_plinth({"verify", "fleet.yaml"}, user.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("verify: 4 of 4 declared nodes report, 4 match; 0 error(s), 0 warning(s) (facts from Prometheus "
                   "at " + prom.url()) != std::string::npos);

  // A token goes only to a Prometheus the operator named, never to the blueprint's URL.
  user.write("token", "s3cret\n");
  auto refused = run_plinth({"verify", "fleet.yaml", "--prometheus-token-file", "token"}, user.path());
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("never to the blueprint's monitoring.prometheus_url") != std::string::npos);
  auto with_token =
      run_plinth({"verify", "fleet.yaml", "--prometheus", prom.url(), "--prometheus-token-file", "token"}, user.path());
  CHECK(with_token.exit_code == 0);

  // A pull request's blueprint does not choose where an untrusted job connects.
  auto untrusted = run_plinth({"verify", "fleet.yaml", "--untrusted"}, user.path());
  CHECK(untrusted.exit_code == 1);
  CHECK(untrusted.err.find("untrusted mode: the blueprint's monitoring.prometheus_url is not used") != std::string::npos);
  auto named = run_plinth({"verify", "fleet.yaml"}, user.path(), {{"PLINTH_UNTRUSTED", "1"}, {"PLINTH_PROMETHEUS_URL", prom.url()}});
  CHECK(named.exit_code == 0);

  // Prometheus gone: a clear error naming where plinth looked.
  auto none = run_plinth({"verify", "fleet.yaml", "--prometheus", "http://127.0.0.1:9"}, user.path());
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("plinth verify: querying Prometheus: ") != std::string::npos);
  CHECK(none.err.find("127.0.0.1:9") != std::string::npos);
}

}  // namespace plinth::test::e2e_verify
