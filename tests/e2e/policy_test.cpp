// plinth policy list|test, and the policy gate of plinth plan, driven as a user would.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_policy {

TEST_CASE("plinth policy test policies/ passes with a line per test and a summary") {
  auto r = run_plinth({"policy", "test", "policies"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(std::regex_search(r.out, std::regex("\n[0-9]+ passed, 0 failed\n$")));
  CHECK(contains(r.out, "PASS policies/soc2/encryption_test.lua:9: a tier without encryption and one with a weak cipher fail\n"));
  CHECK_FALSE(contains(r.out, "FAIL "));
}

TEST_CASE("plinth policy test reports a failing test and exits 1") {
  TempDir dir;
  dir.write("p/no_wildcards.lua", R"(policy {
  id = "X-001", title = "no wildcard verbs", severity = "low", enforcement = "advisory",
  check = function(ctx)
    for _, r in ipairs(ctx.blueprint.access.roles) do
      for _, v in ipairs(r.verbs) do if v == "*" then fail("access.role." .. r.name, "wildcard") end end
    end
  end,
}
)");
  dir.write("p/no_wildcards_test.lua", R"(local base = fixture("small")
test { name = "clean", blueprint = base, expect = {} }
test { name = "wrong expectation", blueprint = base, expect = { { "X-001", "access.role.ops" } } }
)");
  dir.write("p/fixtures/small.yaml", R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: small}
access:
  namespaces: [{name: team}]
  roles: [{name: ops, subjects: ["user:a"], namespaces: [team], verbs: [get], resources: [pods]}]
)");
  auto r = run_plinth({"policy", "test", dir.path() + "/p"});
  CHECK(r.exit_code == 1);
  std::string f = dir.path() + "/p/no_wildcards_test.lua";
  CHECK(r.out == "PASS " + f + ":2: clean\n" + "FAIL " + f + ":3: wrong expectation:\n" +
                     "  \n  expected failures that did not happen:\n    X-001 access.role.ops\n" +
                     "1 passed, 1 failed\n");
}

TEST_CASE("plinth policy list shows severity, enforcement, controls and file, --markdown is docs/policies.md") {
  auto r = run_plinth({"policy", "list"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "SOC2-ENC-001   high     mandatory Storage tiers encrypt data at rest with AES-256, LUKS2 or SED\n"
                        "               controls: gdpr Art.32(1)(a); hipaa 164.312(a)(2)(iv); soc2 CC6.1\n"
                        "               file: <builtin>/policies/soc2/encryption.lua:12\n"));
  CHECK(std::regex_search(r.out, std::regex("\n[0-9]+ policies\n$")));
  auto md = run_plinth({"policy", "list", "--markdown"});
  CHECK(md.exit_code == 0);
  CHECK(md.out == slurp("docs/policies.md"));
}

TEST_CASE("plan exits 1 on a mandatory policy failure and names the policy, address and line") {
  TempDir dir;
  auto r = run_plinth({"plan", "blueprints/invalid/policy-weak-access.yaml", "--state", dir.path() + "/s.json"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "blueprints/invalid/policy-weak-access.yaml:40:7: error[SOC2-RBAC-002]: role 'cluster-admin' "
                        "gives cluster-admin-level power to group:everyone; bind it to named users, not groups "
                        "(access.role.cluster-admin)\n"));
  CHECK(contains(r.err, "  policy SOC2-RBAC-002 (mandatory, critical): No cluster-admin or privilege-escalating "
                        "roles for groups [hipaa 164.312(a)(1); soc2 CC6.1, CC6.3]\n"));
  CHECK(contains(r.err, "policy check: 22 policies run, 6 mandatory failure(s), 0 advisory warning(s), 0 waived, 0 "
                        "error(s); 23 not selected by metadata.compliance\n"));
}

TEST_CASE("advisory failures warn without failing plan, the regulated example is clean") {
  TempDir dir;
  auto ml = run_plinth({"plan", "blueprints/invalid/policy-ml-hygiene.yaml", "--state", dir.path() + "/a.json", "--refresh=false"});
  CHECK(ml.exit_code == 0);
  CHECK(contains(ml.err, "warning[ML-QUOTA-001]: namespace 'lab' has no GPU quota; set quota: {gpus: N} "
                         "(access.namespace.lab)\n"));
  auto reg = run_plinth({"plan", "blueprints/examples/regulated.yaml", "--state", dir.path() + "/b.json", "--refresh=false"});
  CHECK(reg.exit_code == 0);
  CHECK(contains(reg.err, " policies run, 0 mandatory failure(s), 0 advisory warning(s), 0 waived, 0 error(s)\n"));
  CHECK_FALSE(contains(reg.err, "not selected"));
}

TEST_CASE("waivers.yaml beside the blueprint waives failures until it expires") {
  TempDir dir;
  std::string bp = dir.write("bp/main.yaml", slurp("blueprints/invalid/policy-unencrypted-tier.yaml"));
  std::string waivers = R"(waivers:
  - policy: SOC2-ENC-001
    resource: "storage.tier.*"
    justification: lab data only, re-imaged weekly
    approver: security@example.com
    expires: 2099-01-31
  - policy: SOC2-ENC-002
    resource: storage.backup.nightly
    justification: archive moves to SSE-KMS in Q1
    approver: security@example.com
    expires: 2099-01-31
)";
  dir.write("bp/waivers.yaml", waivers);
  auto ok = run_plinth({"plan", bp, "--state", dir.path() + "/s.json", "--refresh=false"});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(contains(ok.err, bp + ":20:7: info[SOC2-ENC-001]: waived: tier 'scratch' sets no encryption at rest; set "
                              "encryption.at_rest: aes-256-xts (or aes-256-gcm, luks2, sed) (storage.tier.scratch)\n"));
  CHECK(contains(ok.err, "  hint: waiver at " + dir.path() + "/bp/waivers.yaml:2:5: lab data only, re-imaged weekly "
                         "(approved by security@example.com)\n"));
  CHECK(contains(ok.err, "0 mandatory failure(s), 0 advisory warning(s), 3 waived"));

  dir.write("bp/waivers.yaml", replace_once(waivers, "expires: 2099-01-31", "expires: 2020-01-31"));
  auto expired = run_plinth({"plan", bp, "--state", dir.path() + "/s.json", "--refresh=false"});
  CHECK(expired.exit_code == 1);
  CHECK(contains(expired.err, dir.path() + "/bp/waivers.yaml:2:5: error[POL021]: waiver for SOC2-ENC-001 on "
                              "'storage.tier.*' expired on 2020-01-31; the 2 failure(s) it covered stand\n"));
  CHECK(contains(expired.err, "error[SOC2-ENC-001]: tier 'scratch' sets no encryption at rest"));

  dir.write("bp/waivers.yaml", waivers + R"(  - policy: SOC2-ENC-001
    resource: storage.tier.nothing
    justification: stale
    approver: security@example.com
    expires: 2099-01-31
)");
  auto unused = run_plinth({"plan", bp, "--state", dir.path() + "/s.json", "--refresh=false"});
  CHECK(unused.exit_code == 0);
  CHECK(contains(unused.err, dir.path() + "/bp/waivers.yaml:12:5: warning[POL022]: waiver for SOC2-ENC-001 on "
                             "'storage.tier.nothing' matches no failure\n"));
}

TEST_CASE("a policy that escapes the sandbox or loops errors, the others still run and plan exits 1") {
  TempDir dir;
  dir.write("extra/escape.lua", R"(policy {
  id = "X-ESCAPE", title = "tries os.execute", severity = "low", enforcement = "mandatory",
  check = function(ctx) os.execute("touch /tmp/plinth-pwned") end,
}
policy {
  id = "X-LOOP", title = "never ends", severity = "low", enforcement = "advisory",
  check = function(ctx) while true do end end,
}
)");
  auto r = run_plinth({"plan", "blueprints/examples/lab.yaml", "--state", dir.path() + "/s.json", "--policy-dir",
                       dir.path() + "/extra"});
  CHECK(r.exit_code == 1);
  std::string file = dir.path() + "/extra/escape.lua";
  CHECK(contains(r.err, file + ":3: error[X-ESCAPE]: policy X-ESCAPE could not run: 'os' is not available in the "
                               "policy sandbox (allowed: base (without dofile, loadfile, load, rawset, print, "
                               "collectgarbage), string, table, math, utf8)\n"));
  CHECK(contains(r.err, file + ":7: warning[X-LOOP]: policy X-LOOP could not run: instruction limit of 10000000 "
                               "exceeded (an endless loop?); simplify the check or raise the limit\n"));
  CHECK(contains(r.err, "policy check: 11 policies run, 0 mandatory failure(s), 0 advisory warning(s), 0 waived, 2 error(s)"));
}

TEST_CASE("PLINTH_POLICY_DIR adds to the built-in packs") {
  TempDir dir;
  dir.write("packs/only.lua", R"(policy {
  id = "ONLY-001", title = "always fails", severity = "low", enforcement = "mandatory",
  check = function(ctx) fail(nil, "no") end,
}
)");
  auto r = run_plinth({"plan", "blueprints/examples/lab.yaml", "--state", dir.path() + "/s.json"}, "",
                      {{"PLINTH_POLICY_DIR", dir.path() + "/packs"}});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "error[ONLY-001]: no\n"));
  CHECK(contains(r.err, "policy check: 10 policies run, 1 mandatory failure(s)"));  // the 9 built-in ml ones too
}

TEST_CASE("a copy of a built-in pack given with --policy-dir replaces it, and an empty pack directory turns one off",
          "[e2e][habits][policy]") {
  TempDir dir;
  // A copy of the hipaa pack whose audit retention is 30 days, and no gdpr pack.
  for (const auto& entry : std::filesystem::directory_iterator(source_dir() + "/policies/hipaa"))
    dir.write("ci/hipaa/" + entry.path().filename().string(), slurp(entry.path().string()));
  std::string audit = slurp(dir.path() + "/ci/hipaa/audit.lua");
  REQUIRE(contains(audit, "audit_log_retention_days"));
  std::filesystem::create_directories(dir.path() + "/ci/gdpr");

  auto builtin = run_plinth({"policy", "list"}, dir.path());
  REQUIRE(builtin.exit_code == 0);
  REQUIRE(contains(builtin.out, "<builtin>/policies/gdpr/"));
  auto r = run_plinth({"policy", "list", "--policy-dir", "ci"}, dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.err, "POL002"));  // no duplicate IDs: the copy replaces the built-in pack
  CHECK(contains(r.out, "file: ci/hipaa/audit.lua:"));
  CHECK_FALSE(contains(r.out, "<builtin>/policies/hipaa/"));
  CHECK_FALSE(contains(r.out, "<builtin>/policies/gdpr/"));
  CHECK(contains(r.out, "<builtin>/policies/soc2/"));

  // The regulated example with 400-day audit logs: the built-in HIPAA-AUD-002 (six years) blocks
  // it; a copy whose pack setting allows 400 days passes, as validate shows.
  std::string bp = slurp(source_dir() + "/blueprints/examples/regulated.yaml");
  const std::string keep = "retention_days: 2190}";
  bp.replace(bp.find(keep, bp.find("audit_logging:")), keep.size(), "retention_days: 400}");
  dir.write("bp/bp.yaml", bp);
  auto strict = run_plinth({"validate", "bp/bp.yaml"}, dir.path());
  CHECK(strict.exit_code == 1);
  CHECK(contains(strict.err, "error[HIPAA-AUD-002]"));
  dir.write("ci/hipaa/settings.yaml", "audit_log_retention_days: 400\n");
  auto relaxed = run_plinth({"validate", "bp/bp.yaml", "--policy-dir", "ci"}, dir.path());
  INFO(relaxed.err);
  CHECK(relaxed.exit_code == 0);
}

}  // namespace plinth::test::e2e_policy
