// plinth verify's output formats: text, JSON, SARIF 2.1.0, JUnit XML, Markdown, HTML.
#include <map>

#include "engine/core/strings.h"
#include "engine/verify/verify.h"

namespace plinth::verify {
namespace {

constexpr const char* kDocs = "https://github.com/plinth-infra/plinth/blob/main/docs/verify.md";

/// Markdown table cell: no tags, links or mentions, no column breaks.
std::string md(const std::string& text) {
  std::string out;
  for (char c : safe_text(text, false)) switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '[': out += "&#91;"; break;
      case ']': out += "&#93;"; break;
      case '@': out += "&#64;"; break;
      case '|': out += "\\|"; break;
      case '`': out += "&#96;"; break;
      default: out += c;
    }
  return out;
}

const char* level(Severity s) { return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "note"; }


nlohmann::json to_json(const Outcome& o, const std::string& blueprint) {
  nlohmann::json j = {{"format_version", 1},
                      {"blueprint", blueprint},
                      {"source", o.source},
                      {"pools", o.pools},
                      {"nodes_declared", o.nodes_declared},
                      {"nodes_seen", o.nodes_seen},
                      {"nodes_matching", o.nodes_matching},
                      {"newest_observation", o.newest},
                      {"failed", o.failed()},
                      {"findings", nlohmann::json::array()},
                      {"observations", nlohmann::json::array()}};
  for (const auto& f : o.findings)
    j["findings"].push_back({{"rule", f.code},
                             {"severity", to_string(f.severity)},
                             {"node", f.address},
                             {"message", f.message},
                             {"fix", f.hint},
                             {"location", f.loc.str()}});
  for (const auto& ob : o.observations)
    j["observations"].push_back({{"fact", ob.fact},
                                 {"summary", ob.summary},
                                 {"controls", ob.controls},
                                 {"nodes", ob.nodes},
                                 {"of", ob.of},
                                 {"observed_at", ob.observed_at}});
  return j;
}

nlohmann::json to_sarif(const Outcome& o) {
  nlohmann::json rules_json = nlohmann::json::array();
  std::map<std::string, int> index;
  for (const auto& r : rules()) {
    index[r.id] = static_cast<int>(rules_json.size());
    rules_json.push_back({{"id", r.id},
                          {"shortDescription", {{"text", r.title}}},
                          {"help", {{"text", r.fix}}},
                          {"helpUri", std::string(kDocs) + "#" + ascii_lower(r.id)},
                          {"defaultConfiguration", {{"level", level(r.severity)}}}});
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& f : o.findings) {
    nlohmann::json r = {{"ruleId", f.code},
                        {"ruleIndex", index.count(f.code) ? index[f.code] : 0},
                        {"level", level(f.severity)},
                        {"message", {{"text", f.message + (f.hint.empty() ? "" : " Fix: " + f.hint)}}},
                        {"properties", {{"node", f.address}}}};
    if (f.loc.known()) {
      nlohmann::json region = {{"startLine", std::max(1, f.loc.line)}};
      if (f.loc.column > 0) region["startColumn"] = f.loc.column;
      r["locations"] = nlohmann::json::array(
          {{{"physicalLocation", {{"artifactLocation", {{"uri", f.loc.file}}}, {"region", region}}}}});
    }
    results.push_back(std::move(r));
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs",
           nlohmann::json::array({{{"tool",
                                    {{"driver",
                                      {{"name", "plinth verify"},
                                       {"version", PLINTH_VERSION},
                                       {"informationUri", kDocs},
                                       {"rules", rules_json}}}}},
                                   {"results", results}}})}};
}

std::string to_junit(const Outcome& o) {
  // One testcase per node that reports or is declared, failing on its errors.
  std::map<std::string, std::vector<const Diagnostic*>> by_node;
  for (const auto& f : o.findings) by_node[f.address].push_back(&f);
  for (const auto& n : o.checked) by_node[n];
  int failures = 0;
  std::string cases;
  for (const auto& [node, fs] : by_node) {
    cases += "    <testcase classname=\"plinth.verify\" name=\"" + xml_escape(node) + "\">\n";
    std::string errs;
    for (const auto* f : fs)
      if (f->severity == Severity::Error) errs += f->code + ": " + f->message + "\nFix: " + f->hint + "\n";
    if (!errs.empty()) {
      ++failures;
      cases += "      <failure message=\"" + xml_escape(fs.front()->code + " on " + node) + "\">" + xml_escape(errs) + "</failure>\n";
    }
    for (const auto* f : fs)
      if (f->severity != Severity::Error)
        cases += "      <system-out>" + xml_escape("warning " + f->code + ": " + f->message) + "</system-out>\n";
    cases += "    </testcase>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"plinth verify\">\n"
         "  <testsuite name=\"plinth verify\" tests=\"" +
         std::to_string(by_node.size()) + "\" failures=\"" + std::to_string(failures) + "\">\n" + cases +
         "  </testsuite>\n</testsuites>\n";
}

std::string to_markdown(const Outcome& o, const std::string& blueprint) {
  std::string out = "## plinth verify: " + md(blueprint) + "\n\n";
  out += std::string(o.failed() ? "**Mismatch.** " : "**The running nodes match the blueprint.** ") + md(summary(o)) +
         ". Facts from " + md(o.source) + (o.newest.empty() ? "" : ", newest " + o.newest) + ".\n\n";
  if (!o.findings.empty()) {
    out += "| rule | severity | node | finding | fix |\n|---|---|---|---|---|\n";
    for (const auto& f : o.findings)
      out += "| " + f.code + " | " + to_string(f.severity) + " | " + md(f.address) + " | " + md(f.message) + " | " +
             md(f.hint) + " |\n";
    out += "\n";
  }
  if (!o.observations.empty()) {
    out += "### Observed evidence\n\n| fact | observed | controls | at |\n|---|---|---|---|\n";
    for (const auto& ob : o.observations)
      out += "| " + ob.fact + " | " + md(ob.summary) + " | " + md(join(ob.controls, ", ")) + " | " + ob.observed_at +
             " |\n";
  }
  return out;
}

std::string to_html(const Outcome& o, const std::string& blueprint) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<title>plinth verify: " +
      xml_escape(blueprint) +
      "</title>\n<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}.error{color:#b00}"
      ".warning{color:#a60}</style></head><body>\n<h1>plinth verify: " +
      xml_escape(blueprint) + "</h1>\n<p><strong>" + (o.failed() ? "Mismatch." : "The running nodes match the blueprint.") +
      "</strong> " + xml_escape(summary(o)) + ". Facts from " + xml_escape(o.source) +
      (o.newest.empty() ? "" : ", newest " + xml_escape(o.newest)) + ".</p>\n";
  if (!o.findings.empty()) {
    out += "<table><tr><th>rule</th><th>severity</th><th>node</th><th>finding</th><th>fix</th></tr>\n";
    for (const auto& f : o.findings)
      out += "<tr><td>" + f.code + "</td><td class=\"" + to_string(f.severity) + "\">" + to_string(f.severity) +
             "</td><td>" + xml_escape(f.address) + "</td><td>" + xml_escape(f.message) + "</td><td>" + xml_escape(f.hint) + "</td></tr>\n";
    out += "</table>\n";
  }
  if (!o.observations.empty()) {
    out += "<h2>Observed evidence</h2>\n<table><tr><th>fact</th><th>observed</th><th>controls</th><th>at</th></tr>\n";
    for (const auto& ob : o.observations)
      out += "<tr><td>" + xml_escape(ob.fact) + "</td><td>" + xml_escape(ob.summary) + "</td><td>" + xml_escape(join(ob.controls, ", ")) +
             "</td><td>" + xml_escape(ob.observed_at) + "</td></tr>\n";
    out += "</table>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace

std::string summary(const Outcome& o) {
  return std::to_string(o.nodes_seen) + " of " + std::to_string(o.nodes_declared) + " declared nodes report, " +
         std::to_string(o.nodes_matching) + " match; " + std::to_string(count(o.findings, Severity::Error)) +
         " error(s), " + std::to_string(count(o.findings, Severity::Warning)) + " warning(s)";
}

const std::vector<std::string>& formats() {
  static const std::vector<std::string> f = {"text", "json", "sarif", "junit", "markdown", "html"};
  return f;
}

Result<std::string> render(const Outcome& o, const std::string& blueprint, const std::string& format, bool color) {
  if (format == "text") {
    std::string out;
    for (const auto& f : o.findings) out += format_diagnostic(f, color) + "\n";
    out += "verify: " + summary(o) + " (facts from " + o.source + (o.newest.empty() ? "" : ", newest " + o.newest) +
           ")\n";
    for (const auto& ob : o.observations)
      out += "observed: " + ob.summary + " [" + join(ob.controls, ", ") + "]" +
             (ob.observed_at.empty() ? "" : " at " + ob.observed_at) + "\n";
    return out;
  }
  if (format == "json") return to_json(o, blueprint).dump(2) + "\n";
  if (format == "sarif") return to_sarif(o).dump(2) + "\n";
  if (format == "junit") return to_junit(o);
  if (format == "markdown") return to_markdown(o, blueprint);
  if (format == "html") return to_html(o, blueprint);
  return Error::invalid("unknown format '" + format + "'; use one of " + join(formats(), ", "));
}

}  // namespace plinth::verify
