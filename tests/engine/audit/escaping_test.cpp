// Hostile text in a report (a policy's message, a waiver's justification, a
// title) never breaks a report format or reaches a reader raw: malformed
// UTF-8 and terminal escapes are replaced or escaped by every writer.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "engine/audit/report.h"
#include "engine/blueprint/json.h"
#include "engine/blueprint/loader.h"
#include "engine/core/strings.h"
#include "engine/graph/expand.h"
#include "tests/support/run.h"

using namespace plinth;

namespace {

const std::string kHostile = "bad \xff\xfe bytes, \x1b[31mred\x1b[0m, \x1b]8;;http://evil.example\x07link, \xc2\x9b" "2J";

audit::Report hostile_report() {
  auto loaded = bp::load_files({"blueprints/invalid/policy-hipaa-gaps.yaml"});
  REQUIRE(loaded.ok());
  auto g = graph::expand(loaded.blueprint);
  REQUIRE(g.ok());
  plan::Plan p = plan::diff(g->resources, {});
  policy::Input in;
  in.blueprint = &loaded.blueprint;
  in.blueprint_json = bp::to_json(loaded.blueprint);
  in.resources = &g->resources;
  in.plan = &p;
  policy::Evaluation eval = policy::evaluate({"policies"}, in);
  audit::ReportInput ri;
  ri.blueprint = &loaded.blueprint;
  ri.evaluation = &eval;
  ri.today = "2026-12-02";
  ri.generated_at = "2026-12-02T14:00:00Z";
  audit::Report r = audit::build_report(ri);
  // Text that reaches a report from files Plinth does not control.
  REQUIRE(!r.verdicts.empty());
  bool failed = false;
  for (auto& v : r.verdicts) {
    v.message = kHostile;
    if (v.outcome == policy::Outcome::Fail && !failed) {
      failed = true;
      v.outcome = policy::Outcome::Waived;
      v.waiver_justification = kHostile;
      v.waiver_approver = "sec\xff@example.com";
    }
  }
  r.policies.front().title = kHostile;
  r.diagnostics.push_back({"POL022", Severity::Warning, kHostile, {"waivers\xff.yaml", 3, 5}, "", ""});
  return r;
}

void check_safe(const std::string& format, const std::string& text) {
  INFO(format);
  CHECK(valid_utf8(text));
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find("\xc2\x9b") == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
}

}  // namespace

TEST_CASE("malformed UTF-8 and ANSI escapes in report text leave every format well-formed and inert") {
  audit::Report r = hostile_report();
  for (const auto& format : audit::formats()) {
    auto text = audit::render(r, format);
    INFO(format);
    REQUIRE(text.ok());
    check_safe(format, *text);
  }
  auto json = nlohmann::json::parse(*audit::render(r, "json"));
  bool seen = false;
  for (const auto& v : json["verdicts"])
    if (v["message"] == "bad \xef\xbf\xbd\xef\xbf\xbd bytes, \\x1b[31mred\\x1b[0m, \\x1b]8;;http://evil.example\\x07link, "
                        "\\u009b2J")
      seen = true;
  CHECK(seen);
  auto sarif = nlohmann::json::parse(*audit::render(r, "sarif"));
  CHECK(sarif["runs"][0]["results"].size() > 0);

  test::TempDir dir;
  std::string xml = dir.write("r.xml", *audit::render(r, "junit"));
  auto parsed = test::run_program(
      {"/usr/bin/python3", "-c", "import sys,xml.etree.ElementTree as E; E.parse(sys.argv[1])", xml});
  INFO(parsed.err);
  CHECK(parsed.exit_code == 0);
  std::string md = *audit::render(r, "markdown");
  CHECK(md.find("\\x1b\\[31mred") != std::string::npos);  // visible, not interpreted ('[' escaped: no link)
}
