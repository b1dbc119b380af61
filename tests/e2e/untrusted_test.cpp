// Pull-request safety (docs/security.md), replayed as the attacks they stop,
// with the installed-style binary run from a blueprint directory outside the
// source tree: the checkout is the attacker's, the state, the trust file and
// the environment are the operator's. An emulated BMC stands in for the
// attacker's server: its request log is the evidence that nothing was sent.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/hash.h"
#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_untrusted {

namespace fs = std::filesystem;

namespace {

size_t requests(const Emulator& emu) {
  std::ifstream in(emu.log_path());
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

/// Two bare-metal nodes behind `emu`, their credentials read from `credentials`; `extra` (top-level
/// keys) after the metadata.
std::string pr_blueprint(const Emulator& emu, const std::string& credentials, const std::string& extra = "") {
  return blueprint_header("pr-plan") + extra + train_stack_lean() + "node_pools:\n" +
         baremetal_pool({.endpoints = bmc_endpoints(emu.base()),
                         .ca = emu.ca(),
                         .credentials = credentials,
                         .boot = false,
                         .mig = false});
}

/// Applies cluster.yaml in `dir` to the state `state` and returns what was saved.
state::StateDocument applied(const TempDir& dir, const std::string& state,
                             const std::map<std::string, std::string>& env) {
  auto r = run_plinth({"apply", "cluster.yaml", "--state", state, "--auto-approve"}, dir.path(), env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto doc = state::parse(slurp(state), state);
  REQUIRE(doc.ok());
  return *doc;
}

/// The operator's side: a state location and a trust file outside the checkout.
struct Operator {
  TempDir dir;
  std::string state = dir.path() + "/prod.state.json";
  std::string trust(const std::string& text) const { return dir.write("plinth-trust.yaml", text); }
};

}  // namespace

TEST_CASE("an untrusted plan reads and sends no credential the trust file does not allow, and plans as before with "
          "one that does", "[e2e][security]") {
  Emulator emu(h100_emulator_args(2));
  TempDir checkout, secrets;
  Operator op;
  const std::string shadow = secrets.write("shadow", "root:$6$not-a-real-hash\n");
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"}, {"NO_COLOR", "1"}};

  // The pull request points the pool's credentials at a file of the runner's.
  checkout.write("cluster.yaml", pr_blueprint(emu, "file:" + shadow));
  auto r = run_plinth({"plan", "cluster.yaml", "--untrusted", "--state", op.state}, checkout.path(), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "error[SEC001]"));
  CHECK(contains(r.err, "cluster.yaml:"));
  CHECK(contains(r.err, "untrusted plan: baremetal.node.train-a[0] would send the credential file:" + shadow + " to " +
                            emu.base() + "/bmc/0; no trust file was given (--trust FILE) to allow it"));
  CHECK(contains(r.err, "credentials: [{ref: \"file:" + shadow + "\", endpoints: [\"" + emu.base() + "/bmc/0\"]}]"));
  CHECK_FALSE(contains(r.err + r.out, "not-a-real-hash"));
  CHECK(requests(emu) == 0);  // nothing reached the server
  CHECK_FALSE(fs::exists(op.state));

  // The same with the operator's credential and a trust file that allows it:
  // the plan reads the servers and shows the changes; it writes nothing.
  checkout.write("cluster.yaml", pr_blueprint(emu, "env:BMC_CREDENTIALS"));
  const std::string trust = op.trust("apiVersion: plinth/v1\nkind: Trust\ncredentials:\n"
                                     "  - {ref: \"env:BMC_CREDENTIALS\", endpoints: [\"" + emu.base() + "/bmc/*\"]}\n");
  r = run_plinth({"plan", "cluster.yaml", "--untrusted", "--trust", trust, "--state", op.state, "--detailed-exitcode"},
                 checkout.path(), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "Plan: 3 to create"));  // the two nodes and their stack
  CHECK(requests(emu) > 0);
  CHECK_FALSE(fs::exists(op.state));
  CHECK_FALSE(fs::exists(op.state + ".d"));  // not even the lock

  // PLINTH_UNTRUSTED and PLINTH_TRUST_FILE do the same as the flags.
  auto by_env = env;
  by_env["PLINTH_UNTRUSTED"] = "1";
  by_env["PLINTH_TRUST_FILE"] = trust;
  by_env["PLINTH_STATE"] = op.state;
  r = run_plinth({"plan", "cluster.yaml", "--detailed-exitcode"}, checkout.path(), by_env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);

  // A trust file in the checkout is the pull request's own: refused.
  const std::string planted = checkout.write("plinth-trust.yaml", slurp(trust));
  r = run_plinth({"plan", "cluster.yaml", "--untrusted", "--trust", "plinth-trust.yaml", "--state", op.state},
                 checkout.path(), env);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "the trust file plinth-trust.yaml is inside"));
  // The state must be the operator's: the default sits in the checkout.
  r = run_plinth({"plan", "cluster.yaml", "--untrusted", "--trust", trust}, checkout.path(), env);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "an untrusted plan needs the state named by the operator"));
  // Nor may the state be a file in the checkout: the pull request would choose the endpoints refreshed.
  checkout.write("plinth.state.json", "{}");
  r = run_plinth({"plan", "cluster.yaml", "--untrusted", "--trust", trust, "--state", "plinth.state.json"},
                 checkout.path(), env);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "the state plinth.state.json is inside"));
  // Commands that write are refused in untrusted mode.
  auto apply_env = by_env;
  r = run_plinth({"apply", "cluster.yaml", "--auto-approve"}, checkout.path(), apply_env);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "refusing to run plinth apply in untrusted mode"));
}

TEST_CASE("under --untrusted a blueprint cannot say where requests go, and its symbolic links to secrets are not read",
          "[e2e][security]") {
  Emulator emu(h100_emulator_args(2));
  TempDir checkout, secrets;
  Operator op;
  const std::string trust = op.trust("apiVersion: plinth/v1\nkind: Trust\ncredentials:\n"
                                     "  - {ref: \"env:BMC_CREDENTIALS\", endpoints: [\"" + emu.base() + "/bmc/*\"]}\n");
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"}};
  checkout.write("cluster.yaml", pr_blueprint(emu, "env:BMC_CREDENTIALS",
                                              "providers:\n  baremetal:\n    options: {ca_bundle: /tmp/attacker-ca.pem}\n"));
  auto r = run_plinth({"plan", "cluster.yaml", "--untrusted", "--trust", trust, "--state", op.state}, checkout.path(),
                      env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "untrusted plan: the blueprint sets providers.baremetal.options.ca_bundle, which says where "
                        "requests and credentials go"));
  CHECK(contains(r.err, "cluster.yaml:"));
  CHECK(requests(emu) == 0);

  // A blueprint file that links to a secret of the runner's is not read.
  const std::string key = secrets.write("id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret-key-material\n");
  fs::remove(checkout.path() + "/cluster.yaml");
  fs::create_symlink(key, checkout.path() + "/evil.yaml");
  r = run_plinth({"plan", ".", "--untrusted", "--trust", trust, "--state", op.state}, checkout.path(), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "is a symbolic link out of its directory"));
  CHECK_FALSE(contains(r.out + r.err, "secret-key-material"));
}

TEST_CASE("a journal planted in the checkout is never written into the state, and its endpoints get no request",
          "[e2e][security]") {
  Emulator emu(h100_emulator_args(2)), attacker(h100_emulator_args(2));
  TempDir checkout, home;
  Operator op;
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"}, {"HOME", home.path()}};
  checkout.write("cluster.yaml", pr_blueprint(emu, "env:BMC_CREDENTIALS"));
  const state::StateDocument before = applied(checkout, op.state, env);

  // The forged journal: the same lineage, the next serial, every BMC the attacker's.
  const std::string journal = checkout.path() + "/.plinth-journal/" +
                              sha256_hex(state::redact_location(op.state)).substr(0, 16) + ".state.json";
  fs::create_directories(fs::path(journal).parent_path());
  {
    auto j = state::open_local(journal);
    REQUIRE(j->save(before).ok());
    state::StateDocument forged = before;
    forged.serial += 1;
    for (auto& res : forged.resources)
      if (res.attributes.contains("bmc_endpoint")) {
        res.attributes["bmc_endpoint"] = attacker.bmc(0);
        res.attributes["bmc_ca_bundle"] = attacker.ca();  // a CA the pull request brings
      }
    REQUIRE(j->save(forged).ok());
  }
  for (const auto& cmd : std::vector<std::vector<std::string>>{
           {"plan", "cluster.yaml", "--state", op.state},
           {"apply", "cluster.yaml", "--state", op.state, "--auto-approve"}}) {
    auto r = run_plinth(cmd, checkout.path(), env);
    INFO(cmd[0] << ": " << r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_FALSE(contains(r.err, "journal"));
  }
  auto after = state::parse(slurp(op.state), op.state);
  REQUIRE(after.ok());
  CHECK(after->serial == before.serial);
  for (const auto& res : after->resources)
    if (res.attributes.contains("bmc_endpoint")) CHECK_FALSE(contains(res.attributes["bmc_endpoint"].dump(), attacker.base()));
  CHECK(requests(attacker) == 0);
}

TEST_CASE("deeply nested JSON from a BMC, a state or a plan file is an error, never a crash", "[e2e][security]") {
  TempDir dir;
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"}};
  // The fleet is applied; then its state points at a BMC whose every answer
  // nests 200,000 objects deep, and the next plan refreshes from it.
  Emulator emu(h100_emulator_args(2));
  Emulator hostile({"--bmcs", "2", "--gpus", "8", "--memory-gib", "2048", "--override", "0:deep-json=200000",
                    "--override", "1:deep-json=200000"});
  dir.write("cluster.yaml", pr_blueprint(emu, "env:BMC_CREDENTIALS"));
  const std::string s = dir.path() + "/s.json";
  state::StateDocument doc = applied(dir, s, env);
  for (auto& res : doc.resources)
    if (res.attributes.contains("bmc_endpoint")) {
      res.attributes["bmc_endpoint"] = hostile.bmc(res.index);
      res.attributes["bmc_ca_bundle"] = hostile.ca();
    }
  doc.serial += 1;
  std::ofstream(s) << state::to_json_text(doc);
  auto r = run_plinth({"plan", "cluster.yaml", "--state", s}, dir.path(), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "the BMC answered JSON that nests arrays or objects deeper than 256 levels"));

  // A state file and a plan file whose resource holds an attribute 100,000
  // objects deep (before the limit: exit 139 on the state's checksum and the
  // plan's copy of the resource).
  std::string nested;
  for (int i = 0; i < 100000; ++i) nested += "{\"x\":";
  nested += "1" + std::string(100000, '}');
  const std::string resource = "{\"address\":\"net.vlan.a\",\"type\":\"net.vlan\",\"name\":\"a\",\"index\":-1,"
                               "\"provider\":\"plinth\",\"depends_on\":[],\"attributes\":{\"deep\":" + nested +
                               "},\"computed\":{}}";
  dir.write("deep.state.json", "{\"format_version\":1,\"lineage\":\"6d3c1f9e-8a1b-4c7d-9e2f-0a1b2c3d4e5f\","
                               "\"serial\":1,\"plinth_version\":\"0.1.0\",\"checksum\":\"sha256:00\",\"resources\":[" +
                                   resource + "]}\n");
  r = run_plinth({"plan", "cluster.yaml", "--state", dir.path() + "/deep.state.json", "--refresh=false"}, dir.path(),
                 env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "nests arrays or objects deeper than 256 levels"));
  dir.write("deep.plan", "{\"format\":\"plinth-plan\",\"format_version\":2,\"created_at\":\"2026-12-04T00:00:00Z\","
                         "\"bindings\":{\"plinth_version\":\"0.1.0\",\"blueprints\":{},\"policies\":{},\"state\":{"
                         "\"location\":\"s.json\",\"existed\":true,\"lineage\":\"x\",\"serial\":1},\"git\":{"
                         "\"commit\":\"\",\"dirty\":false}},\"plan\":{\"format_version\":\"1.0\",\"resource_changes\":[{"
                         "\"action\":\"create\",\"address\":\"net.vlan.a\",\"type\":\"net.vlan\",\"changes\":[],"
                         "\"after\":" + resource + "}]}}\n");
  r = run_plinth({"show", "deep.plan"}, dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  // Shallow but dense: 4,000,000 empty arrays in 12 MB would cost some 25
  // times that once parsed; refused from its shape before parsing.
  std::string wide;
  wide.reserve(12'000'000);
  for (int i = 0; i < 4'000'000; ++i) wide += i ? ",[]" : "[]";
  dir.write("wide.state.json", "{\"format_version\":1,\"lineage\":\"6d3c1f9e-8a1b-4c7d-9e2f-0a1b2c3d4e5f\","
                               "\"serial\":1,\"plinth_version\":\"0.1.0\",\"checksum\":\"sha256:00\",\"resources\":[" +
                                   wide + "]}\n");
  auto w = run_plinth({"plan", "cluster.yaml", "--state", dir.path() + "/wide.state.json", "--refresh=false"},
                      dir.path(), env);
  INFO(w.err);
  CHECK(w.exit_code == 1);
  CHECK(contains(w.err, "holds 4000002 arrays and objects in 12000"));
  CHECK(contains(r.err, "plan file deep.plan nests arrays or objects deeper than 256 levels"));
}

TEST_CASE("a state that points a node at plain http, or holds an address with escape sequences, is refused",
          "[e2e][security]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"}, {"NO_COLOR", "1"}};
  dir.write("cluster.yaml", pr_blueprint(emu, "env:BMC_CREDENTIALS"));
  const std::string s = dir.path() + "/s.json";
  const state::StateDocument doc = applied(dir, s, env);
  state::StateDocument http = doc;
  for (auto& res : http.resources)
    if (res.attributes.contains("bmc_endpoint")) res.attributes["bmc_endpoint"] = "http://bmc-attacker.example/bmc/0";
  http.serial += 1;
  std::ofstream(s) << state::to_json_text(http);
  auto r = run_plinth({"plan", "cluster.yaml", "--state", s}, dir.path(), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "refusing plain http to host 'bmc-attacker.example'"));

  state::StateDocument forged = doc;
  forged.serial += 2;
  forged.resources.back().address = "net.vlan.x\x1b[2J\nApply complete! Resources: 0 added";
  std::ofstream(s) << state::to_json_text(forged);
  r = run_plinth({"plan", "cluster.yaml", "--state", s}, dir.path(), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "holds control characters or invalid UTF-8, which plinth never writes"));
  CHECK_FALSE(contains(r.out + r.err, "\x1b[2J"));
  CHECK_FALSE(contains(r.out + r.err, "\nApply complete!"));
}

TEST_CASE("under --untrusted a blueprint cannot send a cloud's token or secret elsewhere: endpoint and authority "
          "options come from the operator", "[e2e][security]") {
  TempDir checkout;
  Operator op;
  const std::string trust = op.trust("apiVersion: plinth/v1\nkind: Trust\n");
  const std::string pool = "burst_pools:\n"
                           "  - {name: gpu, provider: gcp, region: us-central1, instance_type: a3-highgpu-8g, desired: 1,\n"
                           "     max: 4, spot: false, stack: train,\n"
                           "     image: projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts}\n"
                           "stacks:\n"
                           "  train:\n"
                           "    driver: \"550.54.15\"\n"
                           "    cuda: \"12.4\"\n"
                           "    images: [\"nvcr.io/nvidia/pytorch@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58\"]\n";
  checkout.write("cloud.yaml", "apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: pr-plan, owner: ml-platform}\n"
                               "providers:\n  gcp:\n    options: {endpoint: \"https://compute.attacker.example/compute/v1/\"}\n" +
                                   pool);
  const std::map<std::string, std::string> env = {{"GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.operator-token"},
                                                  {"GOOGLE_CLOUD_PROJECT", "ml-prod"}};
  auto r = run_plinth({"plan", "cloud.yaml", "--untrusted", "--trust", trust, "--state", op.state}, checkout.path(), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "cloud.yaml:6:"));
  CHECK(contains(r.err, "untrusted plan: the blueprint sets providers.gcp.options.endpoint, which says where requests "
                        "and credentials go; under --untrusted it comes only from the environment, --provider-option "
                        "or the trust file (providers: {gcp: {endpoint: ...}})"));
  CHECK_FALSE(contains(r.out + r.err, "ya29.operator-token"));
}

TEST_CASE("an encrypted state replaced by one written in clear is refused, and its planted file: reference is never "
          "used", "[e2e][security]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;
  const std::string key(64, 'c');
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"}, {"PLINTH_STATE_KEY", key}};
  dir.write("cluster.yaml", pr_blueprint(emu, "env:BMC_CREDENTIALS"));
  const std::string s = dir.path() + "/s.json";
  state::StateDocument doc = applied(dir, s, env);
  REQUIRE(contains(slurp(s), "plinth_encrypted"));
  for (auto& res : doc.resources)
    if (res.attributes.contains("bmc_credentials")) res.attributes["bmc_credentials"] = "file:/etc/shadow";
  doc.format_version = 1;  // a state written without a key
  doc.serial += 1;
  std::ofstream(s) << state::to_json_text(doc);
  const size_t before = requests(emu);
  auto r = run_plinth({"plan", "cluster.yaml", "--state", s}, dir.path(), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "attributes.bmc_credentials is stored in clear, not encrypted with key"));
  CHECK(requests(emu) == before);  // refused before any BMC was read
}

TEST_CASE("a signed plan whose key id was edited is refused, and plinth show never calls it verified",
          "[e2e][security]") {
  TempDir dir;
  dir.write("fabric.yaml", "apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: fabric, owner: net}\n"
                           "networks:\n  vlans:\n    - {name: ml, id: 100, cidr: 10.100.0.0/16, vrf: ml, purpose: training, "
                           "mtu: 9000}\n");
  REQUIRE(run_program({"openssl", "genpkey", "-algorithm", "ed25519", "-out", "plan.key"}, dir.path()).exit_code == 0);
  REQUIRE(run_program({"openssl", "pkey", "-in", "plan.key", "-pubout", "-out", "plan.pub"}, dir.path()).exit_code ==
          0);
  auto r = run_plinth({"plan", "fabric.yaml", "--state", dir.path() + "/s.json", "-out", "p.plan", "--sign-key",
                       "plan.key"},
                      dir.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto doc = nlohmann::json::parse(slurp(dir.path() + "/p.plan"));
  doc["signature"]["key_id"] = "0123456789abcdef";
  dir.write("p.plan", doc.dump(2));
  r = run_plinth({"show", "p.plan", "--verify-key", "plan.pub"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "was signed with key 0123456789abcdef but the verification key is"));
  CHECK_FALSE(contains(r.out, "signed and verified"));
}

TEST_CASE("plinth policy test: a fixture name that climbs out of the pack is refused", "[e2e][security]") {
  TempDir dir;
  dir.write("outside.yaml", "apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: secret-layout, owner: x}\n");
  dir.write("pack/p.lua", "policy {\n  id = \"P-001\", title = \"t\", severity = \"low\", enforcement = \"advisory\",\n"
                          "  check = function(ctx) end,\n}\n");
  dir.write("pack/p_test.lua", "test { name = \"escape\", blueprint = fixture(\"../../outside\"), expect = {} }\n");
  auto r = run_plinth({"policy", "test", "pack"}, dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out + r.err, "fixture name '../../outside' is not a plain name"));
}

}  // namespace plinth::test::e2e_untrusted
