// JUnit XML writer: the Ant/Jenkins JUnit schema most CI dashboards read.
#include <map>

#include "engine/audit/report.h"
#include "engine/core/strings.h"

namespace plinth::audit {

std::string to_junit(const Report& r) {
  struct Case {
    std::string xml;
    bool failure = false, error = false, skipped = false;
  };
  std::map<std::string, std::vector<Case>> suites;  // pack -> cases
  for (const auto& v : r.verdicts) {
    const auto* p = r.find(v.policy);
    if (!p) continue;
    std::string pack = p->pack.empty() ? "custom" : p->pack;
    Case c;
    std::string where = v.loc.known() ? r.repo_path(v.loc.file) + ":" + std::to_string(v.loc.line) : "";
    std::string name = v.policy + (v.address.empty() ? "" : " " + v.address);
    c.xml = "    <testcase classname=\"" + xml_escape(pack + "." + v.policy) + "\" name=\"" + xml_escape(name) +
            "\" time=\"0\"";
    if (v.loc.known())
      c.xml += " file=\"" + xml_escape(r.repo_path(v.loc.file)) + "\" line=\"" + std::to_string(v.loc.line) + "\"";
    std::string detail = p->title + "\nseverity: " + p->severity + ", enforcement: " + p->enforcement +
                         (where.empty() ? "" : "\nat " + where);
    switch (v.outcome) {
      case policy::Outcome::Pass:
        c.xml += "/>\n";
        break;
      case policy::Outcome::Fail:
        c.failure = true;
        c.xml += ">\n      <failure message=\"" + xml_escape(v.message) + "\" type=\"" +
                 xml_escape(p->enforcement + "/" + p->severity) + "\">" + xml_escape(v.message + "\n" + detail) +
                 "</failure>\n    </testcase>\n";
        break;
      case policy::Outcome::Error:
        c.error = true;
        c.xml += ">\n      <error message=\"" + xml_escape("policy could not run: " + v.message) +
                 "\" type=\"policy-error\">" + xml_escape(v.message + "\n" + detail) + "</error>\n    </testcase>\n";
        break;
      case policy::Outcome::NotApplicable:
        c.skipped = true;
        c.xml += ">\n      <skipped message=\"" + xml_escape("not applicable: " + v.message) + "\"/>\n    </testcase>\n";
        break;
      case policy::Outcome::Waived:
        c.skipped = true;
        c.xml += ">\n      <skipped message=\"" +
                 xml_escape("waived: " + v.waiver_justification + " (approved by " + v.waiver_approver + ")") +
                 "\"/>\n      <system-out>" + xml_escape(v.message + "\n" + detail) + "</system-out>\n    </testcase>\n";
        break;
    }
    suites[pack].push_back(std::move(c));
  }

  // The blueprint's validation findings as a suite of its own: each error a
  // failing testcase at its file:line, each warning a passing one with the
  // finding in system-out.
  for (const auto& d : r.validation) {
    Case c;
    std::string name = d.code + (d.address.empty() ? "" : " " + d.address) +
                       (d.loc.known() ? " " + r.repo_path(d.loc.file) + ":" + std::to_string(d.loc.line) : "");
    c.xml = "    <testcase classname=\"" + xml_escape("validation." + d.code) + "\" name=\"" + xml_escape(name) +
            "\" time=\"0\"";
    if (d.loc.known())
      c.xml += " file=\"" + xml_escape(r.repo_path(d.loc.file)) + "\" line=\"" + std::to_string(d.loc.line) + "\"";
    std::string detail = d.message + (d.hint.empty() ? "" : "\nhint: " + d.hint) +
                         (d.loc.known() ? "\nat " + d.loc.str() : "");
    if (d.severity == Severity::Error) {
      c.failure = true;
      c.xml += ">\n      <failure message=\"" + xml_escape(d.message) + "\" type=\"" + xml_escape(d.code) + "\">" +
               xml_escape(detail) + "</failure>\n    </testcase>\n";
    } else {
      c.xml += ">\n      <system-out>" + xml_escape(std::string(to_string(d.severity)) + ": " + detail) +
               "</system-out>\n    </testcase>\n";
    }
    suites["validation"].push_back(std::move(c));
  }

  int tests = 0, failures = 0, errors = 0, skipped = 0;
  std::string body;
  int id = 0;
  for (const auto& [pack, cases] : suites) {
    int t = 0, f = 0, e = 0, s = 0;
    for (const auto& c : cases) {
      t++;
      f += c.failure;
      e += c.error;
      s += c.skipped;
    }
    tests += t;
    failures += f;
    errors += e;
    skipped += s;
    body += "  <testsuite id=\"" + std::to_string(id++) + "\" name=\"" + xml_escape(pack) + "\" tests=\"" +
            std::to_string(t) + "\" failures=\"" + std::to_string(f) + "\" errors=\"" + std::to_string(e) +
            "\" skipped=\"" + std::to_string(s) + "\" time=\"0\" timestamp=\"" + xml_escape(r.generated_at) + "\">\n";
    for (const auto& c : cases) body += c.xml;
    body += "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" +
         xml_escape("plinth audit " + r.blueprint_name) + "\" tests=\"" + std::to_string(tests) + "\" failures=\"" +
         std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" +
         std::to_string(skipped) + "\" time=\"0\" timestamp=\"" + xml_escape(r.generated_at) + "\">\n" + body +
         "</testsuites>\n";
}

}  // namespace plinth::audit
