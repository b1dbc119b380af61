// HTML writer: one self-contained page (inline CSS, no script, no fetches)
// with the framework x control matrix, per-control evidence, failures and
// provenance.
#include <algorithm>

#include "engine/audit/report.h"

namespace plinth::audit {
namespace {

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.meta{color:#57606a;font-size:13px}
.banner{padding:10px 14px;border-radius:6px;margin:14px 0;font-weight:600}
.banner.blocked{background:#ffebe9;border:1px solid #ff8182}.banner.ok{background:#dafbe1;border:1px solid #4ac26b}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}
.counts td{text-align:right;min-width:60px}
.matrix{display:flex;flex-wrap:wrap;gap:4px;margin:6px 0 10px}
.cell{display:inline-block;padding:4px 6px;border-radius:4px;font-size:12px;font-family:ui-monospace,monospace;border:1px solid rgba(0,0,0,.15)}
.fail,.error{background:#ff8182}.waived{background:#fae17d}.pass{background:#4ac26b;color:#fff}
.partial{background:#f5c26b}.not_applicable{background:#eaeef2}.not_evaluated{background:#d0d7de}.not_covered{background:#fff;border-style:dashed;color:#57606a}
td.st{font-weight:600}
code{font-family:ui-monospace,monospace;font-size:12px}
.legend span{margin-right:6px}
)";

std::string e(const std::string& s) { return xml_escape(s); }

std::string where(const Report& r, const SourceLoc& loc) {
  return loc.known() ? r.repo_path(loc.file) + ":" + std::to_string(loc.line) : "";
}

std::string badge(const std::string& status) { return "<span class=\"cell " + status + "\">" + e(status) + "</span>"; }

}  // namespace

std::string to_html(const Report& r) {
  auto c = r.counts();
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  h += "<title>" + e("Plinth compliance report: " + r.blueprint_name) + "</title>\n<style>" + kStyle +
       "</style>\n</head>\n<body>\n";
  h += "<h1>Plinth compliance report" + e(r.framework_filter.empty() ? "" : " — " + r.framework_filter) + "</h1>\n";
  h += "<div class=\"meta\" id=\"provenance\">Blueprint <b>" + e(r.blueprint_name) + "</b> · " +
       e(describe(r.provenance)) + " · plinth " + e(r.plinth_version) + " · generated " + e(r.generated_at) +
       "</div>\n";
  h += !r.blueprint_valid()
           ? "<div class=\"banner blocked\">Blocked: the blueprint is invalid (" +
                 std::to_string(count(r.validation, Severity::Error)) + " error(s)); no policy was evaluated</div>\n"
       : r.blocked ? "<div class=\"banner blocked\">Blocked: " + std::to_string(r.mandatory_failures()) +
                         " mandatory failure(s)</div>\n"
                   : std::string("<div class=\"banner ok\">No mandatory failures</div>\n");
  if (!r.validation.empty()) {
    h += "<h2>Blueprint validation</h2>\n<table id=\"validation\"><tr><th>Severity</th><th>Rule</th><th>Where</th>"
         "<th>Finding</th></tr>\n";
    for (const auto& d : r.validation)
      h += "<tr><td class=\"st\">" + e(to_string(d.severity)) + "</td><td><code>" + e(d.code) + "</code></td><td><code>" +
           e(d.loc.known() ? where(r, d.loc) : d.address) + "</code></td><td>" + e(d.message) +
           (d.hint.empty() ? "" : "<br><i>hint: " + e(d.hint) + "</i>") + "</td></tr>\n";
    h += "</table>\n";
  }
  // Policies and verdicts are counted on separate rows: a policy is counted once, at its
  // worst verdict; a verdict is one finding (a policy can report many).
  auto po = r.policy_outcomes();
  auto num = [](int n) { return "<td>" + std::to_string(n) + "</td>"; };
  h += "<table class=\"counts\" id=\"summary\"><tr><th></th><th>Total</th><th>Pass</th><th>Fail</th><th>Waived</th>"
       "<th>Error</th><th>Not applicable</th><th>Not evaluated</th></tr>\n";
  h += "<tr><th>Policies</th>" + num(static_cast<int>(r.policies.size() + r.skipped.size())) + num(po["pass"]) + num(po["fail"]) +
       num(po["waived"]) + num(po["error"]) + num(po["not_applicable"]) + num(po["not_evaluated"]) + "</tr>\n";
  h += "<tr><th>Verdicts</th>" + num(static_cast<int>(r.verdicts.size())) + num(c["pass"]) + num(c["fail"]) + num(c["waived"]) +
       num(c["error"]) + num(c["not_applicable"]) + "<td>-</td></tr></table>\n";

  h += "<h2>Controls by framework</h2>\n<div class=\"legend\">";
  for (const char* s : {"pass", "partial", "fail", "waived", "error", "not_applicable", "not_evaluated", "not_covered"}) h += badge(s);
  h += "</div>\n";
  for (const auto& f : r.frameworks) {
    h += "<h3 id=\"fw-" + e(f.name) + "\">" + e(f.title.empty() ? f.name : f.title) + " <span class=\"meta\">(" +
         e(f.name) + (f.selected ? ", selected by metadata.compliance" : ", not selected: nothing is claimed, no control passes") +
         ")</span></h3>\n";
    h += "<div class=\"matrix\">";
    for (const auto& ctl : f.controls)
      h += "<span class=\"cell " + std::string(to_string(ctl.status)) + "\" title=\"" +
           e(ctl.title + " — " + to_string(ctl.status)) + "\">" + e(ctl.id) + "</span>";
    h += "</div>\n";
  }

  std::string failures;
  for (const auto& v : r.verdicts) {
    const auto* p = r.find(v.policy);
    if (!p || (v.outcome != policy::Outcome::Fail && v.outcome != policy::Outcome::Error)) continue;
    failures += "<tr><td class=\"st\">" + badge(policy::to_string(v.outcome)) + "</td><td><code>" + e(v.policy) +
                "</code> " + e(p->title) + "</td><td>" + e(p->enforcement + " / " + p->severity) + "</td><td><code>" +
                e(v.address.empty() ? "(blueprint)" : v.address) + "</code></td><td><code>" + e(where(r, v.loc)) +
                "</code></td><td>" + e(v.message) + "</td></tr>\n";
  }
  h += "<h2>Failures</h2>\n";
  h += failures.empty() ? "<p>None.</p>\n"
                        : "<table id=\"failures\"><tr><th></th><th>Policy</th><th>Enforcement</th><th>Resource</th>"
                          "<th>Location</th><th>Finding</th></tr>\n" +
                              failures + "</table>\n";

  h += "<h2>Evidence by control</h2>\n";
  for (const auto& f : r.frameworks) {
    h += "<h3>" + e(f.title.empty() ? f.name : f.title) + "</h3>\n<table><tr><th>Control</th><th>Status</th><th>Policy"
         "</th><th>Resource</th><th>Location</th><th>Evidence</th></tr>\n";
    for (const auto& ctl : f.controls) {
      std::string rows;
      int n = 0;
      for (const auto& id : ctl.policies) {
        if (std::find(ctl.not_evaluated.begin(), ctl.not_evaluated.end(), id) != ctl.not_evaluated.end()) {
          n++;
          std::string pack;
          for (const auto& p : r.skipped)
            if (p.id == id) pack = p.pack;
          rows += "<td>" + badge("not_evaluated") + " <code>" + e(id) + "</code></td><td></td><td></td><td>" +
                  e("not evaluated: the " + (pack.empty() ? std::string("policy's") : pack) +
                    " pack is not selected by metadata.compliance, so this policy did not run") +
                  "</td></tr>\n";
          continue;
        }
        for (const auto& v : r.verdicts) {
          if (v.policy != id) continue;
          n++;
          std::string evidence = v.message.empty() ? "(the policy reported no evidence)" : v.message;
          rows += "<td>" + badge(policy::to_string(v.outcome)) + " <code>" + e(id) + "</code></td><td><code>" +
                  e(v.address.empty() ? "(blueprint)" : v.address) + "</code></td><td><code>" + e(where(r, v.loc)) +
                  "</code></td><td>" +
                  e(v.outcome == policy::Outcome::Waived
                        ? evidence + " — waived: " + v.waiver_justification + " (" + v.waiver_approver + ")"
                        : evidence) +
                  "</td></tr>\n";
        }
      }
      for (const auto& s : ctl.missing) {
        n++;
        rows += "<td>" + badge("not_covered") + "</td><td><code>" + e(s.id) + "</code></td><td></td><td>" +
                e("no evidence: " + s.title + (s.required ? " (required)" : "")) + "</td></tr>\n";
      }
      for (const auto& ob : ctl.observed) {
        n++;
        rows += "<td>" + badge("observed") + " <code>plinth verify</code></td><td><code>(running nodes)</code></td><td>"
                "</td><td>" + e(ob) + "</td></tr>\n";
      }
      std::string head = "<tr><td rowspan=\"" + std::to_string(std::max(n, 1)) + "\"><b>" + e(ctl.id) + "</b> " +
                         e(ctl.title) + "</td><td rowspan=\"" + std::to_string(std::max(n, 1)) + "\">" +
                         badge(to_string(ctl.status)) + "</td>";
      if (n == 0) {
        h += head + "<td colspan=\"4\">" + e("No policy covers this control.") + "</td></tr>\n";
      } else {
        // The first evidence row shares the control's <tr>.
        size_t cut = rows.find("</tr>\n") + 6;
        h += head + rows.substr(0, cut);
        for (size_t pos = cut; pos < rows.size();) {
          size_t next = rows.find("</tr>\n", pos) + 6;
          h += "<tr>" + rows.substr(pos, next - pos);
          pos = next;
        }
      }
    }
    h += "</table>\n";
  }

  if (r.observed) {
    h += "<h2>Observed on the running nodes</h2>\n<p>" + e(r.observed->summary) + ". Facts from " + e(r.observed->source) +
         " (plinth verify).</p>\n<table id=\"observed\"><tr><th>Fact</th><th>Observed</th><th>Controls</th><th>At</th></tr>\n";
    for (const auto& ob : r.observed->observations)
      h += "<tr><td>" + e(ob.fact) + "</td><td>" + e(ob.summary) + "</td><td>" + e(join(ob.controls, ", ")) + "</td><td>" +
           e(ob.observed_at) + "</td></tr>\n";
    h += "</table>\n";
    if (!r.observed->findings.empty()) {
      h += "<table id=\"verify-findings\"><tr><th>Rule</th><th>Severity</th><th>Node</th><th>Finding</th></tr>\n";
      for (const auto& d : r.observed->findings)
        h += "<tr><td>" + e(d.code) + "</td><td>" + e(to_string(d.severity)) + "</td><td><code>" + e(d.address) +
             "</code></td><td>" + e(d.message) + "</td></tr>\n";
      h += "</table>\n";
    }
  }

  if (!r.waivers.empty()) {
    h += "<h2>Waivers used</h2>\n<table><tr><th>Policy</th><th>Resource</th><th>Justification</th><th>Approver</th>"
         "<th>Expires</th><th>Location</th></tr>\n";
    for (const auto& w : r.waivers)
      h += "<tr><td><code>" + e(w.waiver.policy) + "</code></td><td><code>" + e(w.waiver.resource) + "</code></td><td>" +
           e(w.waiver.justification) + "</td><td>" + e(w.waiver.approver) + "</td><td>" + e(w.waiver.expires) + " (" +
           std::to_string(w.days_left) + " days)</td><td><code>" + e(where(r, w.waiver.loc)) + "</code></td></tr>\n";
    h += "</table>\n";
  }

  h += "<h2>Provenance</h2>\n<table>";
  h += "<tr><th>Repository</th><td>" + e(r.provenance.in_repository ? r.provenance.repository : "not in a git repository") +
       "</td></tr>";
  if (r.provenance.in_repository)
    h += "<tr><th>Commit</th><td><code>" + e(r.provenance.commit) + "</code> on " + e(r.provenance.branch) +
         (r.provenance.files_dirty ? " (uncommitted changes)" : "") + "</td></tr>";
  for (const auto& f : r.files)
    h += "<tr><th>Blueprint file</th><td><code>" + e(r.repo_path(f.path)) + "</code> sha256 <code>" + e(f.sha256) +
         "</code></td></tr>";
  for (const auto& [path, sha] : r.policy_files)
    h += "<tr><th>Policy file</th><td><code>" + e(r.repo_path(path)) + "</code> sha256 <code>" + e(sha) +
         "</code></td></tr>";
  h += "</table>\n</body>\n</html>\n";
  return h;
}

}  // namespace plinth::audit
