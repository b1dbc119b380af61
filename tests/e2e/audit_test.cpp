// plinth audit and plan --report: every format from the example blueprints,
// checked by the tools that read them (SARIF Multitool, Chromium, xml.etree,
// jsonschema).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_audit {

namespace fs = std::filesystem;

namespace {

const std::string kRegulated = "blueprints/examples/regulated.yaml";
const std::string kGaps = "blueprints/invalid/policy-hipaa-gaps.yaml";

/// Audits `blueprint` against an empty state in `dir`.
test::RunResult audit(const TempDir& dir, const std::string& blueprint, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"audit", blueprint, "--state", dir.path() + "/none.state.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_plinth(args);
}

}  // namespace

TEST_CASE("plinth audit writes every format from the example blueprints") {
  TempDir dir;
  for (const std::string format : {"json", "sarif", "junit", "markdown", "html"}) {
    std::string out = dir.path() + "/report." + format;
    auto r = audit(dir, kRegulated, {"--format", format, "--output", out});
    INFO(format << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("wrote " + format + " report to " + out + "\n") != std::string::npos);
    CHECK(slurp(out).size() > 500);
  }
  auto json = nlohmann::json::parse(slurp(dir.path() + "/report.json"));
  CHECK(json["blueprint"]["name"] == "clinical-ml");
  CHECK(json["summary"]["fail"] == 0);
  CHECK(json["summary"]["blocked"] == false);
  CHECK(json["provenance"]["in_repository"] == true);
  auto schema = run_program({"python3", "-c",
                             "import json,sys,jsonschema\n"
                             "jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))\n",
                             "docs/audit-report.schema.json", dir.path() + "/report.json"});
  INFO(schema.err);
  CHECK(schema.exit_code == 0);
}

TEST_CASE("plinth audit exits 1 on a mandatory failure but still writes the report, 0 with --soft-fail") {
  TempDir dir;
  auto r = audit(dir, kGaps, {"--format", "json", "--output", dir.path() + "/r.json"});
  CHECK(r.exit_code == 1);
  auto json = nlohmann::json::parse(slurp(dir.path() + "/r.json"));
  CHECK(json["summary"]["mandatory_failures"] == 4);
  auto soft = audit(dir, kGaps, {"--format", "markdown", "--soft-fail"});
  CHECK(soft.exit_code == 0);
  CHECK(soft.out.rfind("## Plinth compliance report\n\n❌ **Blocked**: 4 mandatory failure(s)\n", 0) == 0);
  CHECK(soft.out.find("`storage.tier.records` | `blueprints/invalid/policy-hipaa-gaps.yaml:22`") != std::string::npos);
  auto bad = audit(dir, kGaps, {"--format", "pdf"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == "plinth audit: --format pdf: use one of json, sarif, junit, markdown, html\n");
}

TEST_CASE("plinth audit --framework hipaa lists covered and uncovered controls") {
  TempDir dir;
  auto r = audit(dir, kGaps, {"--format", "json", "--framework", "hipaa", "--soft-fail"});
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["framework_filter"] == "hipaa");
  REQUIRE(j["frameworks"].size() == 1);
  std::map<std::string, std::string> status;
  for (const auto& c : j["frameworks"][0]["controls"]) status[c["id"]] = c["status"];
  CHECK(status["164.312(b)"] == "fail");
  CHECK(status["164.308(a)(5)"] == "not_covered");
  CHECK(status["164.310(a)(1)"] == "not_covered");
  CHECK(status["164.312(e)(1)"] == "fail");
  for (const auto& p : j["policies"]) CHECK(p["controls"].contains("hipaa"));
  auto md = audit(dir, kGaps, {"--format", "markdown", "--framework", "hipaa", "--soft-fail"});
  CHECK(md.out.find("| 164.308(a)(5) | Security awareness and training | not_covered | no evidence: "
                    "164.308(a)(5)(ii)(A) Security reminders<br>") != std::string::npos);
  auto unknown = audit(dir, kGaps, {"--framework", "pci"});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("plinth audit: unknown framework 'pci'; frameworks with policies or a control list: gdpr, "
                         "hipaa, soc2\n") != std::string::npos);
}

TEST_CASE("plinth audit --framework hipaa on a blueprint that does not select HIPAA passes no control on skipped policies") {
  TempDir dir;
  auto r = audit(dir, "blueprints/examples/cluster.yaml", {"--format", "json", "--framework", "hipaa"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["frameworks"].size() == 1);
  CHECK(j["frameworks"][0]["selected"] == false);
  int not_evaluated = 0;
  for (const auto& c : j["frameworks"][0]["controls"]) {
    INFO(c.dump());
    CHECK(c["in_catalog"] == true);
    if (c["not_evaluated"].empty()) continue;
    CHECK(c["status"] != "pass");
    not_evaluated++;
  }
  CHECK(not_evaluated > 0);
  CHECK(j["summary"]["policy_outcomes"]["not_evaluated"].get<int>() > 0);
  auto html = audit(dir, "blueprints/examples/cluster.yaml", {"--format", "html", "--framework", "hipaa"});
  REQUIRE(html.exit_code == 0);
  CHECK(html.out.find("not evaluated: the hipaa pack is not selected by metadata.compliance") != std::string::npos);
  CHECK(html.out.find("</b> </td>") == std::string::npos);  // no untitled control rows
}

TEST_CASE("audit from the user's directory: partial and not covered where evidence is missing, nothing passes for "
          "a framework the blueprint does not select, a missing BAA fails",
          "[e2e][habits][audit]") {
  TempDir dir;
  const std::string regulated = slurp(source_dir() + "/" + kRegulated);
  dir.write("fleet/regulated.yaml", regulated);
  auto statuses = [](const nlohmann::json& j, const std::string& fw) {
    std::map<std::string, nlohmann::json> out;
    for (const auto& f : j["frameworks"])
      if (f["name"] == fw)
        for (const auto& c : f["controls"]) out[c["id"].get<std::string>()] = c;
    return out;
  };
  auto missing = [](const nlohmann::json& c) {
    std::vector<std::string> ids;
    for (const auto& s : c.value("missing", nlohmann::json::array())) ids.push_back(s["id"]);
    return ids;
  };
  using V = std::vector<std::string>;

  // regulated.yaml selects soc2, hipaa and gdpr and passes every mandatory policy.
  auto r = run_plinth({"audit", "fleet/regulated.yaml", "--framework", "hipaa", "--format", "json"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto hipaa = statuses(nlohmann::json::parse(r.out), "hipaa");
  CHECK(hipaa["164.308(a)(1)"]["status"] == "not_covered");  // no blueprint shows a risk analysis or log review
  CHECK(missing(hipaa["164.308(a)(1)"]) ==
        V{"164.308(a)(1)(ii)(A)", "164.308(a)(1)(ii)(B)", "164.308(a)(1)(ii)(C)", "164.308(a)(1)(ii)(D)"});
  CHECK(hipaa["164.312(a)(1)"]["status"] == "partial");
  CHECK(missing(hipaa["164.312(a)(1)"]) == V{"164.312(a)(2)(ii)", "164.312(a)(2)(iii)"});
  CHECK(hipaa["164.308(a)(5)"]["status"] == "not_covered");
  CHECK(hipaa["164.314(a)(1)"]["status"] == "partial");
  CHECK(hipaa["164.314(a)(1)"]["policies"] == nlohmann::json::array({"HIPAA-BAA-001"}));
  // The agreement is recorded, its terms are not read: both specifications lack evidence.
  CHECK(missing(hipaa["164.314(a)(1)"]) == V{"164.314(a)(2)(i)", "164.314(a)(2)(iii)"});
  CHECK(hipaa["164.312(b)"]["status"] == "pass");
  auto md = run_plinth({"audit", "fleet/regulated.yaml", "--framework", "hipaa", "--format", "markdown"}, dir.path());
  CHECK(md.exit_code == 0);
  CHECK(contains(md.out, "| 164.312(a)(1) | Access control | partial | "));
  CHECK(contains(md.out, "no evidence: 164.312(a)(2)(ii) Emergency access procedure (required)"));

  auto all = run_plinth({"audit", "fleet/regulated.yaml", "--format", "json"}, dir.path());
  REQUIRE(all.exit_code == 0);
  auto gdpr = statuses(nlohmann::json::parse(all.out), "gdpr");
  CHECK(gdpr["Art.45"]["status"] == "not_applicable");  // nothing leaves the EU/EEA
  CHECK(gdpr["Art.5"]["status"] == "partial");
  CHECK(gdpr["Art.9"]["status"] == "not_covered");
  CHECK(gdpr["Art.35"]["policies"] == nlohmann::json::array({"GDPR-DPIA-001"}));

  // The same fleet claiming SOC 2 only, audited for HIPAA: nothing passes.
  std::string soc2 = regulated;
  soc2.replace(soc2.find("compliance: [soc2, hipaa, gdpr]"), 31, "compliance: [soc2]");
  dir.write("fleet/soc2-only.yaml", soc2);
  auto only = run_plinth({"audit", "fleet/soc2-only.yaml", "--framework", "hipaa", "--format", "json"}, dir.path());
  INFO(only.err);
  REQUIRE(only.exit_code == 0);
  auto j = nlohmann::json::parse(only.out);
  CHECK(j["frameworks"][0]["selected"] == false);
  int soc2_cited = 0;
  for (const auto& [id, c] : statuses(j, "hipaa")) {
    INFO(id << " " << c.dump());
    CHECK(c["status"] != "pass");
    CHECK(c["status"] != "partial");
    CHECK(c["status"] != "not_applicable");
    for (const auto& p : c["policies"]) soc2_cited += p.get<std::string>().rfind("SOC2-", 0) == 0;
  }
  CHECK(soc2_cited > 0);

  // No BAA recorded with AWS, whose S3 archive receives PHI: HIPAA-BAA-001 blocks, at the tier's line.
  std::string no_baa = regulated;
  const std::string line = "    - {provider: aws, kind: baa, reference: \"AWS BAA via AWS Artifact, accepted 2026-02-10\"}\n";
  REQUIRE(contains(no_baa, line));
  no_baa.erase(no_baa.find(line), line.size());
  dir.write("fleet/no-baa.yaml", no_baa);
  auto blocked = run_plinth({"audit", "fleet/no-baa.yaml", "--format", "json"}, dir.path());
  INFO(blocked.err);
  CHECK(blocked.exit_code == 1);
  bool found = false;
  const auto report = nlohmann::json::parse(blocked.out);
  for (const auto& v : report["verdicts"])
    if (v["policy"] == "HIPAA-BAA-001" && v["outcome"] == "fail") {
      found = true;
      CHECK(v["address"] == "storage.tier.pii-archive");
      CHECK(v["location"]["file"] == "fleet/no-baa.yaml");
      CHECK(contains(v["message"].get<std::string>(), "no business associate agreement with aws"));
    }
  CHECK(found);
}

TEST_CASE("plinth plan --report writes several reports from the same run") {
  TempDir dir;
  auto r = run_plinth({"plan", kRegulated, "--state", dir.path() + "/s.json", "--refresh=false", "--report",
                       "json:" + dir.path() + "/r.json", "--report", "junit:" + dir.path() + "/r.xml", "--report",
                       "markdown:" + dir.path() + "/r.md"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  auto j = nlohmann::json::parse(slurp(dir.path() + "/r.json"));
  CHECK(j["plan"]["create"].get<int>() > 0);
  auto xml = run_program({"python3", "-c", "import sys,xml.etree.ElementTree as E; E.parse(sys.argv[1])",
                          dir.path() + "/r.xml"});
  CHECK(xml.exit_code == 0);
  CHECK(slurp(dir.path() + "/r.md").find("✅ **No mandatory failures**") != std::string::npos);
  auto bad = run_plinth({"plan", kRegulated, "--state", dir.path() + "/s.json", "--refresh=false", "--report", "pdf:x"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("plinth plan: --report 'pdf:x': unknown format 'pdf'; use one of json, sarif, junit, markdown, "
                     "html\n") != std::string::npos);
}

}  // namespace plinth::test::e2e_audit
