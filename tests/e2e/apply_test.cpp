// plinth apply / refresh / plan / destroy against the Redfish emulator: a
// 50-node pool from empty, idempotent re-plan, BIOS updates, drift, injected
// 503s, SIGTERM mid-apply, unreachable BMCs and wrong credentials.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_apply {

namespace {

/// A blueprint with one bare-metal pool of `count` nodes whose BMCs are
/// `endpoints` (a YAML scalar or flow list) and one VLAN and storage tier.
std::string apply_blueprint(const std::string& endpoints, int count, const std::string& ca,
                            const std::string& turbo = "Enabled", const std::string& rollout = "") {
  return blueprint_header("e2e-apply") + train_stack() +
         "networks:\n"
         "  vlans: [{name: ml-fabric, id: 100, cidr: 10.100.0.0/16, vrf: ml, purpose: training, mtu: 9000}]\n"
         "storage:\n"
         "  tiers:\n"
         "    - {name: hot, kind: nvme, capacity_tb: 100, classification: internal, encryption: {at_rest: aes-256-xts}}\n"
         "node_pools:\n" +
         baremetal_pool({.count = count,
                         .extra = "    bios: {ProcTurboMode: " + turbo + ", PowerProfile: MaxPerf}\n"
                                  "    networks: [ml-fabric]\n"
                                  "    storage: [hot]\n" +
                                  (rollout.empty() ? "" : "    rollout: {max_unavailable: " + rollout + "}\n"),
                         .endpoints = endpoints,
                         .ca = ca});
}

/// Node indexes of pool train-a recorded in the state file.
/// The nodes the state at `path` records, read as plinth reads it (the file
/// and, during an apply, its change log).
std::set<int> nodes_in_state(const std::string& path) {
  std::set<int> out;
  auto doc = state::open_local(path)->load();
  INFO((doc ? "" : doc.error().message));
  REQUIRE(doc.ok());
  if (!*doc) return out;
  for (const auto& r : (*doc)->resources)
    if (r.type == "baremetal.node") out.insert(r.index);
  return out;
}

std::vector<std::string> apply_args(const std::string& bp, const std::string& st) {
  return {"apply", bp, "--state", st, "--auto-approve"};
}

}  // namespace

TEST_CASE("apply creates a 50-node pool from empty, re-plan shows no changes, a BIOS change updates every node, drift is reported",
          "[e2e][apply]") {
  Emulator emu(h100_emulator_args(50));
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  const std::string tmpl = bmc_endpoints(emu.base());
  std::string bp = dir.write("bp.yaml", apply_blueprint(tmpl, 50, emu.ca()));

  auto r = run_plinth(apply_args(bp, st), "", kBmcEnv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_of(r.out, ": created (") == 53);  // 50 nodes, the stack, the VLAN, the tier
  CHECK(r.out.find("apply: baremetal.node.train-a[49]: created (") != std::string::npos);
  CHECK(r.out.find("Apply complete: 53 succeeded, 0 failed, 0 skipped.") != std::string::npos);
  CHECK(nodes_in_state(st).size() == 50);
  auto rs = resets(emu.log_path());
  CHECK(rs.size() == 50);

  // Re-plan (with refresh through the emulator): nothing to do.
  auto again = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", kBmcEnv);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("No changes.") != std::string::npos);

  // One BIOS attribute changes in the blueprint: one in-place update per node
  // (a reset each: the whole pool at once, as its rollout allows).
  bp = dir.write("bp.yaml", apply_blueprint(tmpl, 50, emu.ca(), "Disabled", "\"100%\""));
  auto plan = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", kBmcEnv);
  CHECK(plan.exit_code == 2);
  CHECK(plan.out.find("Plan: 0 to create, 50 to update, 0 to replace, 0 to destroy.") != std::string::npos);
  auto upd = run_plinth(apply_args(bp, st), "", kBmcEnv);
  INFO(upd.out << upd.err);
  REQUIRE(upd.exit_code == 0);
  CHECK(count_of(upd.out, ": updated (") == 50);
  auto settled = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", kBmcEnv);
  CHECK(settled.exit_code == 0);

  // Drift: someone changes BMC 7's BIOS directly and reboots it.
  const std::string sys = emu.bmc(7) + "/redfish/v1/Systems/437XR1138R2";
  auto patch = run_program({"curl", "-sS", "--fail", "--cacert", emu.ca(), "-u", "admin:admin", "-X", "PATCH", "-H",
                            "Content-Type: application/json", "-d", R"({"Attributes": {"PowerProfile": "Balanced"}})",
                            sys + "/Bios/Settings"});
  REQUIRE(patch.exit_code == 0);
  auto reset = run_program({"curl", "-sS", "--fail", "--cacert", emu.ca(), "-u", "admin:admin", "-X", "POST", "-H",
                            "Content-Type: application/json", "-d", R"({"ResetType": "ForceRestart"})",
                            sys + "/Actions/ComputerSystem.Reset"});
  REQUIRE(reset.exit_code == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  auto drift = run_plinth({"refresh", bp, "--state", st, "--detailed-exitcode"}, "", kBmcEnv);
  INFO(drift.out << drift.err);
  CHECK(drift.exit_code == 2);
  CHECK(drift.out.find("Drift: 1 resource(s) changed outside Plinth (state -> observed):\n"
                       "  ~ baremetal.node.train-a[7]\n"
                       "      bios.PowerProfile: \"MaxPerf\" -> \"Balanced\"\n") != std::string::npos);
  auto replan = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", kBmcEnv);
  CHECK(replan.exit_code == 2);
  CHECK(replan.out.find("Plan: 0 to create, 1 to update, 0 to replace, 0 to destroy.") != std::string::npos);
  CHECK(replan.out.find("baremetal.node.train-a[7]") != std::string::npos);
}

TEST_CASE("apply converges with 20% injected 503s", "[e2e][apply]") {
  Emulator emu(h100_emulator_args(20, {"--rate-503", "0.2"}));
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  std::string bp = dir.write("bp.yaml", apply_blueprint(bmc_endpoints(emu.base()), 20, emu.ca()));
  auto r = run_plinth(apply_args(bp, st), "", kBmcEnv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(nodes_in_state(st).size() == 20);
  CHECK(emu.log().find("\"fault\":\"503\"") != std::string::npos);  // faults really happened
  auto again = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", kBmcEnv);
  CHECK(again.exit_code == 0);
}

TEST_CASE("SIGTERM mid-apply: state holds exactly the completed nodes and a re-run finishes the rest",
          "[e2e][apply]") {
  Emulator emu(h100_emulator_args(30, {"--latency-ms", "40"}));
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  std::string bp = dir.write("bp.yaml", apply_blueprint(bmc_endpoints(emu.base()), 30, emu.ca()));

  // Start plinth apply as a child and stop it once a few nodes are recorded.
  const std::string out_path = dir.path() + "/out.txt", err_path = dir.path() + "/err.txt";
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int n = ::open("/dev/null", O_RDONLY);
    dup2(o, 1);
    dup2(e, 2);
    dup2(n, 0);
    if (chdir(source_dir().c_str()) != 0) _exit(126);
    setenv("BMC_CREDENTIALS", "admin:admin", 1);
    execl(PLINTH_BINARY, PLINTH_BINARY, "apply", bp.c_str(), "--state", st.c_str(), "--auto-approve", "--parallelism",
          "4", static_cast<char*>(nullptr));
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (nodes_in_state(st).size() < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(kill(pid, SIGTERM) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  const std::string out = slurp(out_path), err = slurp(err_path);
  INFO(out << err);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  std::smatch m;
  REQUIRE(std::regex_search(err, m, std::regex(R"(interrupted: (\d+) of 33 operations completed and are recorded in state)")));
  CHECK(err.find("Re-running plinth apply converges.") != std::string::npos);
  const std::set<int> recorded = nodes_in_state(st);
  CHECK(recorded.size() < 30);
  // Every recorded node was really provisioned; operations cancelled in
  // flight are not recorded (they may have reset their node already).
  std::set<int> reset_bmcs;
  for (auto [bmc, n] : resets(emu.log_path())) reset_bmcs.insert(bmc);
  CHECK(std::includes(reset_bmcs.begin(), reset_bmcs.end(), recorded.begin(), recorded.end()));
  std::set<int> interrupted;
  std::set_difference(reset_bmcs.begin(), reset_bmcs.end(), recorded.begin(), recorded.end(),
                      std::inserter(interrupted, interrupted.end()));

  // The re-run creates the rest.
  auto r = run_plinth(apply_args(bp, st), "", kBmcEnv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_of(r.out, ": created (") == 30 - recorded.size());
  CHECK(nodes_in_state(st).size() == 30);
  // Only a node whose create was cancelled after its reset is reset again.
  for (auto [bmc, n] : resets(emu.log_path())) CHECK(n == (interrupted.count(bmc) ? 2 : 1));
}

/// The most hosts down at once in a --power-log timeline after its first
/// `from` lines (a host is down from a state other than On until it is On).
int most_down(const std::string& power_log, size_t from) {
  std::ifstream in(power_log);
  std::map<int, bool> down;
  int most = 0;
  std::string line;
  for (size_t i = 0; std::getline(in, line); ++i) {
    if (i < from) continue;
    auto j = nlohmann::json::parse(line);
    down[j["bmc"].get<int>()] = j["state"] != "On";
    int now = 0;
    for (const auto& [bmc, d] : down) now += d ? 1 : 0;
    most = std::max(most, now);
  }
  return most;
}

size_t lines_of(const std::string& path) {
  std::ifstream in(path);
  return static_cast<size_t>(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

TEST_CASE("rollout: a driver pin change on a 6-node pool never has more hosts off at once than max_unavailable",
          "[e2e][apply][rollout]") {
  for (const std::string limit : {"2", "1"}) {
    INFO("max_unavailable " << limit);
    TempDir dir;
    const std::string power = dir.path() + "/power.jsonl";
    Emulator emu(h100_emulator_args(6, {"--power-log", power, "--power-delay-ms", "150"}));
    const std::string st = dir.path() + "/plinth.state.json";
    std::string text = apply_blueprint(bmc_endpoints(emu.base()), 6, emu.ca(), "Enabled", limit);
    std::string bp = dir.write("bp.yaml", text);
    auto created = run_plinth(apply_args(bp, st), "", kBmcEnv);
    INFO(created.out << created.err);
    REQUIRE(created.exit_code == 0);
    CHECK(most_down(power, 0) == 6);  // creates are not bounded: the six boot together
    const size_t before = lines_of(power);

    // A new driver pin: every node is reprovisioned (off, then booted with the new stack).
    text = repinned(text);
    REQUIRE_FALSE(text.empty());
    bp = dir.write("bp.yaml", text);
    auto args = apply_args(bp, st);
    args.insert(args.end(), {"--parallelism", "10"});
    auto rolled = run_plinth(args, "", kBmcEnv);
    INFO(rolled.out << rolled.err);
    REQUIRE(rolled.exit_code == 0);
    CHECK(count_of(rolled.out, ": replaced (") == 6);
    const int most = most_down(power, before);
    CHECK(most == std::stoi(limit));  // never more, and the rollout used what it may
    CHECK(contains(rolled.err, "rollout baremetal.node.train-a: 6 of 6 done, 0 down (max_unavailable " + limit + ")"));
  }
}

TEST_CASE("seeds: each created node's BMC fetches a NoCloud ISO carrying what plinth render prints, and a driver pin "
          "change delivers new ones",
          "[e2e][apply][seed][habits]") {
  // A site: the blueprint in its own directory, a web server for the seeds, two BMCs that fetch media.
  TempDir site;
  const std::string seeds = site.path() + "/seeds", media = site.path() + "/media", bp = site.path() + "/fleet";
  std::filesystem::create_directories(seeds);
  FileServer web(seeds);
  Emulator emu(h100_emulator_args(2, {"--media-dir", media}));
  std::string text = apply_blueprint(bmc_endpoints(emu.base()), 2, emu.ca());
  site.write("fleet/fleet.yaml", text);
  const std::vector<std::string> apply = {"apply", "fleet.yaml", "--state", "plinth.state.json", "--auto-approve"};
  std::map<std::string, std::string> env = kBmcEnv;
  env["PLINTH_BAREMETAL_SEED_DIR"] = seeds;
  env["PLINTH_BAREMETAL_SEED_URL"] = web.base();

  // Without a seed directory the plan says the stack would not reach the nodes.
  auto warned = run_plinth({"plan", "fleet.yaml", "--state", "plinth.state.json"}, bp, kBmcEnv);
  INFO(warned.out << warned.err);
  CHECK(warned.exit_code == 0);
  CHECK(contains(warned.err, "BM004"));
  CHECK(contains(warned.err, "boot without their rendered stack"));

  auto created = run_plinth(apply, bp, env);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
  CHECK_FALSE(contains(created.err, "BM004"));
  auto user_data = run_plinth({"render", "fleet.yaml", "--pool", "train-a"}, bp);
  auto network = run_plinth({"render", "fleet.yaml", "--pool", "train-a", "--network-config"}, bp);
  REQUIRE(user_data.exit_code == 0);
  REQUIRE(network.exit_code == 0);
  std::map<int, std::string> instance;
  for (int i = 0; i < 2; ++i) {
    INFO("BMC " << i);
    IsoContents iso = read_iso(media + "/" + std::to_string(i) + "/CD1");  // PXE boot: the seed takes the first CD
    CHECK(iso.volume_id == "cidata");
    CHECK(iso.files["user-data"] == user_data.out);
    CHECK(contains(iso.files["user-data"], kDriver));
    CHECK(iso.files["network-config"] == network.out);
    CHECK(contains(iso.files["meta-data"], "local-hostname: train-a-" + std::to_string(i) + "\n"));
    instance[i] = iso.files["meta-data"];
    const std::string file = site.write("user-data-" + std::to_string(i), iso.files["user-data"]);
    auto schema = run_program({"cloud-init", "schema", "--config-file", file});
    INFO(schema.out << schema.err);
    CHECK(schema.exit_code == 0);
    CHECK(contains(web.log(), "\"path\": \"/train-a-" + std::to_string(i) + ".iso\", \"status\": 200"));
    // Byte for byte the image plinth render makes for that node.
    const std::string own = site.path() + "/own-" + std::to_string(i) + ".iso";
    auto rendered = run_plinth(
        {"render", "fleet.yaml", "--pool", "train-a", "--node", "train-a-" + std::to_string(i), "--seed", own}, bp);
    REQUIRE(rendered.exit_code == 0);
    CHECK(slurp(own) == slurp(media + "/" + std::to_string(i) + "/CD1"));
  }

  // A new driver pin: each node is reprovisioned from a new seed carrying the new driver.
  text = repinned(text);
  REQUIRE_FALSE(text.empty());
  site.write("fleet/fleet.yaml", text);
  auto rolled = run_plinth(apply, bp, env);
  INFO(rolled.out << rolled.err);
  REQUIRE(rolled.exit_code == 0);
  CHECK(count_of(rolled.out, ": replaced (") == 2);
  auto rendered = run_plinth({"render", "fleet.yaml", "--pool", "train-a"}, bp);
  for (int i = 0; i < 2; ++i) {
    INFO("BMC " << i);
    IsoContents iso = read_iso(media + "/" + std::to_string(i) + "/CD1");
    CHECK(iso.files["user-data"] == rendered.out);
    CHECK(contains(iso.files["user-data"], "550.90.07"));
    CHECK_FALSE(contains(iso.files["user-data"], kDriver));
    CHECK(contains(iso.files["meta-data"], "local-hostname: train-a-" + std::to_string(i) + "\n"));
    CHECK(iso.files["meta-data"] != instance[i]);  // a new instance-id: cloud-init runs again
  }

  // Destroy ejects the seeds and deletes their files.
  auto destroyed = run_plinth({"destroy", "fleet.yaml", "--state", "plinth.state.json", "--auto-approve"}, bp, env);
  INFO(destroyed.out << destroyed.err);
  REQUIRE(destroyed.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(seeds + "/train-a-0.iso"));
  CHECK_FALSE(std::filesystem::exists(seeds + "/train-a-1.iso"));
  CHECK(contains(emu.log(), "VirtualMedia.EjectMedia"));
}

TEST_CASE("wrong credentials and an unreachable BMC: clear errors naming node and URL, exit 1, state kept",
          "[e2e][apply]") {
  Emulator emu(h100_emulator_args(3, {"--override", "1:password=secret"}));
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  std::string bp = dir.write("bp.yaml", apply_blueprint(bmc_endpoints(emu.base()), 3, emu.ca()));
  // A plan that could not read a server is no plan: exit 1 (not 2), no plan file.
  const std::string saved = dir.path() + "/release.plan";
  auto plan = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode", "-out", saved}, "", kBmcEnv);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 1);
  CHECK(contains(plan.err, "plinth plan: cannot read 1 server(s) the plan creates or keeps: baremetal.node.train-a[1]"));
  CHECK(contains(plan.err, "401"));
  CHECK(contains(plan.err, "Nothing was saved: fix the access (credentials, network, CA bundle), or plan with "
                           "--refresh=false"));
  CHECK_FALSE(std::filesystem::exists(saved));
  auto refused = run_plinth(apply_args(bp, st), "", kBmcEnv);
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "cannot read 1 server(s) the plan creates or keeps: baremetal.node.train-a[1]"));
  CHECK(contains(refused.err, "Nothing was changed"));
  CHECK_FALSE(std::filesystem::exists(st));
  // Without the read (--refresh=false) the apply goes ahead: the node's create fails with the 401.
  auto args = apply_args(bp, st);
  args.push_back("--refresh=false");
  auto r = run_plinth(args, "", kBmcEnv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("apply: baremetal.node.train-a[1]: create failed (") != std::string::npos);
  CHECK(r.out.find(emu.bmc(1)) != std::string::npos);
  CHECK(r.out.find("401") != std::string::npos);
  CHECK(r.out.find("Apply incomplete: 5 succeeded, 1 failed, 0 skipped.") != std::string::npos);
  CHECK(nodes_in_state(st) == std::set<int>{0, 2});

  // A BMC that nobody answers on: its node fails, the others in state stay.
  std::string bp2 = dir.write("bp.yaml", apply_blueprint("[\"" + emu.bmc(0) + "\", \"https://127.0.0.1:1/bmc/1\", \"" +
                                                             emu.bmc(2) + "\"]", 3, emu.ca()));
  auto u = run_plinth(apply_args(bp2, st), "", kBmcEnv);
  INFO(u.out << u.err);
  CHECK(u.exit_code == 1);
  CHECK((u.out + u.err).find("baremetal.node.train-a[1]") != std::string::npos);
  CHECK((u.out + u.err).find("https://127.0.0.1:1") != std::string::npos);
  CHECK(nodes_in_state(st) == std::set<int>{0, 2});
}

TEST_CASE("a BMC that accepts connections and never answers fails its node at the deadline, the others finish",
          "[e2e][apply]") {
  Emulator emu(h100_emulator_args(4, {"--hang-bmc", "2"}));
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  std::string bp = dir.write("bp.yaml", apply_blueprint(bmc_endpoints(emu.base()), 4, emu.ca()));
  auto args = apply_args(bp, st);
  // Long enough for the healthy nodes even in a sanitizer build under load;
  // the hung one waits all of it out.
  // --refresh=false: the plan's read of the hung server would stop the apply before any change.
  args.insert(args.end(), {"--provider-option", "baremetal.create_deadline=8s", "--refresh=false"});
  auto r = run_plinth(args, "", kBmcEnv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  // One clear message for the hung node: its deadline, one attempt count.
  CHECK(r.out.find("baremetal.node.train-a[2] (create): create did not finish within its deadline of 8s "
                   "(baremetal.create_deadline)") != std::string::npos);
  CHECK(count_of(r.out + r.err, "gave up after") == 0);
  CHECK(r.out.find("Timed out (the operation's deadline passed; see the provider's *_deadline options):\n"
                   "  baremetal.node.train-a[2] (create)\n") != std::string::npos);
  CHECK(nodes_in_state(st) == std::set<int>{0, 1, 3});
}

TEST_CASE("apply refuses without a terminal unless --auto-approve, before touching anything", "[e2e][apply]") {
  TempDir dir;
  std::string bp = dir.write("bp.yaml", apply_blueprint("\"https://127.0.0.1:1/bmc/{index}\"", 2, "/nonexistent/ca.pem"));
  auto r = run_plinth({"apply", bp, "--state", dir.path() + "/s.json"}, "", kBmcEnv);
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "plinth apply: stdin is not a terminal, so there is no one to confirm the changes; review them with 'plinth "
        "plan -out PLANFILE' and apply that file (no question is asked for a saved plan), or re-run with "
        "--auto-approve\n");
  CHECK(slurp(dir.path() + "/s.json").empty());
  auto p = run_plinth({"apply", bp, "--auto-approve", "--parallelism", "0"}, "", kBmcEnv);
  CHECK(p.exit_code == 1);
  CHECK(p.err.find("plinth apply: --parallelism '0' must be a whole number from 1 to 1000\n") != std::string::npos);
}

TEST_CASE("inventory: servers with fewer GPUs than the pool declares stop the first apply before any change",
          "[e2e][apply][inventory]") {
  Emulator emu(h100_emulator_args(3, {"--override", "1:gpus=4"}));
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  std::string bp = dir.write("bp.yaml", apply_blueprint(bmc_endpoints(emu.base()), 3, emu.ca()));
  auto r = run_plinth(apply_args(bp, st), "", kBmcEnv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("error[BM002]: BMC reports 4 × NVIDIA H100 80GB HBM3, pool declares 8 (baremetal.node.train-a[1])") !=
        std::string::npos);
  CHECK(count_of(r.err, "error[BM002]") == 1);
  CHECK(r.err.find("the inventory of 1 server(s) differs from the blueprint (errors above); nothing was changed") !=
        std::string::npos);
  CHECK(changing_requests(emu.log_path()) == 0);  // no PATCH, no Reset on any server
  CHECK(nodes_in_state(st).empty());
}

TEST_CASE("inventory: a pool declaring fewer GPUs than its servers hold is an error, not a replace",
          "[e2e][apply][inventory]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  std::string text = apply_blueprint(bmc_endpoints(emu.base()), 2, emu.ca());
  std::string bp = dir.write("bp.yaml", text);
  REQUIRE(run_plinth(apply_args(bp, st), "", kBmcEnv).exit_code == 0);
  const size_t before = changing_requests(emu.log_path());
  text.replace(text.find("gpus_per_node: 8"), 16, "gpus_per_node: 4");
  dir.write("bp.yaml", text);
  auto r = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", kBmcEnv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("error[BM002]: BMC reports 8 × NVIDIA H100 80GB HBM3, pool declares 4 (baremetal.node.train-a[0])") !=
        std::string::npos);
  CHECK(r.out.find("replace") == std::string::npos);
  auto a = run_plinth(apply_args(bp, st), "", kBmcEnv);
  CHECK(a.exit_code == 1);
  CHECK(changing_requests(emu.log_path()) == before);
  CHECK(nodes_in_state(st) == std::set<int>{0, 1});
}

TEST_CASE("a failing mandatory policy refuses apply before any provider call", "[e2e][apply]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  std::string text = apply_blueprint(bmc_endpoints(emu.base()), 2, emu.ca());
  // An image by tag, not digest, with SOC 2 selected: mandatory policies fail.
  text.replace(text.find("metadata: {name: e2e-apply, owner: ml-platform}"),
               std::string("metadata: {name: e2e-apply, owner: ml-platform}").size(),
               "metadata: {name: e2e-apply, owner: ml-platform, compliance: [soc2]}");
  std::string bp = dir.write("bp.yaml", text);
  const std::string before = emu.log();
  auto r = run_plinth(apply_args(bp, st), "", kBmcEnv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("error[SOC2-") != std::string::npos);
  CHECK(emu.log() == before);  // the emulator's request log proves no provider call was made
  CHECK_FALSE(std::filesystem::exists(st));
}

}  // namespace plinth::test::e2e_apply
