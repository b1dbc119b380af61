// The Terraform habits users reach for (issue 9): -target, plan -destroy,
// show PLANFILE, state rm / mv, import, validate --json, and per-environment
// values as merged blueprint directories; each through the built CLI from a
// directory outside the source tree.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_terraform_habits {

namespace {

/// Logical resources only (apply needs no provider): a stack, tiers t0..t2
/// and a backup from t0 to t1, which depends on both.
const std::string kLogical = logical_blueprint(
    3, "  backups:\n    - {name: nightly, source: t0, target: t1, schedule: \"0 2 * * *\", retention_days: 30}\n");

std::string state_list(const TempDir& dir) { return run_plinth({"state", "list"}, dir.path()).out; }

/// A pool of `count` L40S nodes named `pool` on the emulator's BMCs.
std::string emulated_l40s_pool(const Emulator& emu, const std::string& pool, int count) {
  return l40s_blueprint(pool, std::to_string(count), bmc_block(bmc_endpoints(emu.base()), emu.ca()));
}

/// redfish-emulator flags for `bmcs` servers with 4 L40S each.
std::vector<std::string> l40s_emulator_args(int bmcs) {
  return {"--bmcs", std::to_string(bmcs), "--gpus", "4", "--gpu-model", "NVIDIA L40S", "--power-delay-ms", "20",
          "--power-state", "Off"};
}

}  // namespace

TEST_CASE("targeting: plan and apply -target take one resource and what it depends on, with a warning", "[e2e][habits][target]") {
  TempDir dir;
  dir.write("bp.yaml", kLogical);
  auto plan = run_plinth({"plan", "bp.yaml", "-target", "storage.backup.nightly"}, dir.path());
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(contains(plan.out, "Plan: 3 to create, 0 to update, 0 to replace, 0 to destroy."));
  CHECK(contains(plan.out, "+ storage.tier.t0 (create)"));
  CHECK_FALSE(contains(plan.out, "storage.tier.t2"));
  CHECK(contains(plan.err, "warning: resource targeting is in effect: this plan holds only the changes of "
                           "storage.backup.nightly and what they need (storage.tier.t0, storage.tier.t1); 2 other "
                           "change(s) the blueprint needs are left out.\n"));

  auto apply = run_plinth({"apply", "bp.yaml", "--auto-approve", "-target", "storage.backup.nightly"}, dir.path());
  CHECK(apply.exit_code == 0);
  CHECK(contains(apply.out, "Apply complete: 3 succeeded, 0 failed, 0 skipped."));
  CHECK(state_list(dir) == "storage.backup.nightly\nstorage.tier.t0\nstorage.tier.t1\n");
  auto rest = run_plinth({"plan", "bp.yaml"}, dir.path());
  CHECK(contains(rest.out, "Plan: 2 to create, 0 to update, 0 to replace, 0 to destroy."));

  // Destroying a tier takes what depends on it (the backup) with it.
  auto destroy = run_plinth({"destroy", "bp.yaml", "--auto-approve", "-target", "storage.tier.t0"}, dir.path());
  INFO(destroy.err);
  CHECK(destroy.exit_code == 0);
  CHECK(contains(destroy.out, "Destroy complete: 2 succeeded"));
  CHECK(state_list(dir) == "storage.tier.t1\n");

  auto typo = run_plinth({"plan", "bp.yaml", "-target", "storage.tier.t9"}, dir.path());
  CHECK(typo.exit_code == 1);
  CHECK(contains(typo.err, "plinth plan: -target storage.tier.t9 names no resource of the blueprint or the state; "
                           "did you mean 'storage.tier.t0'?\n"));
}

TEST_CASE("plan -destroy saves a destroy plan that apply carries out", "[e2e][habits][destroy]") {
  TempDir dir;
  dir.write("bp.yaml", kLogical);
  REQUIRE(run_plinth({"apply", "bp.yaml", "--auto-approve"}, dir.path()).exit_code == 0);
  auto plan = run_plinth({"plan", "bp.yaml", "-destroy", "-out", "destroy.plan", "--detailed-exitcode"}, dir.path());
  INFO(plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "Plan: 0 to create, 0 to update, 0 to replace, 5 to destroy."));
  auto apply = run_plinth({"apply", "destroy.plan"}, dir.path());
  INFO(apply.err);
  CHECK(apply.exit_code == 0);
  CHECK(contains(apply.out, "Apply complete: 5 succeeded"));
  // Tiers, backups and stacks live only in the blueprint and the state: nothing was destroyed.
  CHECK(contains(apply.out, "storage.tier.t0: removed from state ("));
  CHECK_FALSE(contains(apply.out, "destroyed"));
  CHECK(state_list(dir) == "");
}

TEST_CASE("plinth show PLANFILE prints a saved plan, as text and JSON", "[e2e][habits][show]") {
  TempDir dir;
  dir.write("bp.yaml", kLogical);
  REQUIRE(run_program({"openssl", "genpkey", "-algorithm", "ed25519", "-out", "plan.key"}, dir.path()).exit_code == 0);
  REQUIRE(run_program({"openssl", "pkey", "-in", "plan.key", "-pubout", "-out", "plan.pub"}, dir.path()).exit_code == 0);
  auto plan = run_plinth({"plan", "bp.yaml", "-out", "release.plan", "--sign-key", "plan.key"}, dir.path());
  REQUIRE(plan.exit_code == 0);

  auto show = run_plinth({"show", "release.plan"}, dir.path());
  INFO(show.err);
  REQUIRE(show.exit_code == 0);
  CHECK(show.out.rfind("Saved plan release.plan, made ", 0) == 0);
  CHECK(contains(show.out, "(signed, not verified (pass --verify-key), ed25519 key "));
  CHECK(contains(show.out, "  blueprint bp.yaml (sha256 "));
  CHECK(contains(show.out, "  apply it with: plinth apply release.plan\n"));
  // The plan itself, exactly as plan printed it.
  CHECK(contains(show.out, plan.out));

  auto verified = run_plinth({"show", "release.plan", "--verify-key", "plan.pub"}, dir.path());
  CHECK(contains(verified.out, "(signed and verified, ed25519 key "));

  auto json = run_plinth({"show", "release.plan", "--json"}, dir.path());
  auto j = nlohmann::json::parse(json.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["format_version"] == "1.2");
  CHECK(j["summary"]["create"] == 5);
  CHECK(j["plan_file"]["blueprints"].contains("bp.yaml"));
  CHECK(j["resource_changes"].size() == 5);

  dir.write("other.key", "0123456789abcdef0123456789abcdef0123456789abcdef\n");
  auto wrong = run_plinth({"show", "release.plan", "--verify-key", "other.key"}, dir.path());
  CHECK(wrong.exit_code == 1);
  auto missing = run_plinth({"show"}, dir.path());
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "name a saved plan: plinth show PLANFILE"));
}

TEST_CASE("state rm forgets resources and keeps the old serial restorable", "[e2e][habits][state]") {
  TempDir dir;
  dir.write("bp.yaml", kLogical);
  // One operation at a time: one save each (serial 5 after 5 creates).
  REQUIRE(run_plinth({"apply", "bp.yaml", "--auto-approve", "--parallelism", "1"}, dir.path()).exit_code == 0);

  auto dry = run_plinth({"state", "rm", "storage.tier.t2", "--dry-run"}, dir.path());
  CHECK(dry.exit_code == 0);
  CHECK(contains(dry.out, "would be removed storage.tier.t2 from state"));
  CHECK(contains(state_list(dir), "storage.tier.t2\n"));

  auto rm = run_plinth({"state", "rm", "storage.tier.t2", "plinth.stack.train"}, dir.path());
  INFO(rm.err);
  CHECK(rm.exit_code == 0);
  CHECK(contains(rm.out, "removed plinth.stack.train from state (it still exists; Plinth no longer manages it)\n"));
  CHECK(contains(rm.out, "Saved state plinth.state.json as serial 6. No infrastructure was changed; serial 5 stays "
                         "restorable (plinth state restore 5).\n"));
  CHECK(state_list(dir) == "storage.backup.nightly\nstorage.tier.t0\nstorage.tier.t1\n");
  auto plan = run_plinth({"plan", "bp.yaml"}, dir.path());
  CHECK(contains(plan.out, "Plan: 2 to create, 0 to update, 0 to replace, 0 to destroy."));

  auto typo = run_plinth({"state", "rm", "storage.tier.t8"}, dir.path());
  CHECK(typo.exit_code == 1);
  CHECK(contains(typo.err, "no resource 'storage.tier.t8' in state plinth.state.json; did you mean 'storage.tier.t0'?; "
                           "nothing was removed"));
  REQUIRE(run_plinth({"state", "restore", "5"}, dir.path()).exit_code == 0);
  CHECK(contains(state_list(dir), "storage.tier.t2\n"));
}

TEST_CASE("state mv records a resource under its new address instead of deleting and creating it",
          "[e2e][habits][state]") {
  TempDir dir;
  dir.write("bp.yaml", kLogical);
  REQUIRE(run_plinth({"apply", "bp.yaml", "--auto-approve"}, dir.path()).exit_code == 0);
  // Tier t2 is renamed to scratch in the blueprint: the same storage, a new name.
  std::string renamed = kLogical;
  renamed.replace(renamed.find("{name: t2,"), 10, "{name: scratch,");
  dir.write("bp.yaml", renamed);
  auto naive = run_plinth({"plan", "bp.yaml"}, dir.path());
  CHECK(contains(naive.out, "Plan: 1 to create, 0 to update, 0 to replace, 1 to destroy."));

  auto dry = run_plinth({"state", "mv", "storage.tier.t2", "storage.tier.scratch", "--dry-run"}, dir.path());
  CHECK(contains(dry.out, "would be moved storage.tier.t2 to storage.tier.scratch\n"));
  auto mv = run_plinth({"state", "mv", "storage.tier.t2", "storage.tier.scratch"}, dir.path());
  INFO(mv.err);
  CHECK(mv.exit_code == 0);
  CHECK(contains(mv.out, "moved storage.tier.t2 to storage.tier.scratch\n"));
  auto plan = run_plinth({"plan", "bp.yaml", "--detailed-exitcode"}, dir.path());
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "No changes."));

  auto clash = run_plinth({"state", "mv", "storage.tier.t0", "storage.tier.t1"}, dir.path());
  CHECK(clash.exit_code == 1);
  CHECK(contains(clash.err, "cannot move storage.tier.t0 to storage.tier.t1: the state already has storage.tier.t1"));
  auto type = run_plinth({"state", "mv", "plinth.stack.train", "aws.instance.x[0]"}, dir.path());
  CHECK(type.exit_code == 1);
  CHECK(contains(type.err, "a resource keeps its type"));
  auto typo = run_plinth({"state", "mv", "storage.tier.t9", "storage.tier.x"}, dir.path());
  CHECK(contains(typo.err, "did you mean"));
}

TEST_CASE("state mv moves every node of a renamed pool: one replace each, in place", "[e2e][habits][state]") {
  Emulator emu(l40s_emulator_args(2));
  TempDir dir;
  dir.write("bp.yaml", emulated_l40s_pool(emu, "gpu", 2));
  auto apply = run_plinth({"apply", "bp.yaml", "--auto-approve"}, dir.path(), kBmcEnv);
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  dir.write("bp.yaml", emulated_l40s_pool(emu, "inference", 2));
  auto naive = run_plinth({"plan", "bp.yaml"}, dir.path(), kBmcEnv);
  CHECK(contains(naive.out, "Plan: 2 to create, 0 to update, 0 to replace, 2 to destroy."));

  auto mv = run_plinth({"state", "mv", "baremetal.node.gpu", "baremetal.node.inference"}, dir.path());
  INFO(mv.err);
  CHECK(mv.exit_code == 0);
  CHECK(contains(mv.out, "moved baremetal.node.gpu[0] to baremetal.node.inference[0]\n"));
  CHECK(contains(mv.out, "moved baremetal.node.gpu[1] to baremetal.node.inference[1]\n"));
  // The pool's cloud-init names the pool, so its nodes are re-provisioned, but
  // each in place (remove, then create, on the same address) rather than
  // deleted under one address while being created under another.
  auto plan = run_plinth({"plan", "bp.yaml"}, dir.path(), kBmcEnv);
  INFO(plan.err);
  CHECK(contains(plan.out, "Plan: 0 to create, 0 to update, 2 to replace, 0 to destroy."));
  CHECK(contains(plan.out, "-/+ baremetal.node.inference[0, 1]  2 to replace, forced by: user_data_hash\n"));
}

TEST_CASE("import adopts an existing server after reading it through its provider", "[e2e][habits][import]") {
  Emulator emu(l40s_emulator_args(2));
  TempDir dir;
  dir.write("bp.yaml", emulated_l40s_pool(emu, "gpu", 2));

  auto r = run_plinth({"import", "baremetal.node.gpu[1]", emu.bmc(1), "bp.yaml"}, dir.path(), kBmcEnv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "Imported baremetal.node.gpu[1] (bmc_endpoint " + emu.bmc(1) +
                            ") into state plinth.state.json as serial 1.\n"));
  CHECK(changing_requests(emu.log_path()) == 0);  // reading only: no PATCH, no Reset
  CHECK(state_list(dir) == "baremetal.node.gpu[1]\n");
  auto doc = state::parse(slurp(dir.path() + "/plinth.state.json"), "state");
  REQUIRE(doc.ok());
  CHECK(doc->find("baremetal.node.gpu[1]")->computed.contains("serial_number"));

  // The next plan creates only what is not there yet; the imported server
  // is Off, and a node of the blueprint runs, so it is powered on in place.
  auto plan = run_plinth({"plan", "bp.yaml"}, dir.path(), kBmcEnv);
  INFO(plan.out << plan.err);
  CHECK(contains(plan.out, "Plan: 2 to create, 1 to update, 0 to replace, 0 to destroy."));
  CHECK(contains(plan.out, "~ baremetal.node.gpu[1] (update in place)\n      power: \"Off\" -> \"On\"\n"));
  CHECK_FALSE(contains(plan.out, "baremetal.node.gpu[1] (create)"));

  auto again = run_plinth({"import", "baremetal.node.gpu[1]", emu.bmc(1), "bp.yaml"}, dir.path(), kBmcEnv);
  CHECK(again.exit_code == 1);
  CHECK(contains(again.err, "baremetal.node.gpu[1] is already in state plinth.state.json"));
  // Another node's BMC: the blueprint says gpu[0] is BMC 0.
  auto other = run_plinth({"import", "baremetal.node.gpu[0]", emu.bmc(1), "bp.yaml"}, dir.path(), kBmcEnv);
  CHECK(other.exit_code == 1);
  CHECK(contains(other.err, "baremetal.node.gpu[0] is declared with bmc_endpoint " + emu.bmc(0) + " (bp.yaml:"));
  CHECK(contains(other.err, "not " + emu.bmc(1) + "; import the object the blueprint names"));
  CHECK(state_list(dir) == "baremetal.node.gpu[1]\n");
  auto unknown = run_plinth({"import", "baremetal.node.gpu[7]", emu.bmc(1), "bp.yaml"}, dir.path(), kBmcEnv);
  CHECK(unknown.exit_code == 1);
  CHECK(contains(unknown.err, "the blueprint declares no 'baremetal.node.gpu[7]'"));
  auto plain = run_plinth({"import", "baremetal.node.gpu[0]", "http://127.0.0.1:9", "bp.yaml"}, dir.path(), kBmcEnv);
  CHECK(plain.exit_code == 1);
  CHECK(contains(plain.err, "uses plain http"));
  auto gone = run_plinth({"import", "baremetal.node.gpu[0]", "https://127.0.0.1:9", "bp.yaml", "--force"}, dir.path(),
                         kBmcEnv);
  CHECK(gone.exit_code == 1);
  CHECK(contains(gone.err, "plinth import: cannot read baremetal.node.gpu[0] (bmc_endpoint https://127.0.0.1:9): "));
  CHECK(contains(gone.err, "; nothing was imported\n"));
  CHECK(state_list(dir) == "baremetal.node.gpu[1]\n");
  auto logical = run_plinth({"import", "plinth.stack.train", "x", "bp.yaml"}, dir.path());
  CHECK(contains(logical.err, "plinth.stack.train (plinth.stack, provider plinth) cannot be imported: its provider declares no identity"));
}

TEST_CASE("import refuses a server the state already records under another address, unless --force",
          "[e2e][habits][import]") {
  // BMC 2 reaches the server BMC 0 does (same serial and UUID): one machine, two BMC addresses.
  auto args = l40s_emulator_args(3);
  args.insert(args.end(), {"--override", "2:serial=437XR1138R2", "--override",
                           "2:uuid=38947555-7742-3448-3784-823347823834"});
  Emulator emu(args);
  TempDir dir;
  dir.write("bp.yaml", emulated_l40s_pool(emu, "gpu", 3));
  REQUIRE(run_plinth({"import", "baremetal.node.gpu[0]", emu.bmc(0), "bp.yaml"}, dir.path(), kBmcEnv).exit_code == 0);
  // BMC 1's server is another one: imported.
  REQUIRE(run_plinth({"import", "baremetal.node.gpu[1]", emu.bmc(1), "bp.yaml"}, dir.path(), kBmcEnv).exit_code == 0);
  auto twice = run_plinth({"import", "baremetal.node.gpu[2]", emu.bmc(2), "bp.yaml"}, dir.path(), kBmcEnv);
  INFO(twice.out << twice.err);
  CHECK(twice.exit_code == 1);
  CHECK(contains(twice.err, "the object at bmc_endpoint " + emu.bmc(2) +
                                " has uuid 38947555-7742-3448-3784-823347823834, which state plinth.state.json records "
                                "as baremetal.node.gpu[0]; one object cannot be two resources"));
  CHECK(contains(twice.err, "plinth state rm 'baremetal.node.gpu[0]'"));
  CHECK(state_list(dir) == "baremetal.node.gpu[0]\nbaremetal.node.gpu[1]\n");
  auto forced = run_plinth({"import", "baremetal.node.gpu[2]", emu.bmc(2), "bp.yaml", "--force"}, dir.path(), kBmcEnv);
  CHECK(forced.exit_code == 0);
  CHECK(state_list(dir) == "baremetal.node.gpu[0]\nbaremetal.node.gpu[1]\nbaremetal.node.gpu[2]\n");
}

TEST_CASE("validate --json reports every diagnostic as one document, valid or not", "[e2e][habits][validate]") {
  TempDir dir;
  dir.write("ok.yaml", kLogical);
  auto ok = run_plinth({"validate", "ok.yaml", "--json"}, dir.path());
  CHECK(ok.exit_code == 0);
  CHECK(ok.err == "");
  auto j = nlohmann::json::parse(ok.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["format_version"] == "1.0");
  CHECK(j["valid"] == true);
  CHECK(j["blueprint"]["name"] == "logical");
  CHECK(j["blueprint"]["files"][0]["path"] == "ok.yaml");
  CHECK(j["summary"]["errors"] == 0);

  std::string bad = kLogical;
  bad.replace(bad.find("cuda: \"12.4\""), 12, "cuda_version: \"12.4\"");
  dir.write("bad.yaml", bad);
  auto r = run_plinth({"validate", "bad.yaml", "--json"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.err == "");
  j = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["valid"] == false);
  CHECK(j["summary"]["errors"] == 1);  // not also "missing 'cuda'": the unknown key was meant to be it
  const auto& d = j["diagnostics"][0];
  CHECK(d["code"] == "BP002");
  CHECK(d["message"] == "unknown key 'cuda_version' in stack 'train'");
  CHECK(d["hint"] == "did you mean 'cuda'?");
  CHECK(d["location"] == nlohmann::json({{"file", "bad.yaml"}, {"line", 5}, {"column", 32}}));
}

/// The regulated example with a wildcard role and a PHI lake without
/// encryption: it loads and passes the domain rules, and the policy
/// gate blocks it.
std::string regulated_with_policy_failures() {
  std::string text = slurp(source_dir() + "/blueprints/examples/regulated.yaml");
  const std::string verbs = "verbs: [get, list, create], resources: [jobs, pods/log]}";
  REQUIRE(text.find(verbs) != std::string::npos);
  text.replace(text.find(verbs), verbs.size(), "verbs: [\"*\"], resources: [jobs, pods/log]}");
  const std::string enc =
      "      encryption: {at_rest: aes-256-xts, in_transit: tls1.3, kms_key: \"vault:transit/clinical-lake\"}\n";
  REQUIRE(text.find(enc) != std::string::npos);
  text.erase(text.find(enc), enc.size());
  return text;
}

TEST_CASE("validate runs the policy gate: what plan would block is invalid, --no-policies checks the rules only",
          "[e2e][habits][validate]") {
  TempDir dir;
  dir.write("bp.yaml", regulated_with_policy_failures());
  auto r = run_plinth({"validate", "bp.yaml"}, dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out == "");
  CHECK(contains(r.err, "clinical-ml is invalid: the policy gate above blocks it (plinth plan would stop here); "
                        "--no-policies checks the schema and the domain rules only.\n"));
  CHECK(contains(r.err, "5 mandatory failure(s)"));

  auto j = nlohmann::json::parse(run_plinth({"validate", "bp.yaml", "--json"}, dir.path()).out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["valid"] == false);
  CHECK(j["policies"]["mandatory_failures"] == 5);
  CHECK(j["policies"]["blocked"] == true);
  std::set<std::string> failed;
  for (const auto& d : j["diagnostics"])
    if (d["severity"] == "error") failed.insert(d["code"].get<std::string>());
  CHECK(failed == std::set<std::string>{"GDPR-SEC-001", "HIPAA-ENC-001", "HIPAA-TLS-001", "SOC2-ENC-001",
                                        "SOC2-RBAC-001"});
  CHECK(contains(r.err, "network tier 'phi-lake' holds PHI but sets no encryption in transit"));
  for (const auto& id : failed) CHECK(contains(r.err, "error[" + id + "]"));

  // The same blueprint, without the packs: today's answer.
  auto rules = run_plinth({"validate", "bp.yaml", "--no-policies"}, dir.path());
  CHECK(rules.exit_code == 0);
  CHECK(rules.out == "clinical-ml is valid: 1 node pool(s), 3 burst pool(s), 0 warning(s).\n");
  CHECK(rules.err == "");
  auto rules_json = nlohmann::json::parse(run_plinth({"validate", "bp.yaml", "--json", "--no-policies"}, dir.path()).out);
  CHECK(rules_json["valid"] == true);
  CHECK(rules_json["policies"].is_null());
}

TEST_CASE("validate reports the loader's errors and the domain rules' of the other entities in one run",
          "[e2e][habits][validate]") {
  TempDir dir;
  dir.write("bp.yaml", blueprint_header("one-run") + train_stack_flow() +
                           "node_pools:\n"
                           "  - name: a\n"
                           "    count: 2\n"
                           "    hardware: {gpu: H100-80G, gpus_per_node: 8}\n"
                           "    stack: train\n"
                           "    bmc: {endpoints: \"https://10.0.0.{index}\", credentials: env:BMC}\n"
                           "  - name: b\n"
                           "    count: 2\n"
                           "    hardware: {gpu: H100-80GB, gpus_per_nod: 8}\n"
                           "    stack: train\n"
                           "    bmc: {endpoints: \"https://10.0.1.{index}\", credentials: env:BMC}\n");
  auto r = run_plinth({"validate", "bp.yaml"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "bp.yaml:9:21: error[GPU001]: unknown GPU model 'H100-80G' in node pool 'a'"));
  CHECK(contains(r.err, "bp.yaml:14:32: error[BP002]: unknown key 'hardware.gpus_per_nod' in node pool 'b'"));
  CHECK(contains(r.err, "2 error(s); fix them and run again.\n"));  // nothing about pool b's missing GPU count

  // A YAML syntax error leaves nothing to judge: only it is reported.
  dir.write("bp.yaml", blueprint_header("one-run") + train_stack_flow() +
                           "node_pools:\n  - name: a\n    hardware: {gpu: H100-80G, gpus_per_node: 8\n");
  auto syntax = run_plinth({"validate", "bp.yaml"}, dir.path());
  CHECK(syntax.exit_code == 1);
  CHECK(contains(syntax.err, "error[BP001]"));
  CHECK_FALSE(contains(syntax.err, "GPU001"));
}

TEST_CASE("plan and apply -replace reprovision one node the plan would keep, and refuses a pool, a typo and a create",
          "[e2e][habits][replace]") {
  Emulator emu(l40s_emulator_args(2));
  TempDir dir;
  dir.write("bp.yaml", emulated_l40s_pool(emu, "gpu", 2));
  auto first = run_plinth({"apply", "bp.yaml", "--auto-approve"}, dir.path(), kBmcEnv);
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(resets(emu.log_path()).at(1) == 1);

  auto plan = run_plinth({"plan", "bp.yaml", "-replace", "baremetal.node.gpu[1]", "--detailed-exitcode"}, dir.path(),
                         kBmcEnv);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "-/+ baremetal.node.gpu[1] (replace, as requested with -replace)\n"));
  CHECK(contains(plan.out, "Plan: 0 to create, 0 to update, 1 to replace, 0 to destroy."));
  auto json = nlohmann::json::parse(
      run_plinth({"plan", "bp.yaml", "-replace=baremetal.node.gpu[1]", "--json"}, dir.path(), kBmcEnv).out, nullptr,
      false);
  REQUIRE_FALSE(json.is_discarded());
  bool requested = false;
  for (const auto& c : json["resource_changes"])
    if (c["address"] == "baremetal.node.gpu[1]")
      requested = c["action"] == "replace" && c.value("replace_requested", false);
  CHECK(requested);

  auto pool = run_plinth({"plan", "bp.yaml", "-replace", "baremetal.node.gpu"}, dir.path(), kBmcEnv);
  CHECK(pool.exit_code == 1);
  CHECK(contains(pool.err, "-replace baremetal.node.gpu names a whole pool; replace nodes one address at a time"));
  auto typo = run_plinth({"plan", "bp.yaml", "-replace", "baremetal.node.gpu[7]"}, dir.path(), kBmcEnv);
  CHECK(typo.exit_code == 1);
  CHECK(contains(typo.err, "-replace baremetal.node.gpu[7] names no resource of the blueprint or the state; did you "
                           "mean 'baremetal.node.gpu["));
  auto with_destroy = run_plinth({"plan", "bp.yaml", "-destroy", "-replace", "baremetal.node.gpu[1]"}, dir.path(), kBmcEnv);
  CHECK(with_destroy.exit_code == 1);
  CHECK(contains(with_destroy.err, "-replace and -destroy exclude each other"));

  // The apply replaces that node only: its server is reset again, the other is not.
  auto apply = run_plinth({"apply", "bp.yaml", "--auto-approve", "-replace", "baremetal.node.gpu[1]"}, dir.path(), kBmcEnv);
  INFO(apply.out << apply.err);
  CHECK(apply.exit_code == 0);
  CHECK(contains(apply.out, "Apply complete: 1 succeeded, 0 failed, 0 skipped."));
  auto rs = resets(emu.log_path());
  CHECK(rs.at(0) == 1);
  CHECK(rs.at(1) >= 2);
  auto after = run_plinth({"plan", "bp.yaml", "--detailed-exitcode"}, dir.path(), kBmcEnv);
  CHECK(after.exit_code == 0);
}

TEST_CASE("plan -refresh-only shows drift without recording it, apply -refresh-only records it, nothing else",
          "[e2e][habits][refresh-only]") {
  Emulator emu(l40s_emulator_args(2));
  TempDir dir;
  dir.write("bp.yaml", emulated_l40s_pool(emu, "gpu", 2));
  REQUIRE(run_plinth({"apply", "bp.yaml", "--auto-approve"}, dir.path(), kBmcEnv).exit_code == 0);
  const std::string st = dir.path() + "/plinth.state.json";

  // Someone switches server 0 off outside Plinth.
  auto off = run_program({"curl", "-sS", "--fail", "--cacert", emu.ca(), "-u", "admin:admin", "-X", "POST", "-H",
                          "Content-Type: application/json", "-d", R"({"ResetType": "ForceOff"})",
                          emu.bmc(0) + "/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset"});
  REQUIRE(off.exit_code == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string before = slurp(st);

  auto plan = run_plinth({"plan", "bp.yaml", "-refresh-only", "--detailed-exitcode"}, dir.path(), kBmcEnv);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "  ~ baremetal.node.gpu[0]\n      power: \"On\" -> \"Off\"\n"));
  CHECK(contains(plan.out, "This is a refresh-only plan: plinth apply -refresh-only would record the drift above in "
                           "plinth.state.json (1 resource(s) changed or gone, 0 adopted) and change no resource.\n"));
  CHECK(slurp(st) == before);  // nothing recorded
  const size_t changing = changing_requests(emu.log_path());

  auto no_tty = run_plinth({"apply", "bp.yaml", "-refresh-only"}, dir.path(), kBmcEnv);
  CHECK(no_tty.exit_code == 1);
  CHECK(contains(no_tty.err, "stdin is not a terminal, so there is no one to confirm recording the drift"));
  auto mixed = run_plinth({"plan", "bp.yaml", "-refresh-only", "-target", "baremetal.node.gpu[0]"}, dir.path(), kBmcEnv);
  CHECK(mixed.exit_code == 1);
  CHECK(contains(mixed.err, "-target and -refresh-only exclude each other"));

  auto apply = run_plinth({"apply", "bp.yaml", "-refresh-only", "--auto-approve"}, dir.path(), kBmcEnv);
  INFO(apply.out << apply.err);
  CHECK(apply.exit_code == 0);
  CHECK(contains(apply.out, "State plinth.state.json updated to serial "));
  CHECK(changing_requests(emu.log_path()) == changing);  // no resource changed: no PATCH, no Reset
  auto doc = state::parse(slurp(st), "state");
  REQUIRE(doc.ok());
  CHECK(doc->find("baremetal.node.gpu[0]")->attributes["power"] == "Off");

  auto clean = run_plinth({"plan", "bp.yaml", "-refresh-only", "--detailed-exitcode"}, dir.path(), kBmcEnv);
  CHECK(clean.exit_code == 0);
  CHECK(contains(clean.out, "No drift: all "));
  // The ordinary plan now wants the server back on.
  auto full = run_plinth({"plan", "bp.yaml"}, dir.path(), kBmcEnv);
  CHECK(contains(full.out, "~ baremetal.node.gpu[0] (update in place)\n      power: \"Off\" -> \"On\"\n"));
}

TEST_CASE("fmt --check lists what is not canonical, fmt rewrites it keeping comments, the examples are canonical",
          "[e2e][habits][fmt]") {
  TempDir dir;
  dir.write("bp/pools.yaml", "# pools of the lab\nnode_pools:  \n  - {name: a, count: 2, stack: train,\n"
                             "     hardware: {gpu: L40S, gpus_per_node: 4}}   # L40S boxes\n\n\n"
                             "apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: fmt}\n"
                             "stacks:\n  train: {driver: \"550.54.15\", cuda: \"12.4\"}\n");
  const std::string before = slurp(dir.path() + "/bp/pools.yaml");
  auto check = run_plinth({"fmt", "--check", "bp"}, dir.path());
  CHECK(check.exit_code == 1);
  CHECK(check.out == "bp/pools.yaml\n");
  CHECK(contains(check.err, "plinth fmt: 1 file(s) above are not in the canonical layout; run plinth fmt bp\n"));
  CHECK(slurp(dir.path() + "/bp/pools.yaml") == before);  // --check writes nothing

  auto fmt = run_plinth({"fmt", "bp"}, dir.path());
  INFO(fmt.err);
  CHECK(fmt.exit_code == 0);
  CHECK(fmt.out == "bp/pools.yaml\n");
  const std::string after = slurp(dir.path() + "/bp/pools.yaml");
  CHECK(after.rfind("apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: fmt}\n\nstacks:", 0) == 0);
  CHECK(contains(after, "\n\n# pools of the lab\nnode_pools:\n  - {name: a, count: 2, stack: train,\n"
                        "     hardware: {gpu: L40S, gpus_per_node: 4}}   # L40S boxes\n"));
  CHECK(run_plinth({"fmt", "--check", "bp"}, dir.path()).exit_code == 0);
  CHECK(run_plinth({"validate", "bp", "--no-policies"}, dir.path()).exit_code == 0);

  dir.write("tab.yaml", "apiVersion: plinth/v1\nstacks:\n\ttrain: {}\n");
  auto tab = run_plinth({"fmt", "tab.yaml"}, dir.path());
  CHECK(tab.exit_code == 1);
  CHECK(contains(tab.err, "plinth fmt: tab.yaml:3:1: a tab in indentation"));

  auto examples = run_plinth({"fmt", "--check", source_dir() + "/blueprints/examples"}, dir.path());
  INFO(examples.out << examples.err);
  CHECK(examples.exit_code == 0);
}

/// The outputs of docs/blueprint.md's example, on a pool `gpu` of `count` nodes.
std::string with_outputs(const Emulator& emu, int count) {
  return emulated_l40s_pool(emu, "gpu", count) + R"(
outputs:
  bmcs:
    description: The BMC of every node, for Ansible's Redfish modules
    attribute: bmc_endpoint
  slurm:
    pools: [gpu]
    attributes: [gpu, gpus_per_node, memory_gib]
  serials:
    attribute: serial_number
    sensitive: true
)";
}

/// Runs `script` with bash, the plinth under test first on PATH (as a user's shell has it).
RunResult user_shell(const std::string& script, const std::string& cwd) {
  const std::string bin = plinth_binary();
  const std::string dir = bin.substr(0, bin.rfind('/'));
  return run_program({"bash", "-o", "pipefail", "-c", script}, cwd,
                     {{"PATH", dir + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin")}});
}

TEST_CASE("output prints what the blueprint's outputs gave at apply: as lines, as JSON, as an Ansible inventory and Slurm nodes",
          "[e2e][habits][output]") {
  Emulator emu(l40s_emulator_args(3));
  TempDir dir;
  dir.write("bp.yaml", with_outputs(emu, 2));

  auto none = run_plinth({"output"}, dir.path());
  CHECK(none.exit_code == 1);
  CHECK(contains(none.err, "plinth output: no state at plinth.state.json yet, so no outputs"));

  auto apply = run_plinth({"apply", "bp.yaml", "--auto-approve"}, dir.path(), kBmcEnv);
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  CHECK(contains(apply.out + apply.err, "Outputs recorded: 3 (plinth output lists them)."));

  auto lines = run_plinth({"output", "bmcs"}, dir.path());
  CHECK(lines.exit_code == 0);
  CHECK(lines.out == "gpu-0 " + emu.bmc(0) + "\ngpu-1 " + emu.bmc(1) + "\n");

  auto all = run_plinth({"output", "--json"}, dir.path());
  REQUIRE(all.exit_code == 0);
  auto j = nlohmann::json::parse(all.out);
  CHECK(j["bmcs"]["description"] == "The BMC of every node, for Ansible's Redfish modules");
  CHECK(j["bmcs"]["sensitive"] == false);
  CHECK(j["bmcs"]["value"] == nlohmann::json({{"gpu", {{"gpu-0", emu.bmc(0)}, {"gpu-1", emu.bmc(1)}}}}));
  const auto& node = j["slurm"]["value"]["gpu"]["gpu-1"];
  CHECK(node["gpu"] == "L40S");
  CHECK(node["gpus_per_node"] == 4);
  CHECK(node["memory_gib"].is_number());  // what the BMC reported
  CHECK(j["serials"]["sensitive"] == true);
  CHECK(j["serials"]["value"]["gpu"]["gpu-0"].is_string());

  auto listed = run_plinth({"output"}, dir.path());
  CHECK(contains(listed.out, "serials = (sensitive: plinth output serials)\n"));
  CHECK(contains(listed.out, "bmcs = {\n  \"gpu\": {\n    \"gpu-0\": \"" + emu.bmc(0) + "\",\n"));
  auto unknown = run_plinth({"output", "bmc"}, dir.path());
  CHECK(unknown.exit_code == 1);
  CHECK(contains(unknown.err, "no output 'bmc' in state plinth.state.json (it records bmcs, serials, slurm)"));

  // docs/blueprint.md's commands, as written there.
  auto documented = [](const std::string& prefix) {
    std::istringstream doc(slurp(source_dir() + "/docs/blueprint.md"));
    for (std::string line; std::getline(doc, line);)
      if (line.rfind(prefix, 0) == 0) return line;
    FAIL("docs/blueprint.md has no line starting with " << prefix);
    return std::string();
  };
  auto inventory = user_shell(documented("plinth output bmcs --json | jq"), dir.path());
  INFO(inventory.err);
  REQUIRE(inventory.exit_code == 0);
  auto inv = nlohmann::json::parse(slurp(dir.path() + "/bmc-inventory.json"));
  const std::string host0 = emu.bmc(0).substr(8);
  CHECK(inv["all"]["children"]["gpu"]["hosts"]["gpu-0"]["baseuri"] == host0);
  auto slurm = user_shell(documented("plinth output slurm --json | jq"), dir.path());
  INFO(slurm.err);
  REQUIRE(slurm.exit_code == 0);
  CHECK(contains(slurm.out, "NodeName=gpu-0 Gres=gpu:4 RealMemory="));
  CHECK(contains(slurm.out, "\nNodeName=gpu-1 Gres=gpu:4 RealMemory="));

  // One more node: its values join at the apply that creates it.
  dir.write("bp.yaml", with_outputs(emu, 3));
  REQUIRE(run_plinth({"apply", "bp.yaml", "--auto-approve"}, dir.path(), kBmcEnv).exit_code == 0);
  CHECK(run_plinth({"output", "bmcs"}, dir.path()).out ==
        "gpu-0 " + emu.bmc(0) + "\ngpu-1 " + emu.bmc(1) + "\ngpu-2 " + emu.bmc(2) + "\n");
  // An output declared later is recorded by the next apply, with nothing else to change.
  dir.write("bp.yaml", with_outputs(emu, 3) + "  power:\n    attribute: power_state\n");
  auto recorded = run_plinth({"apply", "bp.yaml", "--auto-approve"}, dir.path(), kBmcEnv);
  INFO(recorded.out << recorded.err);
  CHECK(contains(recorded.out + recorded.err, "Outputs recorded: 4"));
  CHECK(run_plinth({"output", "power"}, dir.path()).out == "gpu-0 On\ngpu-1 On\ngpu-2 On\n");

  // Destroyed: no node is left, nor any output.
  REQUIRE(run_plinth({"destroy", "bp.yaml", "--auto-approve"}, dir.path(), kBmcEnv).exit_code == 0);
  CHECK(run_plinth({"output", "--json"}, dir.path()).out == "{}\n");
}

TEST_CASE("plan refuses a provider it cannot use (no credentials), with a hint, unless --refresh=false",
          "[e2e][habits][preflight]") {
  TempDir dir;
  dir.write("bp.yaml", burst_blueprint({aws_pool(2)}));
  const std::map<std::string, std::string> env = {
      {"HOME", dir.path()},           {"AWS_ACCESS_KEY_ID", ""},           {"AWS_SECRET_ACCESS_KEY", ""},
      {"AWS_PROFILE", ""},            {"AWS_EC2_METADATA_DISABLED", "true"}};
  auto r = run_plinth({"plan", "bp.yaml", "--detailed-exitcode", "-out", "release.plan"}, dir.path(), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "error[PLAN001]: provider aws cannot be used for the 2 resource(s) the plan changes "
                        "(aws.instance.gpu[0], ...): no AWS credentials: set AWS_ACCESS_KEY_ID"));
  CHECK(contains(r.err, "hint: give it its credentials (docs/providers/aws.md), or plan with --refresh=false to plan "
                        "without contacting the providers"));
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/release.plan"));
  auto offline = run_plinth({"plan", "bp.yaml", "--detailed-exitcode", "--refresh=false"}, dir.path(), env);
  INFO(offline.err);
  CHECK(offline.exit_code == 2);
  CHECK(contains(offline.out, "+ aws.instance.gpu[0, 1]  2 to create\n"));
}

TEST_CASE("per-environment values: shared files plus one directory per environment", "[e2e][habits][environments]") {
  TempDir dir;
  dir.write("common/base.yaml", R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: site, owner: platform}
stacks:
  train: {driver: "550.54.15", cuda: "12.4"}
)");
  auto env = [&](const std::string& name, int count, const std::string& domain) {
    dir.write("envs/" + name + "/pools.yaml",
              "apiVersion: plinth/v1\nkind: Blueprint\nnode_pools:\n"
              "  - name: gpu\n    count: " + std::to_string(count) +
              "\n    role: inference\n    hardware: {gpu: L40S, gpus_per_node: 4}\n    stack: train\n"
              "    bmc: {endpoints: \"https://bmc-{index}." + domain + "\", credentials: env:BMC}\n");
  };
  env("staging", 1, "staging.example");
  env("prod", 3, "dc1.example");
  auto prod = run_plinth({"plan", "common", "envs/prod", "--state", "prod.state.json", "--json", "--refresh=false"}, dir.path());
  auto staging = run_plinth({"plan", "common", "envs/staging", "--state", "staging.state.json", "--json", "--refresh=false"}, dir.path());
  INFO(prod.err << staging.err);
  REQUIRE(prod.exit_code == 0);
  REQUIRE(staging.exit_code == 0);
  auto p = nlohmann::json::parse(prod.out), s = nlohmann::json::parse(staging.out);
  CHECK(p["summary"]["create"] == 4);  // 3 nodes + the stack
  CHECK(s["summary"]["create"] == 2);
  CHECK(contains(prod.out, "https://bmc-2.dc1.example"));
  CHECK(contains(staging.out, "https://bmc-0.staging.example"));
}

}  // namespace plinth::test::e2e_terraform_habits
