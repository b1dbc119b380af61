// Audit reports built from real policy runs: the built-in packs on the
// example and policy-* blueprints, every writer checked against what reads it.
#include <algorithm>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "engine/audit/compare.h"
#include "engine/audit/report.h"
#include "engine/blueprint/json.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/blueprint/loader.h"
#include "engine/graph/expand.h"
#include "engine/policy/waivers.h"
#include "tests/support/run.h"

using namespace plinth;
namespace fs = std::filesystem;

namespace {

struct Run {
  bp::Blueprint blueprint;
  graph::ResourceGraph graph;
  plan::Plan plan;
  policy::Evaluation eval;
  audit::Report report;
};

/// Loads `file`, expands it, plans against empty state, runs the built-in
/// packs, applies `waivers` and builds the report, as `plinth audit` does.
Run run(const std::string& file, const std::vector<policy::Waiver>& waivers = {}) {
  Run r;
  auto loaded = bp::load_files({file});
  REQUIRE(loaded.ok());
  r.blueprint = loaded.blueprint;
  auto g = graph::expand(r.blueprint);
  REQUIRE(g.ok());
  r.graph = *g;
  r.plan = plan::diff(r.graph.resources, {});
  policy::Input in;
  in.blueprint = &r.blueprint;
  in.blueprint_json = bp::to_json(r.blueprint);
  in.resources = &r.graph.resources;
  in.plan = &r.plan;
  r.eval = policy::evaluate({"policies"}, in);
  policy::apply_waivers(waivers, "2026-12-02", r.eval);
  audit::ReportInput ri;
  ri.blueprint = &r.blueprint;
  ri.evaluation = &r.eval;
  ri.plan = r.plan.summary();
  ri.state_path = "plinth.state.json";
  ri.waivers = waivers;
  ri.today = "2026-12-02";
  ri.generated_at = "2026-12-02T14:00:00Z";
  auto cats = audit::load_frameworks({"policies"});
  REQUIRE(cats.ok());
  ri.catalogs = *cats;
  auto prov = audit::record_provenance({file});
  REQUIRE(prov.ok());
  ri.provenance = *prov;
  r.report = audit::build_report(ri);
  return r;
}

const audit::FrameworkView& framework(const audit::Report& r, const std::string& name) {
  for (const auto& f : r.frameworks)
    if (f.name == name) return f;
  FAIL("no framework " << name);
  throw std::logic_error("unreachable");
}

const audit::ControlView& control(const audit::FrameworkView& f, const std::string& id) {
  for (const auto& c : f.controls)
    if (c.id == id) return c;
  FAIL("no control " << id << " in " << f.name);
  throw std::logic_error("unreachable");
}

policy::Waiver records_tls_waiver() {
  return {"HIPAA-TLS-001", "storage.tier.records", "NFS over a dedicated, isolated VLAN until Q1 <migration>",
          "ciso@example.com", "2026-12-31", {"waivers.yaml", 3, 5}};
}

std::string write_temp(const test::TempDir& dir, const std::string& name, const std::string& text) {
  return dir.write(name, text);
}

/// Test output that outlives the test (screenshots, validator logs).
std::string output_dir() {
  fs::path dir = fs::path(PLINTH_BINARY).parent_path().parent_path() / "test-output" / "audit";
  fs::create_directories(dir);
  return dir.string();
}

/// The SARIF Multitool, installed with npm into the build tree when missing.
/// Returns "" and sets `why` when npm cannot reach the registry.
std::string multitool(std::string& why) {
  fs::path dir = fs::path(PLINTH_BINARY).parent_path().parent_path() / "tools" / "sarif";
  fs::path bin = dir / "node_modules" / "@microsoft" / "sarif-multitool-linux" / "Sarif.Multitool";
  if (!fs::exists(bin)) {
    fs::create_directories(dir);
    auto npm = test::run_program({"npm", "install", "--no-audit", "--no-fund", "--prefix", dir.string(),
                            "@microsoft/sarif-multitool"});
    if (npm.exit_code != 0 || !fs::exists(bin)) {
      why = "npm install @microsoft/sarif-multitool failed (exit " + std::to_string(npm.exit_code) + "): " + npm.err;
      return "";
    }
  }
  // npm does not run the package's install script (chmod u+x) here.
  fs::permissions(bin, fs::perms::owner_exec, fs::perm_options::add);
  return bin.string();
}

}  // namespace

TEST_CASE("the framework control lists load and name their controls") {
  auto cats = audit::load_frameworks({"policies"});
  REQUIRE(cats.ok());
  std::vector<std::string> names;
  for (const auto& c : *cats) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"gdpr", "hipaa", "soc2"});
  for (const auto& c : *cats) {
    CHECK(!c.title.empty());
    CHECK(c.controls.size() >= 10);
  }
}

TEST_CASE("a malformed framework file is an error naming the file") {
  test::TempDir dir;
  dir.write("frameworks/x.yaml", "title: no name\ncontrols: []\n");
  auto cats = audit::load_frameworks({dir.path()});
  REQUIRE_FALSE(cats.ok());
  CHECK(cats.error().message == dir.path() + "/frameworks/x.yaml: missing 'framework' (the name policies use in "
                                             "controls, e.g. hipaa)");
}

TEST_CASE("the report records every verdict with severity, controls, address and file:line") {
  Run r = run("blueprints/invalid/policy-hipaa-gaps.yaml");
  auto c = r.report.counts();
  CHECK(c["fail"] == 4);
  CHECK(c["error"] == 0);
  CHECK(r.report.blocked);
  nlohmann::json j = audit::to_json(r.report);
  CHECK(j["report_format_version"] == 1);
  CHECK(j["blueprint"]["files"][0]["path"] == "blueprints/invalid/policy-hipaa-gaps.yaml");
  CHECK(j["blueprint"]["files"][0]["sha256"] == sha256_file("blueprints/invalid/policy-hipaa-gaps.yaml"));
  bool found = false;
  for (const auto& v : j["verdicts"]) {
    if (v["policy"] != "HIPAA-BAK-001" || v["outcome"] != "fail") continue;
    found = true;
    CHECK(v["address"] == "storage.tier.records");
    CHECK(v["severity"] == "high");
    CHECK(v["enforcement"] == "mandatory");
    CHECK(v["controls"]["hipaa"].size() >= 1);
    CHECK(v["location"]["file"] == "blueprints/invalid/policy-hipaa-gaps.yaml");
    CHECK(v["location"]["line"] == 22);
  }
  CHECK(found);
  CHECK(j["plan"]["create"].get<int>() == static_cast<int>(r.plan.summary().create));
  CHECK(j["provenance"]["in_repository"] == true);
}

TEST_CASE("the JSON report validates against docs/audit-report.schema.json") {
  test::TempDir dir;
  for (const std::string file : {"blueprints/examples/regulated.yaml", "blueprints/invalid/policy-hipaa-gaps.yaml"}) {
    Run r = run(file, {records_tls_waiver()});
    std::string path = write_temp(dir, "report.json", audit::to_json(r.report).dump(2));
    auto res = test::run_program(
        {"python3", "-c",
         "import json,sys,jsonschema\n"
         "schema=json.load(open(sys.argv[1])); doc=json.load(open(sys.argv[2]))\n"
         "jsonschema.Draft202012Validator.check_schema(schema)\n"
         "errs=list(jsonschema.Draft202012Validator(schema).iter_errors(doc))\n"
         "[print(e.json_path, e.message) for e in errs]\nsys.exit(1 if errs else 0)\n",
         "docs/audit-report.schema.json", path});
    INFO(file << "\n" << res.out << res.err);
    CHECK(res.exit_code == 0);
  }
}

TEST_CASE("a schema violation is caught by the schema check") {
  // The check above can fail: a report missing a required field does not validate.
  test::TempDir dir;
  Run r = run("blueprints/examples/regulated.yaml");
  nlohmann::json j = audit::to_json(r.report);
  j["verdicts"][0]["outcome"] = "maybe";
  std::string path = dir.write("bad.json", j.dump());
  auto res = test::run_program({"python3", "-c",
                                "import json,sys,jsonschema\n"
                                "jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))\n",
                                "docs/audit-report.schema.json", path});
  CHECK(res.exit_code != 0);
  CHECK(res.err.find("'maybe' is not one of") != std::string::npos);
}

TEST_CASE("waived failures carry justification, approver and expiry") {
  Run r = run("blueprints/invalid/policy-hipaa-gaps.yaml", {records_tls_waiver()});
  auto c = r.report.counts();
  CHECK(c["fail"] == 3);
  CHECK(c["waived"] == 1);
  REQUIRE(r.report.waivers.size() == 1);
  CHECK(r.report.waivers[0].days_left == 29);
  nlohmann::json j = audit::to_json(r.report);
  for (const auto& v : j["verdicts"])
    if (v["outcome"] == "waived") {
      CHECK(v["policy"] == "HIPAA-TLS-001");
      CHECK(v["waiver"]["approver"] == "ciso@example.com");
      CHECK(v["waiver"]["expires"] == "2026-12-31");
    }
  CHECK(j["waivers"][0]["days_left"] == 29);
}

TEST_CASE("SARIF has rules with help, results at repo-relative lines and waived results suppressed") {
  Run r = run("blueprints/invalid/policy-hipaa-gaps.yaml", {records_tls_waiver()});
  nlohmann::json s = audit::to_sarif(r.report);
  CHECK(s["version"] == "2.1.0");
  const auto& run0 = s["runs"][0];
  const auto& driver = run0["tool"]["driver"];
  CHECK(driver["name"] == "Plinth");
  CHECK(driver["version"] == PLINTH_VERSION);
  CHECK(driver["rules"].size() == r.report.policies.size());
  for (const auto& rule : driver["rules"]) {
    CHECK(!rule["help"]["text"].get<std::string>().empty());
    CHECK(rule["helpUri"].get<std::string>().rfind("https://", 0) == 0);
  }
  REQUIRE(run0["results"].size() == 4);
  int suppressed = 0;
  for (const auto& res : run0["results"]) {
    const auto& loc = res["locations"][0]["physicalLocation"];
    CHECK(loc["artifactLocation"]["uri"] == "blueprints/invalid/policy-hipaa-gaps.yaml");
    CHECK(loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%");
    CHECK(loc["region"]["startLine"].get<int>() > 0);
    CHECK(driver["rules"][res["ruleIndex"].get<int>()]["id"] == res["ruleId"]);
    if (res.contains("suppressions")) {
      suppressed++;
      CHECK(res["ruleId"] == "HIPAA-TLS-001");
      CHECK(res["suppressions"][0]["status"] == "accepted");
    }
  }
  CHECK(suppressed == 1);
}

TEST_CASE("JUnit XML is well-formed with one testcase per policy and resource, escaped") {
  Run r = run("blueprints/invalid/policy-hipaa-gaps.yaml", {records_tls_waiver()});
  std::string xml = audit::to_junit(r.report);
  test::TempDir dir;
  std::string path = dir.write("junit.xml", xml);
  auto res = test::run_program(
      {"python3", "-c",
       "import sys, xml.etree.ElementTree as ET\n"
       "root=ET.parse(sys.argv[1]).getroot()\n"
       "cases=root.findall('./testsuite/testcase')\n"
       "print(root.tag, root.get('tests'), root.get('failures'), root.get('skipped'), len(cases),"
       " len(root.findall('./testsuite/testcase/failure')), len(root.findall('./testsuite/testcase/skipped')),"
       " [s.get('name') for s in root.findall('testsuite')])\n"
       "skipped=[c.find('skipped').get('message') for c in cases if c.find('skipped') is not None]\n"
       "print([m for m in skipped if m.startswith('waived: ')][0])\n"
       "print(len([m for m in skipped if m.startswith('not applicable: ')]))\n",
       path});
  INFO(res.err);
  REQUIRE(res.exit_code == 0);
  std::string n = std::to_string(r.report.verdicts.size());
  // Skipped: the waived failure and every not-applicable verdict (the policy had nothing to check).
  const int na = r.report.counts()["not_applicable"];
  CHECK(na > 0);
  std::string skipped = std::to_string(1 + na);
  CHECK(res.out == "testsuites " + n + " 3 " + skipped + " " + n + " 3 " + skipped +
                       " ['hipaa', 'ml']\n"
                       "waived: NFS over a dedicated, isolated VLAN until Q1 <migration> (approved by ciso@example.com)\n" +
                       std::to_string(na) + "\n");
  CHECK(audit::xml_escape("a<b>&\"'\x01") == "a&lt;b&gt;&amp;&quot;&#39;\\x01");
}

TEST_CASE("Markdown for a PR comment: counts, failures first, passes collapsed, provenance") {
  Run r = run("blueprints/invalid/policy-hipaa-gaps.yaml", {records_tls_waiver()});
  std::string md = audit::to_markdown(r.report);
  auto c = r.report.counts();
  auto po = r.report.policy_outcomes();
  CHECK(md.rfind("## Plinth compliance report\n\n❌ **Blocked**: 3 mandatory failure(s)\n\n", 0) == 0);
  // Policies and verdicts are counted on separate rows, never mixed in one.
  CHECK(md.find("| | Total | Pass | Fail | Waived | Error | Not applicable | Not evaluated |\n") != std::string::npos);
  CHECK(md.find("| Policies | " + std::to_string(r.report.policies.size() + r.report.skipped.size()) + " | " +
                std::to_string(po["pass"]) + " | 3 | 1 | 0 | " + std::to_string(po["not_applicable"]) + " | " +
                std::to_string(r.report.skipped.size()) + " |\n") != std::string::npos);
  CHECK(md.find("| Verdicts | " + std::to_string(r.report.verdicts.size()) + " | " + std::to_string(c["pass"]) +
                " | 3 | 1 | 0 | " + std::to_string(c["not_applicable"]) + " | - |\n") != std::string::npos);
  // What had nothing to check is listed apart from the passes, with why.
  CHECK(md.find("<details><summary>" + std::to_string(c["not_applicable"]) + " not applicable</summary>") !=
        std::string::npos);
  size_t failures = md.find("### Failures");
  size_t waived = md.find("### Waived");
  size_t details = md.find("<details><summary>" + std::to_string(c["pass"]) + " passing check(s)</summary>");
  REQUIRE(failures != std::string::npos);
  REQUIRE(waived != std::string::npos);
  REQUIRE(details != std::string::npos);
  CHECK(failures < waived);
  CHECK(waived < details);
  CHECK(md.find("`storage.tier.records` | `blueprints/invalid/policy-hipaa-gaps.yaml:22`") != std::string::npos);
  CHECK(md.find("| `HIPAA-TLS-001` | `storage.tier.records` | NFS over a dedicated, isolated VLAN until Q1 "
                "&lt;migration&gt; | ciso@\u200bexample.com | 2026-12-31 (29 days) |") != std::string::npos);
  CHECK(md.find("<sub>Blueprint **phi-gaps** · git ") != std::string::npos);
  CHECK(md.size() < 65536);
}

TEST_CASE("Markdown cells make no link and no mention from blueprint or policy text", "[security]") {
  Run r = run("blueprints/invalid/policy-hipaa-gaps.yaml", {records_tls_waiver()});
  auto failed = std::find_if(r.report.verdicts.begin(), r.report.verdicts.end(),
                             [](const policy::Verdict& v) { return v.outcome == policy::Outcome::Fail; });
  REQUIRE(failed != r.report.verdicts.end());
  failed->message = "see [docs](javascript:alert(1)) and <a href=\"javascript:x\">here</a> @everyone";
  const std::string md = audit::to_markdown(r.report);
  CHECK(md.find("[docs](") == std::string::npos);  // only the escaped \[docs\] below, which links nowhere
  CHECK(md.find("<a href") == std::string::npos);
  CHECK(md.find("@everyone") == std::string::npos);
  CHECK(md.find("see \\[docs\\](javascript:alert(1)) and &lt;a href=\"javascript:x\"&gt;here&lt;/a&gt; "
                "@\u200beveryone") != std::string::npos);
}

TEST_CASE("the HIPAA view lists covered controls with status and the controls no policy covers") {
  Run r = run("blueprints/invalid/policy-hipaa-gaps.yaml");
  const auto& hipaa = framework(r.report, "hipaa");
  CHECK(hipaa.selected);
  // 164.312(b) audit controls: HIPAA-AUD-002 fails on the one-year retention.
  const auto& audit_ctl = control(hipaa, "164.312(b)");
  CHECK(audit_ctl.status == audit::ControlStatus::Fail);
  CHECK(std::find(audit_ctl.policies.begin(), audit_ctl.policies.end(), "HIPAA-AUD-002") != audit_ctl.policies.end());
  // Sub-paragraphs cited by policies count for their standard.
  CHECK(!control(hipaa, "164.312(a)(1)").policies.empty());
  // Administrative safeguards no policy covers are listed as gaps.
  const auto& training = control(hipaa, "164.308(a)(5)");
  CHECK(training.status == audit::ControlStatus::NotCovered);
  CHECK(training.policies.empty());
  CHECK(training.title == "Security awareness and training");
  // SOC 2 policies did not run for a hipaa-only blueprint: not evaluated, not passing.
  const auto& soc2 = framework(r.report, "soc2");
  CHECK_FALSE(soc2.selected);
  int not_evaluated = 0;
  for (const auto& c : soc2.controls) {
    INFO(c.id);
    // A framework the blueprint does not select claims nothing: no control passes, even one
    // only the ml pack's policies (which ran) cover.
    CHECK(c.status != audit::ControlStatus::Pass);
    CHECK(c.status != audit::ControlStatus::Partial);
    CHECK(c.status != audit::ControlStatus::NotApplicable);
    for (const auto& id : c.not_evaluated) CHECK(r.report.find(id) == nullptr);  // they did not run
    if (c.status == audit::ControlStatus::NotEvaluated) not_evaluated++;
  }
  CHECK(not_evaluated > 0);
}

TEST_CASE("HIPAA implementation specifications roll up under their standard, on the real control list") {
  // Policies citing only implementation specifications ("(2)(...)") must count for the standards
  // numbered "(1)" that head them in policies/frameworks/hipaa.yaml, not become untitled extra rows.
  Run r = run("blueprints/examples/regulated.yaml");
  policy::Evaluation ev;
  auto add = [&](const std::string& id, const std::vector<std::string>& cites) {
    policy::PolicyInfo p;
    p.id = id;
    p.title = id;
    p.severity = "high";
    p.enforcement = "mandatory";
    p.pack = "hipaa";
    p.controls["hipaa"] = cites;
    ev.policies.push_back(p);
    policy::Verdict v;
    v.policy = id;
    v.outcome = policy::Outcome::Pass;
    v.message = "evidence of " + id;
    ev.verdicts.push_back(v);
  };
  add("T-ENC", {"164.312(a)(2)(iv)"});
  add("T-DOC", {"164.316(b)(2)(i)"});
  add("T-INT", {"164.312(c)(2)"});
  add("T-TX", {"164.312(e)(2)(ii)"});
  add("T-BAK", {"164.308(a)(7)(ii)(A)"});
  add("T-DEV", {"164.310(d)(2)(iv)"});
  add("T-BA", {"164.308(b)(3)"});
  audit::ReportInput ri;
  ri.blueprint = &r.blueprint;
  ri.evaluation = &ev;
  ri.today = "2026-12-02";
  ri.generated_at = "2026-12-02T14:00:00Z";
  ri.catalogs = *audit::load_frameworks({"policies"});
  audit::Report rep = audit::build_report(ri);
  const auto& hipaa = framework(rep, "hipaa");
  for (const auto& c : hipaa.controls) {
    INFO(c.id);
    CHECK(c.in_catalog);  // no extra, untitled rows
    CHECK_FALSE(c.title.empty());
  }
  using V = std::vector<std::string>;
  CHECK(control(hipaa, "164.312(a)(1)").policies == V{"T-ENC"});
  // Encryption (iv) alone proves part of access control: (i)-(iii) have no evidence.
  CHECK(control(hipaa, "164.312(a)(1)").status == audit::ControlStatus::Partial);
  std::vector<std::string> missing;
  for (const auto& s : control(hipaa, "164.312(a)(1)").missing) missing.push_back(s.id + (s.required ? " R" : " A"));
  CHECK(missing == V{"164.312(a)(2)(i) R", "164.312(a)(2)(ii) R", "164.312(a)(2)(iii) A"});
  // 164.308(b)(1) has one specification, (b)(3), and T-BA cites it.
  CHECK(control(hipaa, "164.308(b)(1)").status == audit::ControlStatus::Pass);
  CHECK(control(hipaa, "164.316(b)(1)").policies == V{"T-DOC"});
  CHECK(control(hipaa, "164.312(c)(1)").policies == V{"T-INT"});
  CHECK(control(hipaa, "164.312(e)(1)").policies == V{"T-TX"});
  CHECK(control(hipaa, "164.308(a)(7)").policies == V{"T-BAK"});
  CHECK(control(hipaa, "164.310(d)(1)").policies == V{"T-DEV"});
  CHECK(control(hipaa, "164.308(b)(1)").policies == V{"T-BA"});
  // In 164.308(a) every (a)(N) is a standard of its own: (a)(7)'s specification is not (a)(1)'s.
  CHECK(control(hipaa, "164.308(a)(1)").policies.empty());
  CHECK(control(hipaa, "164.308(a)(2)").policies.empty());
  std::string html = audit::to_html(rep);
  CHECK(html.find("<b>164.312(a)(2)(iv)</b>") == std::string::npos);
  CHECK(html.find("<b>164.312(a)(1)</b> Access control") != std::string::npos);
}

TEST_CASE("the real HIPAA policies land on catalog controls only") {
  Run r = run("blueprints/examples/regulated.yaml");
  const auto& hipaa = framework(r.report, "hipaa");
  for (const auto& c : hipaa.controls) {
    INFO(c.id);
    CHECK(c.in_catalog);
    CHECK_FALSE(c.title.empty());
  }
  // 164.312(c)(1) integrity is evidenced by HIPAA-INT-001, but not (c)(2)'s mechanism to
  // authenticate ePHI (checksums, signatures), which no policy checks: partial.
  const auto& integrity = control(hipaa, "164.312(c)(1)");
  CHECK(std::find(integrity.policies.begin(), integrity.policies.end(), "HIPAA-INT-001") != integrity.policies.end());
  CHECK(integrity.status == audit::ControlStatus::Partial);
  REQUIRE(integrity.missing.size() == 1);
  CHECK(integrity.missing[0].id == "164.312(c)(2)");
}

TEST_CASE("the HIPAA view of a blueprint that does not select HIPAA shows no control passing from skipped policies") {
  Run r = run("blueprints/examples/cluster.yaml");  // compliance: [soc2]
  audit::Report hipaa = r.report;
  REQUIRE(audit::restrict_to_framework(hipaa, "hipaa").ok());
  const auto& f = framework(hipaa, "hipaa");
  CHECK_FALSE(f.selected);
  int not_evaluated = 0;
  for (const auto& c : f.controls) {
    INFO(c.id);
    if (c.not_evaluated.empty()) continue;
    CHECK(c.status != audit::ControlStatus::Pass);
    if (c.status == audit::ControlStatus::NotEvaluated) not_evaluated++;
  }
  CHECK(not_evaluated > 0);
  // Contingency planning: ML-BAK-001 and SOC2-ENC-002 ran and passed, HIPAA-BAK-001 was skipped: not evaluated.
  const auto& contingency = control(f, "164.308(a)(7)");
  CHECK(std::find(contingency.not_evaluated.begin(), contingency.not_evaluated.end(), "HIPAA-BAK-001") !=
        contingency.not_evaluated.end());
  CHECK(contingency.status == audit::ControlStatus::NotEvaluated);
  std::string html = audit::to_html(hipaa);
  CHECK(html.find("not evaluated: the hipaa pack is not selected by metadata.compliance") != std::string::npos);
  CHECK(html.find("<span class=\"cell pass\" title=\"Contingency plan") == std::string::npos);
  std::string md = audit::to_markdown(hipaa);
  CHECK(md.find("`HIPAA-BAK-001` (not evaluated)") != std::string::npos);
  nlohmann::json j = audit::to_json(hipaa);
  CHECK(j["summary"]["policy_outcomes"]["not_evaluated"].get<int>() == static_cast<int>(hipaa.skipped.size()));
}

TEST_CASE("controls whose policies pass but leave a required specification unchecked are partial, with it listed") {
  // Issue 31, item 11: regulated.yaml selects hipaa and gdpr; each control below passed before on
  // the policies it has, though a specification its standard requires has no evidence.
  Run r = run("blueprints/examples/regulated.yaml");
  CHECK_FALSE(r.eval.blocked());
  auto missing = [](const audit::ControlView& c) {
    std::vector<std::string> out;
    for (const auto& s : c.missing) out.push_back(s.id);
    return out;
  };
  using V = std::vector<std::string>;
  const auto& hipaa = framework(r.report, "hipaa");
  // Risk analysis, risk management, sanctions and activity review are procedures no blueprint
  // shows; keeping audit logs (HIPAA-AUD-002) is not reviewing them, so nothing evidences the
  // standard (it was partial on retention alone before issue 31's citation review).
  CHECK(control(hipaa, "164.308(a)(1)").status == audit::ControlStatus::NotCovered);
  CHECK(control(hipaa, "164.308(a)(1)").policies.empty());
  CHECK(missing(control(hipaa, "164.308(a)(1)")) ==
        V{"164.308(a)(1)(ii)(A)", "164.308(a)(1)(ii)(B)", "164.308(a)(1)(ii)(C)", "164.308(a)(1)(ii)(D)"});
  // The data backup plan rests on HIPAA-BAK-001 and the restore tests on HIPAA-BAK-002: encrypting
  // the copies (HIPAA-ENC-002, SOC2-ENC-002) and backing up checkpoint tiers (ML-BAK-*) are not it.
  CHECK(control(hipaa, "164.308(a)(7)").policies == V{"HIPAA-BAK-001", "HIPAA-BAK-002"});
  // Encryption and unique IDs are checked; emergency access (R) and automatic logoff (A) are not.
  CHECK(control(hipaa, "164.312(a)(1)").status == audit::ControlStatus::Partial);
  CHECK(missing(control(hipaa, "164.312(a)(1)")) == V{"164.312(a)(2)(ii)", "164.312(a)(2)(iii)"});
  CHECK(control(hipaa, "164.312(a)(1)").missing[0].required);
  // 164.314: the clouds' BAAs are recorded (HIPAA-BAA-001), subcontractor terms are not checked.
  CHECK(control(hipaa, "164.314(a)(1)").status == audit::ControlStatus::Partial);
  CHECK(control(hipaa, "164.314(a)(1)").policies == V{"HIPAA-BAA-001"});
  CHECK(control(hipaa, "164.308(b)(1)").status == audit::ControlStatus::Pass);
  CHECK(control(hipaa, "164.314(b)(1)").status == audit::ControlStatus::NotCovered);
  const auto& gdpr = framework(r.report, "gdpr");
  // Art. 5: encryption (1)(f) and retention (1)(e) are not the other principles.
  CHECK(control(gdpr, "Art.5").status == audit::ControlStatus::Partial);
  CHECK(missing(control(gdpr, "Art.5")) == V{"Art.5(1)(a)", "Art.5(1)(b)", "Art.5(1)(c)", "Art.5(1)(d)", "Art.5(2)"});
  // Art. 32's four paragraphs each have a policy: pass.
  CHECK(control(gdpr, "Art.32").status == audit::ControlStatus::Pass);
  // Nothing leaves the EU/EEA: Chapter V does not apply, it does not pass.
  for (const char* art : {"Art.44", "Art.45", "Art.46"}) {
    INFO(art);
    CHECK(control(gdpr, art).status == audit::ControlStatus::NotApplicable);
  }
  // Issue 31, item 13: the articles the packs claim to cover are listed, covered or not.
  CHECK(control(gdpr, "Art.9").status == audit::ControlStatus::NotCovered);
  CHECK(control(gdpr, "Art.28").status == audit::ControlStatus::Partial);  // DPAs recorded; 28(1) guarantees not
  CHECK(control(gdpr, "Art.35").status == audit::ControlStatus::Partial);  // a DPIA recorded; its content (7) not
  const auto& soc2 = framework(r.report, "soc2");
  // Confidentiality: every tier is classified (C1.1) and its confidential object tiers expire or
  // hold pruned backup copies (C1.2): both pass on their policies, which the packs lacked before.
  CHECK(control(soc2, "C1.1").status == audit::ControlStatus::Pass);
  CHECK(control(soc2, "C1.1").policies == V{"SOC2-CONF-001"});
  CHECK(control(soc2, "C1.2").status == audit::ControlStatus::Pass);
  CHECK(control(soc2, "C1.2").policies == V{"SOC2-CONF-002"});
  // The JSON lists what is missing under the control.
  nlohmann::json j = audit::to_json(r.report);
  bool seen = false;
  for (const auto& f : j["frameworks"])
    for (const auto& c : f["controls"])
      if (f["name"] == "hipaa" && c["id"] == "164.312(a)(1)") {
        seen = true;
        CHECK(c["status"] == "partial");
        CHECK(c["missing"][0] == nlohmann::json({{"id", "164.312(a)(2)(ii)"}, {"title", "Emergency access procedure"},
                                                 {"required", true}}));
      }
  CHECK(seen);
}

TEST_CASE("a policy with nothing to check says not applicable, and its controls never pass on it") {
  // Issue 31, item 12: lab.yaml has no backups and grants no roles; selected for SOC 2.
  test::TempDir dir;
  auto text = read_file("blueprints/examples/lab.yaml");
  REQUIRE(text.ok());
  std::string yaml = *text;
  yaml.replace(yaml.find("  owner: ml-platform\n"), 20, "  owner: ml-platform\n  compliance: [soc2]\n");
  Run r = run(dir.write("lab.yaml", yaml));
  std::map<std::string, std::set<std::string>> outcomes;
  for (const auto& v : r.report.verdicts) outcomes[v.policy].insert(policy::to_string(v.outcome));
  using S = std::set<std::string>;
  CHECK(outcomes["SOC2-BAK-001"] == S{"not_applicable"});
  CHECK(outcomes["SOC2-ENC-002"] == S{"not_applicable"});
  CHECK(outcomes["SOC2-RBAC-001"] == S{"not_applicable"});
  CHECK(outcomes["SOC2-RBAC-002"] == S{"not_applicable"});
  CHECK(outcomes["SOC2-ENC-001"] == S{"pass"});  // the scratch tier is encrypted: evidence
  const auto& soc2 = framework(r.report, "soc2");
  REQUIRE(soc2.selected);
  // With zero backups, A1.2 and A1.3 do not pass; with zero roles, CC6.3 does not pass.
  CHECK(control(soc2, "A1.3").status == audit::ControlStatus::NotApplicable);
  CHECK(control(soc2, "A1.2").status == audit::ControlStatus::NotApplicable);
  CHECK(control(soc2, "CC6.3").status == audit::ControlStatus::NotApplicable);
  // CC6.1 has encryption evidence beside the role policies that had nothing to check: pass.
  CHECK(control(soc2, "CC6.1").status == audit::ControlStatus::Pass);
  auto po = r.report.policy_outcomes();
  CHECK(po["not_applicable"] >= 4);
  nlohmann::json j = audit::to_json(r.report);
  CHECK(j["summary"]["not_applicable"].get<int>() == r.report.counts()["not_applicable"]);
}

TEST_CASE("a SOC 2-only blueprint audited for HIPAA shows no HIPAA control passing") {
  // Issue 31, item 12: SOC 2 policies that ran cite HIPAA paragraphs too; before, their passes
  // made HIPAA controls pass for a blueprint that claims nothing of HIPAA.
  test::TempDir dir;
  auto text = read_file("blueprints/examples/regulated.yaml");
  REQUIRE(text.ok());
  std::string yaml = *text;
  yaml.replace(yaml.find("compliance: [soc2, hipaa, gdpr]"), 31, "compliance: [soc2]");
  Run r = run(dir.write("soc2-only.yaml", yaml));
  audit::Report rep = r.report;
  REQUIRE(audit::restrict_to_framework(rep, "hipaa").ok());
  const auto& hipaa = framework(rep, "hipaa");
  CHECK_FALSE(hipaa.selected);
  int from_soc2 = 0;
  for (const auto& c : hipaa.controls) {
    INFO(c.id << " " << audit::to_string(c.status));
    CHECK(c.status != audit::ControlStatus::Pass);
    CHECK(c.status != audit::ControlStatus::Partial);
    CHECK(c.status != audit::ControlStatus::NotApplicable);
    for (const auto& id : c.policies)
      if (id.rfind("SOC2-", 0) == 0) from_soc2++;
  }
  CHECK(from_soc2 > 0);  // SOC 2 policies ran and cite HIPAA controls; still nothing passes
  CHECK(control(hipaa, "164.312(b)").status == audit::ControlStatus::NotEvaluated);
  std::string md = audit::to_markdown(rep);
  CHECK(md.find("does not list `hipaa`: nothing here is claimed, so no control passes") != std::string::npos);
  CHECK(md.find("| pass |") == std::string::npos);
}

TEST_CASE("every verdict shown as evidence has text, and the HTML summary keeps policies and verdicts apart") {
  for (const std::string file : {"blueprints/examples/regulated.yaml", "blueprints/examples/cluster.yaml",
                                 "blueprints/examples/lab.yaml", "blueprints/invalid/policy-hipaa-gaps.yaml"}) {
    INFO(file);
    Run r = run(file);
    for (const auto& v : r.report.verdicts) {
      INFO(v.policy << " " << v.address);
      CHECK_FALSE(v.message.empty());
    }
    std::string html = audit::to_html(r.report);
    CHECK(html.find("<td></td></tr>") == std::string::npos);  // no empty evidence cell ends a row
    size_t summary = html.find("id=\"summary\"");
    REQUIRE(summary != std::string::npos);
    auto po = r.report.policy_outcomes();
    auto c = r.report.counts();
    CHECK(html.find("<tr><th>Policies</th><td>" + std::to_string(r.report.policies.size() + r.report.skipped.size()) +
                    "</td><td>" + std::to_string(po["pass"]) + "</td>", summary) != std::string::npos);
    CHECK(html.find("<tr><th>Verdicts</th><td>" + std::to_string(r.report.verdicts.size()) + "</td><td>" +
                    std::to_string(c["pass"]) + "</td>", summary) != std::string::npos);
  }
}

TEST_CASE("restricting to a framework keeps its policies and rejects unknown names") {
  Run r = run("blueprints/invalid/policy-hipaa-gaps.yaml");
  audit::Report hipaa = r.report;
  REQUIRE(audit::restrict_to_framework(hipaa, "hipaa").ok());
  CHECK(hipaa.frameworks.size() == 1);
  for (const auto& p : hipaa.policies) CHECK(p.controls.count("hipaa") == 1);
  for (const auto& v : hipaa.verdicts) CHECK(hipaa.find(v.policy) != nullptr);
  std::string md = audit::to_markdown(hipaa);
  CHECK(md.find("### HIPAA Security Rule (45 CFR Part 164, Subpart C)") != std::string::npos);
  CHECK(md.find("| 164.308(a)(5) | Security awareness and training | not_covered | no evidence: 164.308(a)(5)(ii)(A) "
                "Security reminders<br>") != std::string::npos);
  CHECK(md.find("| 164.308(a)(8) | Evaluation | not_covered |  |") != std::string::npos);
  audit::Report bad = r.report;
  auto st = audit::restrict_to_framework(bad, "pci");
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message == "unknown framework 'pci'; frameworks with policies or a control list: gdpr, hipaa, soc2");
}

TEST_CASE("HTML is one self-contained page with the control matrix, failures and provenance") {
  Run r = run("blueprints/invalid/policy-hipaa-gaps.yaml", {records_tls_waiver()});
  std::string html = audit::to_html(r.report);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("<span class=\"cell fail\" title=\"Audit controls — fail\">164.312(b)</span>") != std::string::npos);
  CHECK(html.find("<span class=\"cell not_covered\" title=\"Security awareness and training — not_covered\">"
                  "164.308(a)(5)</span>") != std::string::npos);
  CHECK(html.find("<code>blueprints/invalid/policy-hipaa-gaps.yaml:22</code>") != std::string::npos);
  CHECK(html.find("id=\"provenance\"") != std::string::npos);
  CHECK(html.find("until Q1 &lt;migration&gt;") != std::string::npos);
}

TEST_CASE("report targets parse as FORMAT:FILE") {
  auto t = audit::parse_report_target("sarif:out/plinth.sarif");
  REQUIRE(t.ok());
  CHECK(*t == audit::ReportTarget{"sarif", "out/plinth.sarif"});
  CHECK(audit::parse_report_target("md:-")->format == "markdown");
  CHECK(audit::parse_report_target("pdf:x").error().message ==
        "--report 'pdf:x': unknown format 'pdf'; use one of json, sarif, junit, markdown, html");
  CHECK(audit::parse_report_target("sarif").error().message ==
        "--report 'sarif': expected FORMAT:FILE, e.g. sarif:plinth.sarif or markdown:-");
}

TEST_CASE("verdict changes between two evaluations: failures added and fixed") {
  Run before = run("blueprints/examples/regulated.yaml");
  Run after = run("blueprints/invalid/policy-hipaa-gaps.yaml");
  policy::Evaluation base = before.eval, head = after.eval;
  auto d = audit::compare_verdicts(base, head);
  REQUIRE(d.added.size() == 4);
  CHECK(d.added[0].policy == "HIPAA-AUD-002");
  CHECK(d.fixed.empty());
  auto back = audit::compare_verdicts(head, base);
  CHECK(back.added.empty());
  CHECK(back.fixed.size() == 4);
  std::string text = audit::describe_change("main", std::string(40, 'a'), plan::Plan{}, back);
  CHECK(text.find("Compared with main (aaaaaaaaaaaa): 0 resource(s) added, 0 changed, 0 removed.\n"
                  "Policy verdicts: this change adds 0 failure(s), fixes 4.\n") == 0);
}

TEST_CASE("SARIF reports are clean under Microsoft's SARIF Multitool") {
  std::string why;
  std::string tool = multitool(why);
  if (tool.empty()) {
    WARN("SKIPPED: cannot validate SARIF: " << why);
    // Skippable only when npm truly cannot reach the registry.
    auto ping = test::run_program({"npm", "ping"});
    REQUIRE(ping.exit_code != 0);
    return;
  }
  for (const std::string bp : {"blueprints/examples/regulated.yaml", "blueprints/invalid/policy-hipaa-gaps.yaml"}) {
    std::string sarif = output_dir() + "/" + fs::path(bp).stem().string() + ".sarif";
    std::ofstream(sarif) << audit::to_sarif(run(bp, {records_tls_waiver()}).report).dump(2);
    std::string log = output_dir() + "/" + fs::path(bp).stem().string() + ".validation.sarif";
    fs::remove(log);
    auto v = test::run_program({tool, "validate", sarif, "-o", log});
    INFO(v.out << v.err);
    CHECK(v.exit_code == 0);
    auto results = nlohmann::json::parse(test::slurp(log))["runs"][0]["results"];
    std::string problems;
    for (const auto& res : results)
      if (res.value("level", "warning") == "error" || res.value("level", "warning") == "warning")
        problems += res["ruleId"].get<std::string>() + ": " + res["message"].dump() + "\n";
    INFO("validator log " << log << "\n" << problems);
    CHECK(problems.empty());
  }
}

TEST_CASE("the HTML report renders in headless Chromium without console errors") {
  auto which = test::run_program({"sh", "-c", "command -v chromium"});
  INFO("chromium is missing: apt-get install chromium (.ci/setup installs it)");
  REQUIRE(which.exit_code == 0);
  std::string html = output_dir() + "/report.html";
  std::ofstream(html) << audit::to_html(run("blueprints/invalid/policy-hipaa-gaps.yaml", {records_tls_waiver()}).report);
  std::string png = output_dir() + "/report.png";
  auto r = test::render_in_chromium(html, png, 2000);
  INFO(r.shot.err);
  CHECK(r.shot.exit_code == 0);
  REQUIRE(fs::exists(png));
  CHECK(fs::file_size(png) > 20000);
  CHECK(r.shot.err.find("CONSOLE") == std::string::npos);
  CHECK(r.shot.err.find("Refused to") == std::string::npos);
  WARN("screenshot: " << png);
  const auto& d = r.dom;
  CHECK(d.exit_code == 0);
  CHECK(d.out.find("<h1>Plinth compliance report</h1>") != std::string::npos);
  CHECK(d.out.find("164.308(a)(5)</span>") != std::string::npos);
}

