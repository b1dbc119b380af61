// plinth state list|show|history|restore|unlock on state files written in a
// temporary directory, in the documented format (docs/state.md).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "engine/core/hash.h"
#include "tests/support/run.h"

namespace plinth::test::e2e_state {

using Json = nlohmann::json;

namespace {

const char* kLineage = "6f1c2a8e-3b4d-4e5f-9a6b-7c8d9e0f1a2b";

Json resource(const std::string& type, const std::string& name, int index, Json attributes, Json computed = Json::object()) {
  std::string address = type + "." + name + (index >= 0 ? "[" + std::to_string(index) + "]" : "");
  return {{"address", address},   {"type", type},           {"name", name},
          {"index", index},       {"provider", type.substr(0, type.find('.')) == "net" ? "plinth" : "baremetal"},
          {"source", "blueprints/examples/lab.yaml:30:7"},
          {"depends_on", Json::array()}, {"attributes", attributes}, {"computed", computed}};
}

/// A state document as docs/state.md specifies it, checksum included.
std::string state_text(uint64_t serial, Json resources) {
  Json doc = {{"format_version", 1}, {"lineage", kLineage}, {"serial", serial}, {"plinth_version", "0.1.0"},
              {"resources", resources}};
  doc["checksum"] = "sha256:" + plinth::sha256_hex(doc.dump());
  return doc.dump(2) + "\n";
}

Json lab_resources() {
  Json node0 = resource("baremetal.node", "lab", 0,
                        {{"gpu", "L40S"}, {"bios", {{"SriovEnable", true}}}, {"bmc_credentials", "env:LAB_BMC"}},
                        {{"bmc_serial", "SN-0"}});
  node0["depends_on"] = {"net.vlan.mgmt"};
  return Json::array({resource("net.vlan", "mgmt", -1, {{"id", 10}}), node0,
                      resource("baremetal.node", "lab", 1, {{"gpu", "L40S"}})});
}

/// Another process holding PATH.lock the way a running `plinth apply` does.
struct OtherRun {
  pid_t pid = -1;
  int release_fd = -1;
  std::string since = "2026-12-02T13:04:05Z";

  explicit OtherRun(const std::string& lock_path) {
    int ready[2], release[2];
    REQUIRE(pipe(ready) == 0);
    REQUIRE(pipe(release) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(ready[0]);
      close(release[1]);
      int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) _exit(1);
      std::string info = Json{{"pid", getpid()}, {"host", hostname()}, {"time", since}, {"operation", "plinth apply"}}.dump();
      if (write(fd, info.data(), info.size()) != static_cast<ssize_t>(info.size())) _exit(1);
      if (write(ready[1], "y", 1) != 1) _exit(1);
      char c;
      while (read(release[0], &c, 1) > 0) {
      }
      _exit(0);
    }
    close(ready[1]);
    close(release[0]);
    release_fd = release[1];
    char c = 0;
    REQUIRE(read(ready[0], &c, 1) == 1);
    close(ready[0]);
  }
  void kill_hard() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    pid = -1;
  }
  ~OtherRun() {
    kill_hard();
    close(release_fd);
  }
};

}  // namespace

TEST_CASE("e2e: plinth state list prints the addresses sorted, from --state, PLINTH_STATE or ./plinth.state.json", "[state]") {
  TempDir dir;
  std::string path = dir.write("plinth.state.json", state_text(4, lab_resources()));
  const std::string expected = "baremetal.node.lab[0]\nbaremetal.node.lab[1]\nnet.vlan.mgmt\n";

  auto r = run_plinth({"state", "list", "--state", path});
  CHECK(r.err == "");
  CHECK(r.out == expected);
  CHECK(r.exit_code == 0);

  r = run_plinth({"state", "list"}, dir.path());
  CHECK(r.out == expected);
  CHECK(r.exit_code == 0);

  r = run_plinth({"state", "list"}, "", {{"PLINTH_STATE", path}});
  CHECK(r.out == expected);

  r = run_plinth({"state", "list", "--state=" + dir.path() + "/none.json"});
  CHECK(r.out == "");
  CHECK(r.err == "plinth state: no state at " + dir.path() +
                     "/none.json yet (nothing has been applied there); pass --state FILE or set PLINTH_STATE to use "
                     "another\n");
  CHECK(r.exit_code == 0);
}

TEST_CASE("e2e: plinth state show prints one resource, and suggests a close address", "[state]") {
  TempDir dir;
  std::string path = dir.write("s.json", state_text(4, lab_resources()));
  auto r = run_plinth({"state", "show", "baremetal.node.lab[0]", "--state", path});
  CHECK(r.err == "");
  CHECK(r.out ==
        "# baremetal.node.lab[0]\n"
        "type       = baremetal.node\n"
        "name       = lab\n"
        "index      = 0\n"
        "provider   = baremetal\n"
        "declared   = blueprints/examples/lab.yaml:30:7\n"
        "depends on = net.vlan.mgmt\n"
        "\n"
        "attributes:\n"
        "  bios.SriovEnable = true\n"
        "  bmc_credentials = (sensitive)\n"
        "  gpu = \"L40S\"\n"
        "\n"
        "computed:\n"
        "  bmc_serial = \"SN-0\"\n");
  CHECK(r.exit_code == 0);

  r = run_plinth({"state", "show", "net.vlan.mgnt", "--state", path});
  CHECK(r.out == "");
  CHECK(r.err == "plinth state: no resource 'net.vlan.mgnt' in state " + path + "; did you mean 'net.vlan.mgmt'?\n");
  CHECK(r.exit_code == 1);
}

TEST_CASE("e2e: plinth state list --json and show --json give scripts the resources, never a sensitive value",
          "[state][habits]") {
  TempDir dir;
  dir.write("plinth.state.json", state_text(4, lab_resources()));
  auto r = run_plinth({"state", "list", "--json"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Json list = Json::parse(r.out);
  CHECK(list["format_version"] == 1);
  CHECK(list["serial"] == 4);
  CHECK(list["lineage"] == kLineage);
  REQUIRE(list["resources"].size() == 3);
  CHECK(list["resources"][0] == Json{{"address", "baremetal.node.lab[0]"},
                                     {"type", "baremetal.node"},
                                     {"name", "lab"},
                                     {"index", 0},
                                     {"provider", "baremetal"},
                                     {"declared", "blueprints/examples/lab.yaml:30:7"}});
  CHECK_FALSE(list["resources"][2].contains("index"));  // net.vlan.mgmt is not counted

  r = run_plinth({"state", "show", "baremetal.node.lab[0]", "--json"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("LAB_BMC") == std::string::npos);  // not even the credential's reference
  const Json node = Json::parse(r.out);
  CHECK(node["attributes"]["gpu"] == "L40S");
  CHECK(node["attributes"]["bmc_credentials"].is_null());
  CHECK(node["sensitive_attributes"] == Json::array({"bmc_credentials"}));
  CHECK(node["computed"]["bmc_serial"] == "SN-0");
  CHECK(node["depends_on"] == Json::array({"net.vlan.mgmt"}));

  r = run_plinth({"state", "show", "net.vlan.mgnt", "--json"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("did you mean 'net.vlan.mgmt'?") != std::string::npos);
  r = run_plinth({"state", "list", "--json", "--state", dir.path() + "/none.json"});
  CHECK(r.exit_code == 1);  // a wrong --state is not an empty fleet
  CHECK(r.out == "");
}

TEST_CASE("e2e: a damaged state file is refused and left untouched", "[state]") {
  TempDir dir;
  std::string good = state_text(4, lab_resources());
  std::string text = good;
  text.replace(text.find("L40S"), 4, "H100");
  std::string path = dir.write("s.json", text);
  auto r = run_plinth({"state", "list", "--state", path});
  CHECK(r.exit_code == 1);
  CHECK(r.out == "");
  CHECK(r.err.rfind("plinth state: state file " + path + " fails its checksum (stored sha256:", 0) == 0);
  CHECK(r.err.find("): it was damaged or edited by hand. Plinth left the file untouched. Restore a good version with "
                   "'plinth state history' and 'plinth state restore SERIAL' (or from your backup of " +
                   path + "), then run again.\n") != std::string::npos);

  dir.write("s.json", good.substr(0, good.size() / 2));
  r = run_plinth({"state", "show", "net.vlan.mgmt", "--state", path});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth state: state file " + path + " is truncated: the JSON ends at " + path + ":") == 0);
  CHECK(slurp(path) == good.substr(0, good.size() / 2));
}

TEST_CASE("e2e: plinth state history and restore bring back an old version as a new serial", "[state]") {
  TempDir dir;
  Json v1 = Json::array({resource("net.vlan", "mgmt", -1, {{"id", 10}})});
  dir.write("s.json.d/history/1.json", state_text(1, v1));
  dir.write("s.json.d/history/2.json", state_text(2, lab_resources()));
  std::string path = dir.write("s.json", state_text(2, lab_resources()));

  auto r = run_plinth({"state", "history", "--state", path});
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");
  REQUIRE(r.out.rfind("  SERIAL  SAVED (UTC)           RESOURCES\n", 0) == 0);
  CHECK(r.out.find("\n       1  ") != std::string::npos);
  CHECK(r.out.find("          1\n       2  ") != std::string::npos);
  CHECK(r.out.find("          3  (current)\n") != std::string::npos);

  r = run_plinth({"state", "restore", "1", "--state", path});
  CHECK(r.err == "");
  CHECK(r.out == "restored serial 1 of state " + path + " as serial 3 (1 resources)\n");
  CHECK(r.exit_code == 0);
  CHECK(run_plinth({"state", "list", "--state", path}).out == "net.vlan.mgmt\n");
  Json now = Json::parse(slurp(path));
  CHECK(now["serial"] == 3);
  CHECK(now["lineage"] == kLineage);
  CHECK(run_plinth({"state", "history", "--state", path}).out.find("       3  ") != std::string::npos);

  r = run_plinth({"state", "restore", "9", "--state", path});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "plinth state: no saved version 9 of state " + path +
                     " (kept: 1 to 3); 'plinth state history' lists them\n");
  r = run_plinth({"state", "restore", "latest", "--state", path});
  CHECK(r.err == "plinth state: 'latest' is not a serial number; 'plinth state history' lists the saved serials\n");
}

TEST_CASE("e2e: a second plinth is told who holds the lock, unlock removes only a dead holder's lock", "[state]") {
  TempDir dir;
  dir.write("s.json.d/history/1.json", state_text(1, lab_resources()));
  std::string path = dir.write("s.json", state_text(1, lab_resources()));
  OtherRun other(path + ".lock");
  std::string who = "PID " + std::to_string(other.pid) + " on " + hostname() + " since " + other.since +
                    " (plinth apply)";

  auto r = run_plinth({"state", "restore", "1", "--state", path});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "plinth state: state " + path + " is locked by " + who +
                     "; wait for it to finish, or pass --lock-timeout=60s to wait, or run 'plinth state unlock' if "
                     "that process is gone\n");
  r = run_plinth({"state", "restore", "1", "--state", path, "--lock-timeout=200ms"});
  CHECK(r.err == "plinth state: state " + path + " is still locked by " + who +
                     " after waiting 200ms; wait for it to finish, or pass a longer --lock-timeout, or run 'plinth "
                     "state unlock' if that process is gone\n");
  r = run_plinth({"state", "restore", "1", "--state", path, "--lock-timeout", "soon"});
  CHECK(r.err == "plinth state: invalid duration 'soon': expected a number at 'soon'; write a number with a unit: "
                 "500ms, 30s, 2m, 1h or 1m30s\n");

  r = run_plinth({"state", "unlock", "--state", path});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "plinth state: state " + path + " is locked by " + who +
                     ", and that process is still running; wait for it to finish, or pass --force to remove the lock "
                     "anyway (only if you are sure it is not writing state)\n");

  other.kill_hard();
  r = run_plinth({"state", "unlock", "--state", path});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "removed the stale lock of " + who + " on state " + path + ": that process is gone\n");
  CHECK_FALSE(std::filesystem::exists(path + ".lock"));
  r = run_plinth({"state", "restore", "1", "--state", path});
  CHECK(r.out == "restored serial 1 of state " + path + " as serial 2 (3 resources)\n");
}

TEST_CASE("e2e: plinth state with a wrong subcommand or argument says what to use", "[state]") {
  auto r = run_plinth({"state", "lst"});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "plinth state: unknown subcommand 'lst'; did you mean 'list'?\n");
  r = run_plinth({"state"});
  CHECK(r.err == "plinth state: missing subcommand; use one of: list, show, history, restore, unlock, rm, mv, rekey, migrate, push-journal (see "
                 "'plinth help state')\n");
  r = run_plinth({"state", "show"});
  CHECK(r.err == "plinth state: missing argument; usage: plinth state show ADDRESS [--state FILE]\n");
  r = run_plinth({"state", "list", "extra"});
  CHECK(r.err == "plinth state: unexpected argument 'extra'; usage: plinth state list [--state FILE]\n");
}

}  // namespace plinth::test::e2e_state
