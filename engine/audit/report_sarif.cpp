// SARIF 2.1.0 writer (OASIS sarif-v2.1.0), shaped for GitHub code scanning:
// locations relative to %SRCROOT%, rule help, security-severity, waived
// failures as accepted suppressions.
#include <filesystem>

#include "engine/audit/report.h"
#include "engine/core/hash.h"

namespace plinth::audit {
namespace {

/// SARIF level for a policy's severity.
std::string level_for(const std::string& severity) {
  if (severity == "critical" || severity == "high") return "error";
  if (severity == "medium") return "warning";
  return "note";
}

/// GitHub's security-severity score (0.0-10.0) for a severity.
std::string security_severity(const std::string& severity) {
  if (severity == "critical") return "9.5";
  if (severity == "high") return "8.0";
  if (severity == "medium") return "5.5";
  return "3.0";
}

/// "SOC2-ENC-001" -> "Soc2Enc001": a rule name in the PascalCase SARIF expects.
std::string rule_name(const std::string& id) {
  std::string out;
  bool upper = true;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                 : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    upper = false;
  }
  return out;
}

/// SARIF messages are sentences: end them with a period.
std::string sentence(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
  if (s.empty()) return "(no message).";
  if (s.back() != '.' && s.back() != '!' && s.back() != '?') s += '.';
  return s;
}

std::string controls_text(const policy::PolicyInfo& p) {
  std::string out;
  for (const auto& [fw, ids] : p.controls)
    for (const auto& id : ids) out += (out.empty() ? "" : ", ") + fw + " " + id;
  return out;
}

nlohmann::json location(const Report& r, const SourceLoc& loc, const std::string& address) {
  SourceLoc where = loc;
  if (!where.known() && !r.files.empty()) where = {r.files.front().path, 1, 1};
  nlohmann::json l;
  if (where.known()) {
    nlohmann::json region = {{"startLine", std::max(1, where.line)}};
    if (where.column > 0) region["startColumn"] = where.column;
    l["physicalLocation"] = {{"artifactLocation", {{"uri", r.repo_path(where.file)}, {"uriBaseId", "%SRCROOT%"}}},
                             {"region", region}};
  }
  if (!address.empty()) l["logicalLocations"] = {{{"fullyQualifiedName", address}, {"kind", "resource"}}};
  return l;
}

}  // namespace

nlohmann::json to_sarif(const Report& r) {
  nlohmann::json rules = nlohmann::json::array();
  std::map<std::string, int> index;
  for (const auto& p : r.policies) {
    index[p.id] = static_cast<int>(rules.size());
    nlohmann::json tags = nlohmann::json::array({"compliance", p.pack.empty() ? "custom" : p.pack});
    for (const auto& [fw, ids] : p.controls)
      for (const auto& id : ids) tags.push_back(fw + ":" + id);
    std::string controls = controls_text(p);
    std::string help = p.description + (controls.empty() ? "" : "\nControls: " + controls) +
                       "\nEnforcement: " + p.enforcement + "; severity: " + p.severity +
                       ". Fix the resource, or accept the risk with a waiver in waivers.yaml.";
    std::string help_md = p.description + "\n\n" + (controls.empty() ? "" : "**Controls:** " + controls + "\n\n") +
                          "**Enforcement:** " + p.enforcement + ", **severity:** " + p.severity +
                          ".\n\nFix the resource, or accept the risk with a waiver in `waivers.yaml` "
                          "(see docs/policies.md).";
    rules.push_back({{"id", p.id},
                     {"name", rule_name(p.id)},
                     {"shortDescription", {{"text", sentence(p.title)}}},
                     {"fullDescription", {{"text", sentence(p.description.empty() ? p.title : p.description)}}},
                     {"help", {{"text", help}, {"markdown", help_md}}},
                     {"helpUri", std::string(kDocsUri) + "policies.md"},
                     {"defaultConfiguration", {{"level", level_for(p.severity)}}},
                     {"properties",
                      {{"tags", tags},
                       {"controls", p.controls},
                       {"enforcement", p.enforcement},
                       {"severity", p.severity},
                       {"security-severity", security_severity(p.severity)},
                       {"precision", "high"},
                       {"problem.severity", level_for(p.severity) == "note" ? "recommendation"
                                                                            : level_for(p.severity)}}}});
  }

  // Blueprint validation findings: one rule per code (docs/rules.md), one
  // result per diagnostic, at its file:line:column.
  std::map<std::string, int> validation_rule;
  for (const auto& d : r.validation) {
    if (validation_rule.count(d.code)) continue;
    validation_rule[d.code] = static_cast<int>(rules.size());
    rules.push_back({{"id", d.code},
                     {"name", rule_name("Blueprint " + d.code)},
                     {"shortDescription", {{"text", "Blueprint validation rule " + d.code + "."}}},
                     {"helpUri", std::string(kDocsUri) + "rules.md"},
                     {"defaultConfiguration", {{"level", d.severity == Severity::Error ? "error" : "warning"}}},
                     {"properties", {{"tags", nlohmann::json::array({"blueprint", "validation"})}}}});
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& d : r.validation) {
    std::string text = (d.address.empty() ? "" : d.address + ": ") + d.message;
    nlohmann::json res = {
        {"ruleId", d.code},
        {"ruleIndex", validation_rule[d.code]},
        {"kind", "fail"},
        {"level", d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "note"},
        {"message", {{"text", sentence(text) + (d.hint.empty() ? "" : " " + sentence("Hint: " + d.hint))}}},
        {"locations", nlohmann::json::array({location(r, d.loc, d.address)})},
        {"partialFingerprints", {{"plinthFinding/v1", sha256_hex(d.code + "\n" + d.address + "\n" + d.message)}}}};
    results.push_back(std::move(res));
  }
  nlohmann::json notifications = nlohmann::json::array();
  for (const auto& v : r.verdicts) {
    const auto* p = r.find(v.policy);
    if (!p || !policy::is_finding(v.outcome)) continue;
    if (v.outcome == policy::Outcome::Error) {
      notifications.push_back({{"level", "error"},
                               {"message", {{"text", sentence("Policy " + v.policy + " could not run: " + v.message)}}},
                               {"associatedRule", {{"id", v.policy}, {"index", index[v.policy]}}},
                               {"locations", nlohmann::json::array({location(r, v.loc, v.address)})}});
      continue;
    }
    nlohmann::json res = {
        {"ruleId", v.policy},
        {"ruleIndex", index[v.policy]},
        {"kind", "fail"},
        {"level", level_for(p->severity)},
        {"message", {{"text", sentence((v.address.empty() ? "" : v.address + ": ") + v.message)}}},
        {"locations", nlohmann::json::array({location(r, v.loc, v.address)})},
        {"partialFingerprints", {{"plinthFinding/v1", sha256_hex(v.policy + "\n" + v.address + "\n" + v.message)}}},
        {"properties", {{"enforcement", p->enforcement}, {"severity", p->severity}}}};
    if (v.outcome == policy::Outcome::Waived) {
      std::string text = v.waiver_justification + " (approved by " + v.waiver_approver + ")";
      res["suppressions"] = {{{"kind", "external"},
                              {"status", "accepted"},
                              {"justification", text},
                              {"location", location(r, v.waiver_loc, "")}}};
    }
    results.push_back(std::move(res));
  }
  for (const auto& d : r.diagnostics) {
    nlohmann::json n = {{"level", d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning"
                                                                                                          : "note"},
                        {"message", {{"text", sentence(d.code + ": " + d.message) +
                                                  (d.hint.empty() ? "" : " " + sentence("Hint: " + d.hint))}}},
                        {"descriptor", {{"id", d.code}}}};
    if (d.loc.known()) n["locations"] = nlohmann::json::array({location(r, d.loc, d.address)});
    notifications.push_back(std::move(n));
  }

  std::error_code ec;
  std::string root = r.provenance.in_repository ? r.provenance.repository : std::filesystem::current_path(ec).string();
  if (root.empty() || root.back() != '/') root += '/';

  nlohmann::json invocation = {{"executionSuccessful", true},
                               {"endTimeUtc", r.generated_at},
                               {"toolExecutionNotifications", notifications}};
  nlohmann::json run = {
      {"tool",
       {{"driver",
         {{"name", "Plinth"},
          {"fullName", "Plinth compliance policies"},
          {"version", r.plinth_version},
          {"semanticVersion", r.plinth_version},
          {"informationUri", std::string(kDocsUri) + "audit.md"},
          {"rules", rules}}}}},
      {"originalUriBaseIds", {{"%SRCROOT%", {{"uri", "file://" + root}}}}},
      {"invocations", nlohmann::json::array({invocation})},
      {"results", results},
      {"columnKind", "unicodeCodePoints"},
      {"properties", {{"blueprint", r.blueprint_name}, {"blocked", r.blocked}}}};
  if (r.provenance.in_repository && !r.provenance.commit.empty())
    run["versionControlProvenance"] = {
        {{"repositoryUri", "file://" + root}, {"revisionId", r.provenance.commit}, {"branch", r.provenance.branch},
         {"mappedTo", {{"uriBaseId", "%SRCROOT%"}}}}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", nlohmann::json::array({run})}};
}

}  // namespace plinth::audit
