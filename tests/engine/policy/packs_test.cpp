// The built-in packs: their Lua tests pass, the regulated example passes
// every pack, each blueprints/invalid/policy-*.yaml fails exactly the
// policies it should, and docs/policies.md is generated from them.
#include <algorithm>
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "engine/blueprint/json.h"
#include "engine/blueprint/loader.h"
#include "engine/graph/expand.h"
#include "engine/plan/plan.h"
#include "engine/policy/listing.h"
#include "engine/policy/policy.h"
#include "engine/policy/runtime.h"
#include "engine/policy/testing.h"
#include "tests/support/run.h"

using namespace plinth;
using policy::Outcome;

namespace {

/// Evaluates the built-in packs on a blueprint file.
policy::Evaluation evaluate_file(const std::string& path) {
  auto loaded = bp::load_files({path});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(format_diagnostic(d));
  REQUIRE(loaded.ok());
  auto graph = graph::expand(loaded.blueprint);
  REQUIRE(graph.ok());
  plan::Plan plan = plan::diff(graph->resources, {});
  policy::Input in;
  in.blueprint = &loaded.blueprint;
  in.blueprint_json = bp::to_json(loaded.blueprint);
  in.resources = &graph->resources;
  in.plan = &plan;
  return policy::evaluate({"policies"}, in);
}

/// "ID address" of every failure and error (errors as "ID error: message").
std::multiset<std::string> failures(const policy::Evaluation& e) {
  std::multiset<std::string> out;
  for (const auto& v : e.verdicts) {
    if (v.outcome == Outcome::Fail) out.insert(v.policy + " " + v.address);
    if (v.outcome == Outcome::Error) out.insert(v.policy + " error: " + v.message);
  }
  return out;
}

}  // namespace

TEST_CASE("the built-in packs load cleanly: at least 25 policies, real controls, a test file each") {
  auto set = policy::load_policies({"policies"});
  for (const auto& d : set.diagnostics) UNSCOPED_INFO(format_diagnostic(d));
  CHECK(set.diagnostics.empty());
  CHECK(set.policies.size() >= 25);
  std::set<std::string> packs;
  for (const auto& p : set.policies) {
    INFO(p.id);
    packs.insert(p.pack);
    CHECK_FALSE(p.controls.empty());
    CHECK_FALSE(p.description.empty());
    std::string test_file = p.loc.file.substr(0, p.loc.file.size() - 4) + "_test.lua";
    CHECK_FALSE(test::slurp(test_file).empty());
  }
  CHECK(packs == std::set<std::string>{"gdpr", "hipaa", "ml", "soc2"});
}

TEST_CASE("plinth policy test policies/: every Lua test passes") {
  auto run = policy::run_policy_tests("policies");
  for (const auto& r : run.results)
    if (!r.passed) UNSCOPED_INFO(r.loc.str() + ": " + r.name + ": " + r.detail);
  CHECK(run.failed == 0);
  CHECK(run.passed >= 50);
}

TEST_CASE("the regulated example passes every pack") {
  auto e = evaluate_file("blueprints/examples/regulated.yaml");
  CHECK(e.skipped.empty());
  CHECK(e.policies.size() == policy::load_policies({"policies"}).policies.size());
  CHECK(failures(e).empty());
  CHECK_FALSE(e.blocked());
}

TEST_CASE("the lab and cluster examples pass the packs they select") {
  for (const char* f : {"blueprints/examples/lab.yaml", "blueprints/examples/cluster.yaml"}) {
    INFO(f);
    auto e = evaluate_file(f);
    CHECK(failures(e).empty());
    CHECK_FALSE(e.skipped.empty());
  }
}

TEST_CASE("each blueprints/invalid/policy-*.yaml fails exactly its policies") {
  using Set = std::multiset<std::string>;
  const std::vector<std::pair<std::string, Set>> cases = {
      {"policy-unencrypted-tier.yaml",
       {"SOC2-ENC-001 storage.tier.scratch", "SOC2-ENC-001 storage.tier.archive", "SOC2-ENC-002 storage.backup.nightly"}},
      {"policy-weak-access.yaml",
       {"SOC2-RBAC-001 access.role.ops", "SOC2-RBAC-001 access.role.ops", "SOC2-RBAC-002 access.role.cluster-admin",
        "SOC2-TLS-001 access.transport.default", "SOC2-TLS-002 access.transport.default",
        "SOC2-AUD-003 access.audit_logging.default"}},
      {"policy-gdpr-residency.yaml",
       {"GDPR-DPA-001 storage.tier.datasets", "GDPR-RES-001 storage.tier.datasets", "GDPR-RES-002 aws.instance.aws-us",
        "GDPR-RET-001 storage.tier.datasets", "GDPR-SEC-002 storage.tier.datasets"}},
      {"policy-hipaa-gaps.yaml",
       {"HIPAA-AUD-002 access.audit_logging.default", "HIPAA-BAK-001 storage.tier.records",
        "HIPAA-INT-001 storage.tier.records", "HIPAA-TLS-001 storage.tier.records"}},
      {"policy-ml-hygiene.yaml",
       {"ML-MON-001 plinth.monitoring.default", "ML-NET-001 baremetal.node.lab-l40s",
        "ML-QUOTA-001 access.namespace.lab"}},
  };
  for (const auto& [file, expected] : cases) {
    INFO(file);
    auto e = evaluate_file("blueprints/invalid/" + file);
    CHECK(failures(e) == expected);
    // Advisory-only findings do not block; any mandatory one does.
    CHECK(e.blocked() == (file != "policy-ml-hygiene.yaml"));
  }
}

TEST_CASE("a failure's position is the blueprint line that declares the resource") {
  auto e = evaluate_file("blueprints/invalid/policy-gdpr-residency.yaml");
  for (const auto& v : e.verdicts) {
    if (v.policy == "GDPR-RES-001" && v.outcome == Outcome::Fail) {
      CHECK(v.loc.str() == "blueprints/invalid/policy-gdpr-residency.yaml:22:7");
      CHECK(v.message ==
            "tier 'datasets' holds pii data: region 'us-east-1' is outside the EU/EEA and no transfer basis is declared (Art. 44)");
    }
    if (v.policy == "GDPR-RES-002" && v.outcome == Outcome::Fail)
      CHECK(v.loc.str() == "blueprints/invalid/policy-gdpr-residency.yaml:39:5");  // the burst pool
  }
}

TEST_CASE("every verdict the packs give names its evidence or its failure") {
  for (const char* f : {"blueprints/examples/regulated.yaml", "blueprints/examples/cluster.yaml", "blueprints/examples/lab.yaml",
                        "policies/fixtures/compliant.yaml", "blueprints/invalid/policy-unencrypted-tier.yaml",
                        "blueprints/invalid/policy-weak-access.yaml", "blueprints/invalid/policy-gdpr-residency.yaml",
                        "blueprints/invalid/policy-hipaa-gaps.yaml", "blueprints/invalid/policy-ml-hygiene.yaml"}) {
    INFO(f);
    auto e = evaluate_file(f);
    std::set<std::string> reported;
    for (const auto& v : e.verdicts) {
      INFO(v.policy << " " << v.address);
      CHECK_FALSE(v.message.empty());
      reported.insert(v.policy);
    }
    // Every policy that ran said something, also when nothing applied to this blueprint.
    for (const auto& p : e.policies) {
      INFO(p.id);
      CHECK(reported.count(p.id) == 1);
    }
  }
}

TEST_CASE("the corrected citations: each policy cites the controls the regulation's text supports") {
  // Each row was wrong before issue 14: GDPR-RES-* cited only Art. 44 (and RES-003 Art. 32(1)(c)),
  // HIPAA-AUD-002 cited 164.316(b)(2)(i) (documentation retention), ML-QUOTA-001 CC6.1,
  // ML-NET-001 only CC6.6, SOC2-ENC-001 (at rest) CC6.7 (data in transmission).
  auto set = policy::load_policies({"policies"});
  std::map<std::string, const policy::PolicyInfo*> by_id;
  for (const auto& p : set.policies) by_id[p.id] = &p;
  using Controls = std::map<std::string, std::vector<std::string>>;
  const std::map<std::string, Controls> want = {
      {"GDPR-RES-001", {{"gdpr", {"Art.44", "Art.45", "Art.46"}}}},
      {"GDPR-RES-002", {{"gdpr", {"Art.44", "Art.45", "Art.46"}}}},
      // Issue 31's review: RES-003 accepts an adequacy decision as RES-001 does, so it cites Art. 45.
      {"GDPR-RES-003", {{"gdpr", {"Art.44", "Art.45", "Art.46"}}}},
      // Issue 31's review: keeping logs is not "regularly reviewing records of information system
      // activity" (164.308(a)(1)(ii)(D)); encrypting a copy is not "creating retrievable exact
      // copies" (164.308(a)(7)(ii)(A)); a checkpoint tier is not ePHI by itself.
      {"HIPAA-AUD-002", {{"hipaa", {"164.312(b)"}}}},
      {"HIPAA-ENC-002", {{"hipaa", {"164.312(a)(2)(iv)"}}}},
      {"SOC2-ENC-002", {{"hipaa", {"164.312(a)(2)(iv)"}}, {"soc2", {"CC6.1", "A1.2"}}}},
      {"ML-BAK-001", {{"soc2", {"A1.2"}}}},
      {"ML-BAK-002", {{"soc2", {"A1.3"}}}},
      {"ML-QUOTA-001", {{"soc2", {"A1.1"}}}},
      {"ML-NET-001", {{"gdpr", {"Art.32(1)(b)"}}, {"soc2", {"CC6.1", "CC6.6"}}}},
      {"SOC2-ENC-001", {{"gdpr", {"Art.32(1)(a)"}}, {"hipaa", {"164.312(a)(2)(iv)"}}, {"soc2", {"CC6.1"}}}},
      // Controls no policy covered before.
      {"HIPAA-INT-001", {{"hipaa", {"164.312(c)(1)"}}}},
      {"GDPR-SEC-002", {{"gdpr", {"Art.32(1)(c)"}}}},
      {"GDPR-SEC-003", {{"gdpr", {"Art.32(1)(d)", "Art.32(1)(c)"}}}},
      {"GDPR-REC-001", {{"gdpr", {"Art.30(1)(c)"}}}},
      {"GDPR-BRE-001", {{"gdpr", {"Art.33"}}}},
      // Issue 31: backups and logging evidence (c)(1), not (c)(2)'s checksums or signatures; a
      // year of logs is this pack's rule, not CC4.1's.
      {"SOC2-AUD-003", {{"soc2", {"CC7.2"}}}},
      // Issue 31, item 13: contracts and the impact assessment the blueprint records.
      // Issue 31's review: a recorded agreement is the written contract of 164.308(b)(3), not the
      // terms 164.314(a)(2)(i) says it must contain (the policy cannot read them).
      {"HIPAA-BAA-001", {{"hipaa", {"164.308(b)(1)", "164.308(b)(3)", "164.314(a)(1)"}}}},
      {"GDPR-DPA-001", {{"gdpr", {"Art.28(3)"}}}},
      {"GDPR-DPIA-001", {{"gdpr", {"Art.35(1)", "Art.35(3)(b)"}}}},
  };
  for (const auto& [id, controls] : want) {
    INFO(id);
    CHECK(by_id.count(id) == 1);
    if (by_id.count(id)) CHECK(by_id[id]->controls == controls);
  }
  // No policy cites the old wrong paragraphs for these purposes any more.
  for (const auto& p : set.policies) {
    INFO(p.id);
    for (const auto& [fw, ids] : p.controls)
      for (const auto& c : ids) {
        CHECK_FALSE((fw == "hipaa" && c == "164.316(b)(2)(i)"));
        // Procedures no blueprint shows: no policy claims them.
        CHECK_FALSE((fw == "hipaa" && c.rfind("164.308(a)(1)", 0) == 0));
      }
  }
  CHECK(by_id["SOC2-AUD-003"]->description.find("A house rule, not the text of a criterion") != std::string::npos);
  // Stronger-than-required transport rules stay, and say they are the house baseline.
  for (const char* id : {"SOC2-TLS-001", "SOC2-TLS-002", "HIPAA-TLS-002", "GDPR-TLS-001"}) {
    INFO(id);
    CHECK(by_id.count(id) == 1);
    if (!by_id.count(id)) continue;
    CHECK(by_id[id]->title.rfind("House baseline: ", 0) == 0);
    CHECK(by_id[id]->description.find("house baseline") != std::string::npos);
  }
}

TEST_CASE("pack settings make house baselines advisory, and a later policy directory overrides them") {
  auto defaults = policy::load_policies({"policies"});
  auto enforcement = [](const policy::PolicySet& set, const std::string& id) {
    for (const auto& p : set.policies)
      if (p.id == id) return p.enforcement;
    return std::string("missing");
  };
  for (const char* id : {"SOC2-TLS-001", "SOC2-TLS-002", "HIPAA-TLS-002", "GDPR-TLS-001"}) CHECK(enforcement(defaults, id) == "mandatory");
  test::TempDir dir;
  dir.write("soc2/settings.yaml", "transport_baseline: advisory\n");
  dir.write("hipaa/settings.yaml", "transport_baseline: advisory\naudit_log_retention_days: 365\n");
  auto relaxed = policy::load_policies({"policies", dir.path()});
  for (const auto& d : relaxed.diagnostics) UNSCOPED_INFO(format_diagnostic(d));
  CHECK(relaxed.diagnostics.empty());
  CHECK(enforcement(relaxed, "SOC2-TLS-001") == "advisory");
  CHECK(enforcement(relaxed, "HIPAA-TLS-002") == "advisory");
  CHECK(enforcement(relaxed, "GDPR-TLS-001") == "mandatory");  // the gdpr pack keeps its own
  // Legal minimums are not settings.
  CHECK(enforcement(relaxed, "HIPAA-TLS-001") == "mandatory");
  // The retention setting changes what HIPAA-AUD-002 accepts: one year now passes.
  auto loaded = bp::load_files({"blueprints/invalid/policy-hipaa-gaps.yaml"});
  REQUIRE(loaded.ok());
  auto graph = graph::expand(loaded.blueprint);
  REQUIRE(graph.ok());
  plan::Plan plan = plan::diff(graph->resources, {});
  policy::Input in;
  in.blueprint = &loaded.blueprint;
  in.blueprint_json = bp::to_json(loaded.blueprint);
  in.resources = &graph->resources;
  in.plan = &plan;
  CHECK(failures(policy::evaluate({"policies"}, in)).count("HIPAA-AUD-002 access.audit_logging.default") == 1);
  CHECK(failures(policy::evaluate({"policies", dir.path()}, in)).count("HIPAA-AUD-002 access.audit_logging.default") == 0);
}

TEST_CASE("a settings file that is not a map of scalars is an error naming it") {
  test::TempDir dir;
  dir.write("soc2/settings.yaml", "transport_baseline: [advisory]\n");
  auto set = policy::load_policies({"policies", dir.path()});
  REQUIRE_FALSE(set.diagnostics.empty());
  CHECK(format_diagnostic(set.diagnostics[0]).find(dir.path() + "/soc2/settings.yaml") != std::string::npos);
}

TEST_CASE("the compiled-in packs' settings are read, as the files in policies/ hold them") {
  std::map<std::string, policy::PackSettings> builtin, on_disk;
  Diagnostics diags;
  policy::read_pack_settings("<builtin>/policies", builtin, diags);
  policy::read_pack_settings("policies", on_disk, diags);
  for (const auto& d : diags) UNSCOPED_INFO(format_diagnostic(d));
  CHECK(diags.empty());
  CHECK(builtin.count("soc2") == 1);
  CHECK(builtin["gdpr"]["breach_log_retention_days"] == "365");
  CHECK(builtin == on_disk);
  // A setting from the compiled-in packs reaches the policy sandbox: a pack
  // whose file returns its setting as its title.
  test::TempDir dir;
  dir.write("soc2/probe.lua", "policy { id = 'PROBE-001', title = tostring(setting('transport_baseline', 'unset')),\n"
                              "  severity = 'low', enforcement = 'advisory', check = function(ctx) end }\n");
  auto set = policy::load_policies({"<builtin>/policies", dir.path()});
  const policy::PolicyInfo* probe = nullptr;
  for (const auto& pi : set.policies)
    if (pi.id == "PROBE-001") probe = &pi;
  REQUIRE(probe);
  CHECK(probe->title == "mandatory");
}

TEST_CASE("settings that are not UTF-8 are an error at the byte, and the pack keeps its defaults") {
  test::TempDir dir;
  dir.write("soc2/settings.yaml", "# fine\ntransport_baseline: adv\xffsory\n");
  auto set = policy::load_policies({"policies", dir.path()});
  REQUIRE(set.diagnostics.size() == 1);
  CHECK(set.diagnostics[0].loc.line == 2);
  CHECK(set.diagnostics[0].loc.column == 24);
  CHECK(set.diagnostics[0].message.find("not valid UTF-8: byte 0xff") != std::string::npos);
  for (const auto& p : set.policies)
    if (p.id == "SOC2-TLS-001") CHECK(p.enforcement == "mandatory");
}

TEST_CASE("setting() inside a check is an error verdict, not a value") {
  test::TempDir dir;
  dir.write("x/late.lua", "policy { id = 'LATE-001', title = 't', severity = 'low', enforcement = 'advisory',\n"
                          "  check = function(ctx) setting('a', 1) end }\n");
  policy::Input in;
  auto eval = policy::evaluate({dir.path()}, in);
  REQUIRE(eval.verdicts.size() == 1);
  CHECK(eval.verdicts[0].outcome == Outcome::Error);
  CHECK(eval.verdicts[0].message.find("while its policy file loads") != std::string::npos);
}

TEST_CASE("import() gives each policy file its own copy of a library in lib/, which is no policy file itself") {
  test::TempDir dir;
  dir.write("lib/util.lua", "local M = {n = 1, nested = {k = 'v'}}\nfunction M.twice(x) return 2 * x end\nreturn M\n");
  dir.write("a/one.lua", "local u = import('util')\nu.n = 99\nu.nested.k = 'changed'\n"
                         "policy { id = 'IMP-001', title = tostring(u.twice(21)), severity = 'low',\n"
                         "  enforcement = 'advisory', check = function(ctx) end }\n");
  dir.write("a/two.lua", "local u = import('util')\n"
                         "policy { id = 'IMP-002', title = u.n .. ' ' .. u.nested.k, severity = 'low',\n"
                         "  enforcement = 'advisory', check = function(ctx) end }\n");
  auto set = policy::load_policies({dir.path()});
  for (const auto& d : set.diagnostics) UNSCOPED_INFO(format_diagnostic(d));
  CHECK(set.diagnostics.empty());
  std::map<std::string, std::string> title;
  for (const auto& pi : set.policies) title[pi.id] = pi.title;
  CHECK(title == std::map<std::string, std::string>{{"IMP-001", "42"}, {"IMP-002", "1 v"}});
  // The library is reported with the files that ran, with its digest.
  const std::string lib = dir.path() + "/lib/util.lua";
  CHECK(std::count(set.files.begin(), set.files.end(), lib) == 1);
  CHECK(set.hashes.count(lib) == 1);

  // What import() refuses: an unknown library, a library that declares a policy, a call inside a check.
  test::TempDir bad;
  bad.write("lib/evil.lua", "policy { id = 'EVIL-001', title = 't', severity = 'low', enforcement = 'advisory',\n"
                            "  check = function(ctx) end }\n");
  bad.write("x/missing.lua", "local m = import('nope')\n");
  bad.write("y/evil.lua", "local e = import('evil')\n");
  bad.write("lib/broken.lua", "error('boom')\n");
  bad.write("w/first.lua", "local b = import('broken')\n");
  bad.write("w/second.lua", "local b = import('broken')\n");
  bad.write("z/late.lua", "policy { id = 'LATE-002', title = 't', severity = 'low', enforcement = 'advisory',\n"
                          "  check = function(ctx) import('util') end }\n");
  auto refused = policy::load_policies({bad.path()});
  std::string all;
  for (const auto& d : refused.diagnostics) all += format_diagnostic(d) + "\n";
  INFO(all);
  CHECK(refused.diagnostics.size() == 4);
  // A library whose chunk raises an error: the first importer shows the error, the next says so.
  CHECK(all.find("w/first.lua: error[POL001]: policy file failed to load: " + bad.path() + "/lib/broken.lua:1: boom") !=
        std::string::npos);
  CHECK(all.find("w/second.lua:1: error[POL001]: policy file failed to load: import('broken'): the library did not load") !=
        std::string::npos);
  CHECK(all.find("x/missing.lua:1") != std::string::npos);
  CHECK(all.find("import('nope'): no library " + bad.path() + "/lib/nope.lua") != std::string::npos);
  CHECK(all.find("lib/evil.lua:1") != std::string::npos);
  CHECK(all.find("global 'policy'") != std::string::npos);
  for (const auto& pi : refused.policies) CHECK(pi.id != "EVIL-001");
  policy::Input in;
  auto eval = policy::evaluate({bad.path()}, in);
  bool late = false;
  for (const auto& v : eval.verdicts)
    if (v.policy == "LATE-002") {
      late = true;
      CHECK(v.outcome == Outcome::Error);
      CHECK(v.message.find("while its policy file loads") != std::string::npos);
    }
  CHECK(late);
}

TEST_CASE("a pack copied out of the built-in ones imports the built-in lib/ it does not carry") {
  test::TempDir dir;
  dir.write("hipaa/agreements.lua", test::slurp("policies/hipaa/agreements.lua"));
  auto set = policy::load_policies({"<builtin>/policies", dir.path()});
  for (const auto& d : set.diagnostics) UNSCOPED_INFO(format_diagnostic(d));
  CHECK(set.diagnostics.empty());
  bool copied = false;
  for (const auto& pi : set.policies)
    if (pi.id == "HIPAA-BAA-001") copied = pi.loc.file == dir.path() + "/hipaa/agreements.lua";
  CHECK(copied);
  CHECK(set.hashes.count("<builtin>/policies/lib/reach.lua") == 1);
}

TEST_CASE("docs/policies.md is generated from the packs and up to date") {
  auto set = policy::load_policies({"policies"});
  std::string want = policy::policies_markdown(set.policies);
  INFO("regenerate with: plinth policy list --markdown > docs/policies.md");
  CHECK(test::slurp("docs/policies.md") == want);
}

TEST_CASE("all packs evaluate a blueprint of 10000 nodes with no failure") {
  // How long it takes is the bench's to say (docs/benchmarks.md, policy section), not a test's.
  std::string text = test::slurp("blueprints/examples/regulated.yaml");
  auto at = text.find("count: 16");
  REQUIRE(at != std::string::npos);
  text.replace(at, 9, "count: 10000");
  auto loaded = bp::load_string(text, "big.yaml");
  REQUIRE(loaded.ok());
  auto graph = graph::expand(loaded.blueprint);
  REQUIRE(graph.ok());
  REQUIRE(graph->resources.size() > 10000);
  plan::Plan plan = plan::diff(graph->resources, {});
  policy::Input in;
  in.blueprint = &loaded.blueprint;
  in.blueprint_json = bp::to_json(loaded.blueprint);
  in.resources = &graph->resources;
  in.plan = &plan;
  auto e = policy::evaluate({"policies"}, in);
  CHECK(e.policies.size() > 20);
  CHECK(failures(e).empty());
}

TEST_CASE("HIPAA-AUD-002 points at retention_days, not at the audit_logging map (fail with a field)") {
  TempDir dir;
  std::string text = slurp("blueprints/examples/regulated.yaml");
  const std::string keep = "retention_days: 2190}";
  const auto at = text.find("audit_logging:");
  REQUIRE(at != std::string::npos);
  const auto days = text.find(keep, at);
  REQUIRE(days != std::string::npos);
  text.replace(days, keep.size(), "retention_days: 30}");
  const std::string path = dir.write("bp.yaml", text);
  auto e = evaluate_file(path);
  const policy::Verdict* v = nullptr;
  for (const auto& x : e.verdicts)
    if (x.policy == "HIPAA-AUD-002" && x.outcome == Outcome::Fail) v = &x;
  REQUIRE(v);
  // The line and column of the value 30.
  size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(days), '\n'));
  size_t column = days - text.rfind('\n', days) + std::string("retention_days: ").size();
  CHECK(v->loc.line == static_cast<int>(line));
  CHECK(v->loc.column == static_cast<int>(column));
}
