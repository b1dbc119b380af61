// Markdown writer, sized for a pull-request comment (GitHub caps them at
// 65536 characters): counts, failures first, passes collapsed.
#include <algorithm>

#include "engine/audit/report.h"
#include "engine/core/strings.h"

namespace plinth::audit {
namespace {

/// Escapes characters that would break a Markdown table cell; control
/// characters (terminal escapes) and malformed UTF-8 become visible escapes.
/// Text from a blueprint or a policy makes no link ('[' and ']' escaped, no
/// raw HTML or autolink: '<' and '>' as entities, so no javascript: URL) and
/// no mention (a zero-width space after '@': "@everyone" pings no one).
std::string cell(const std::string& text) {
  const std::string s = safe_text(text);
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '[' || c == ']') (out += '\\') += c;
    else if (c == '@') out += "@\u200b";
    else out += c;
  }
  return out;
}

std::string where_cell(const Report& r, const SourceLoc& loc) {
  return loc.known() ? "`" + cell(r.repo_path(loc.file)) + ":" + std::to_string(loc.line) + "`" : "";
}

std::string provenance_line(const Report& r) {
  std::string s = "Blueprint **" + cell(r.blueprint_name) + "** · " + cell(describe(r.provenance)) + " · plinth " +
                  r.plinth_version + " · " + r.generated_at;
  if (r.plan)
    s += " · plan: " + std::to_string(r.plan->create) + " to create, " + std::to_string(r.plan->update) +
         " to update, " + std::to_string(r.plan->replace) + " to replace, " + std::to_string(r.plan->remove) +
         " to delete";
  return s;
}

constexpr size_t kMaxRows = 200;  // keeps the comment far below GitHub's limit

/// The verdicts with `outcome` folded into <details> (at most kMaxRows rows):
/// "<count><summary>", then Policy | Resource | `what` (the verdict's message).
std::string folded(const Report& r, policy::Outcome outcome, const std::string& summary, const std::string& what) {
  std::string rows;
  size_t n = 0;
  for (const auto& v : r.verdicts) {
    if (v.outcome != outcome || n++ >= kMaxRows) continue;
    rows += "| `" + v.policy + "` | `" + cell(v.address.empty() ? "(blueprint)" : v.address) + "` | " + cell(v.message) +
            " |\n";
  }
  if (rows.empty()) return "";
  return "<details><summary>" + std::to_string(n) + summary + "</summary>\n\n| Policy | Resource | " + what +
         " |\n|---|---|---|\n" + rows + (n > kMaxRows ? "\n…and " + std::to_string(n - kMaxRows) + " more.\n" : "") +
         "\n</details>\n\n";
}

}  // namespace

std::string to_markdown(const Report& r) {
  auto c = r.counts();
  std::string md = "## Plinth compliance report" + (r.framework_filter.empty() ? "" : " — " + r.framework_filter) + "\n\n";
  md += (r.blocked ? "❌ **Blocked**: " + std::to_string(r.mandatory_failures()) + " mandatory failure(s)"
                   : std::string("✅ **No mandatory failures**")) +
        "\n\n";
  auto po = r.policy_outcomes();
  md += "| | Total | Pass | Fail | Waived | Error | Not applicable | Not evaluated |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  md += "| Policies | " + std::to_string(r.policies.size() + r.skipped.size()) + " | " + std::to_string(po["pass"]) + " | " +
        std::to_string(po["fail"]) + " | " + std::to_string(po["waived"]) + " | " + std::to_string(po["error"]) + " | " +
        std::to_string(po["not_applicable"]) + " | " + std::to_string(po["not_evaluated"]) + " |\n";
  md += "| Verdicts | " + std::to_string(r.verdicts.size()) + " | " + std::to_string(c["pass"]) + " | " +
        std::to_string(c["fail"]) + " | " + std::to_string(c["waived"]) + " | " + std::to_string(c["error"]) + " | " +
        std::to_string(c["not_applicable"]) + " | - |\n\n";

  std::string failures;
  size_t rows = 0, more = 0;
  for (int pass = 0; pass < 2; pass++)  // mandatory first, then advisory
    for (const auto& v : r.verdicts) {
      const auto* p = r.find(v.policy);
      if (!p || (v.outcome != policy::Outcome::Fail && v.outcome != policy::Outcome::Error)) continue;
      if (p->mandatory() != (pass == 0)) continue;
      if (rows++ >= kMaxRows) {
        more++;
        continue;
      }
      failures += "| " + std::string(v.outcome == policy::Outcome::Error ? "error" : "fail") + " | `" + v.policy +
                  "` " + cell(p->title) + " | " + p->enforcement + " / " + p->severity + " | `" +
                  cell(v.address.empty() ? "(blueprint)" : v.address) + "` | " + where_cell(r, v.loc) + " | " +
                  cell(v.message) + " |\n";
    }
  if (!failures.empty()) {
    md += "### Failures\n\n| | Policy | Enforcement | Resource | Location | Finding |\n|---|---|---|---|---|---|\n" +
          failures;
    if (more) md += "\n…and " + std::to_string(more) + " more; see the full report.\n";
    md += "\n";
  }

  std::string waived;
  for (const auto& v : r.verdicts) {
    if (v.outcome != policy::Outcome::Waived) continue;
    std::string expires;
    for (const auto& w : r.waivers)
      if (w.waiver.loc == v.waiver_loc) expires = w.waiver.expires + " (" + std::to_string(w.days_left) + " days)";
    waived += "| `" + v.policy + "` | `" + cell(v.address) + "` | " + cell(v.waiver_justification) + " | " +
              cell(v.waiver_approver) + " | " + expires + " |\n";
  }
  if (!waived.empty())
    md += "### Waived\n\n| Policy | Resource | Justification | Approver | Expires |\n|---|---|---|---|---|\n" + waived +
          "\n";

  for (const auto& d : r.diagnostics)
    md += "> **" + std::string(to_string(d.severity)) + " " + d.code + "** " + cell(d.message) +
          (d.loc.known() ? " (" + where_cell(r, d.loc) + ")" : "") + (d.hint.empty() ? "" : " — " + cell(d.hint)) +
          "\n";
  if (!r.diagnostics.empty()) md += "\n";
  if (!r.validation.empty()) {
    md += std::string("### Blueprint validation: ") +
          (r.blueprint_valid() ? "valid" : "invalid, no policy was evaluated") +
          "\n\n| | Rule | Where | Finding |\n|---|---|---|---|\n";
    for (const auto& d : r.validation)
      md += "| " + std::string(d.severity == Severity::Error ? "❌" : "⚠️") + " " + to_string(d.severity) + " | " +
            cell(d.code) + " | " + (d.loc.known() ? where_cell(r, d.loc) : cell(d.address)) + " | " + cell(d.message) +
            (d.hint.empty() ? "" : "<br>hint: " + cell(d.hint)) + " |\n";
    md += "\n";
  }

  if (!r.framework_filter.empty() && !r.frameworks.empty()) {
    const auto& f = r.frameworks.front();
    md += "### " + cell(f.title.empty() ? f.name : f.title) + "\n\n";
    if (!f.selected)
      md += "> The blueprint's `metadata.compliance` does not list `" + cell(f.name) +
            "`: nothing here is claimed, so no control passes; failures found by other frameworks' policies "
            "still show.\n\n";
    md += "| Control | Title | Status | Policies and gaps |\n|---|---|---|---|\n";
    for (const auto& ctl : f.controls) {
      std::string pols;
      for (const auto& id : ctl.policies) {
        bool skipped = std::find(ctl.not_evaluated.begin(), ctl.not_evaluated.end(), id) != ctl.not_evaluated.end();
        pols += (pols.empty() ? "`" : ", `") + id + "`" + (skipped ? " (not evaluated)" : "");
      }
      for (const auto& ob : ctl.observed) pols += (pols.empty() ? "" : "<br>") + std::string("observed: ") + cell(ob);
      for (const auto& s : ctl.missing)
        pols += (pols.empty() ? "" : "<br>") + std::string("no evidence: ") + cell(s.id) + " " + cell(s.title) +
                (s.required ? " (required)" : "");
      md += "| " + cell(ctl.id) + " | " + cell(ctl.title) + " | " + to_string(ctl.status) + " | " + pols + " |\n";
    }
    md += "\n";
  }

  if (r.observed) {
    md += "### Observed on the running nodes\n\n" + cell(r.observed->summary) + ". Facts from " +
          cell(r.observed->source) + " (plinth verify).\n\n| Fact | Observed | Controls | At |\n|---|---|---|---|\n";
    for (const auto& ob : r.observed->observations)
      md += "| " + cell(ob.fact) + " | " + cell(ob.summary) + " | " + cell(join(ob.controls, ", ")) + " | " +
            cell(ob.observed_at) + " |\n";
    md += "\n";
    for (const auto& d : r.observed->findings)
      md += "> **" + std::string(to_string(d.severity)) + " " + d.code + "** " + cell(d.message) + "\n";
    if (!r.observed->findings.empty()) md += "\n";
  }

  md += folded(r, policy::Outcome::Pass, " passing check(s)", "Evidence");
  md += folded(r, policy::Outcome::NotApplicable, " not applicable", "Why");

  md += "<sub>" + provenance_line(r) + "</sub>\n";
  return md;
}

}  // namespace plinth::audit
