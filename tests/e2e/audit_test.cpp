// plinth audit and plan --report: every format from the example blueprints,
// checked by the tools that read them (SARIF Multitool, Chromium, xml.etree,
// jsonschema).
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/support/run.h"

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
  CHECK(md.out.find("| 164.308(a)(5) | Security awareness and training | not_covered |  |") != std::string::npos);
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
