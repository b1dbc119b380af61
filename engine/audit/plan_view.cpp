// The plan's review views: the Markdown summary and the HTML plan view.
#include "engine/audit/plan_view.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <unordered_set>

#include "engine/audit/report.h"
#include "engine/core/strings.h"
#include "engine/plan/format.h"
#include "engine/plan/groups.h"

namespace plinth::audit {
namespace plan_view_internal {

using plan::Action;
using plan::Group;

// ---------------------------------------------------------------------------
// Shared by both views

const char* marker(Action a) { return plan::action_marker(a); }
const char* verb(Action a) { return plan::action_verb(a); }

/// Replaces and deletes first (what a reviewer must not miss), then updates, then creates.
int rank(Action a) {
  switch (a) {
    case Action::Replace: return 0;
    case Action::Delete: return 1;
    case Action::Update: return 2;
    case Action::Create: return 3;
    case Action::NoOp: break;
  }
  return 4;
}

/// The plan's entries, replaces and deletes first, in plan order within an action.
std::vector<Group> ordered_groups(const plan::Plan& p) {
  auto groups = plan::group_changes(p);
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return rank(a.action()) < rank(b.action()); });
  return groups;
}

/// ", forced by: a, b" of a replace, "; requested with -replace".
std::string forced_note(const Group& g) {
  if (g.action() != Action::Replace) return "";
  bool requested = false;
  auto forced = plan::forced_paths(g, &requested);
  std::string out = forced.empty() ? "" : ", forced by: " + join(forced, ", ");
  if (requested) out += forced.empty() ? ", as requested with -replace" : "; requested with -replace";
  return out;
}

/// A policy verdict that blocks the plan or warns about it.
struct Finding {
  const policy::Verdict* verdict = nullptr;  ///< null for a policy file that failed to load
  std::string policy, severity, message, address, where;
  bool blocking = false;
};

struct Findings {
  std::vector<Finding> blocking, warnings;
  size_t waived = 0;
};

Findings findings_of(const policy::Evaluation* ev) {
  Findings f;
  if (!ev) return f;
  for (const auto& d : ev->diagnostics)
    if (d.severity == Severity::Error)
      f.blocking.push_back({nullptr, d.code.empty() ? "policy" : d.code, "error", d.message, "",
                            d.loc.known() ? d.loc.str() : "", true});
  for (const auto& v : ev->verdicts) {
    if (v.outcome == policy::Outcome::Waived) ++f.waived;
    if (v.outcome != policy::Outcome::Fail && v.outcome != policy::Outcome::Error) continue;
    const policy::PolicyInfo* info = ev->find(v.policy);
    Finding x{&v, v.policy, info ? info->severity : "", v.message, v.address, v.loc.known() ? v.loc.str() : "",
              info && info->mandatory()};
    if (v.outcome == policy::Outcome::Error) x.message = "policy error: " + x.message;
    (x.blocking ? f.blocking : f.warnings).push_back(std::move(x));
  }
  return f;
}

std::string count_text(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// ---------------------------------------------------------------------------
// Markdown

/// Text for HTML content inside the Markdown (<pre>, <code>, <summary>):
/// terminal escapes and malformed UTF-8 made visible, '&', '<' and '>' as
/// entities, so no tag or closing </pre> comes from a value, and '[', ']'
/// and '@' too, so no link or mention either, wherever the text lands.
std::string h(const std::string& text) {
  std::string out;
  for (char c : safe_text(text)) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '[') out += "&#91;";
    else if (c == ']') out += "&#93;";
    else if (c == '@') out += "&#64;";
    else out += c;
  }
  return out;
}

/// Text for a Markdown table cell: h() plus no '|' (a new cell), no line
/// break and no emphasis or code span.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : h(text)) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else if (c == '`' || c == '*' || c == '_') (out += '\\') += c;
    else out += c;
  }
  return out;
}

/// <code>TEXT</code> for a table cell (a Markdown code span would show the
/// escapes literally).
std::string code(const std::string& text) { return "<code>" + cell(text) + "</code>"; }

std::string clip(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return text.substr(0, cut) + "…";
}

constexpr size_t kMaxFindingRows = 20;
constexpr size_t kMaxDriftRows = 20;
constexpr size_t kMaxEntryLines = 40;
constexpr size_t kMaxLine = 300;
constexpr size_t kMaxFoldRow = 400;
// Byte budgets of the parts before the changes, so that whatever the input
// (escaping can make a character five bytes) the changes keep most of the room.
constexpr size_t kMaxFindingsBytes = 12000;
constexpr size_t kMaxDriftBytes = 8000;
constexpr size_t kMaxEntryBytes = 6000;
constexpr size_t kMaxErrorsBytes = 40000;

std::string findings_table(const std::vector<Finding>& rows, const std::string& more_hint) {
  std::string md = "| Policy | Resource | Finding |\n|---|---|---|\n";
  size_t shown = 0;
  for (; shown < rows.size() && shown < kMaxFindingRows && md.size() < kMaxFindingsBytes; ++shown) {
    const auto& f = rows[shown];
    md += "| " + code(clip(f.policy, 100)) + (f.severity.empty() ? "" : " " + cell(f.severity)) + " | " +
          (f.address.empty() ? (f.where.empty() ? std::string("(blueprint)") : code(clip(f.where, 200)))
                             : code(clip(f.address, 200))) +
          " | " + cell(clip(f.message, kMaxLine)) + " |\n";
  }
  if (rows.size() > shown) md += "\n… and " + std::to_string(rows.size() - shown) + " more; " + more_hint + "\n";
  return md;
}

std::string drift_section(const std::vector<plan::Drift>& drift) {
  if (drift.empty()) return "";
  std::string md = "### Drift\n\n" + count_text(drift.size(), "resource", "resources") +
                   " changed outside Plinth since the last apply (state → observed):\n\n";
  size_t shown = 0;
  for (; shown < drift.size() && shown < kMaxDriftRows && md.size() < kMaxDriftBytes; ++shown) {
    const auto& d = drift[shown];
    md += "- <code>" + h(clip(d.address, 200)) + "</code>: ";
    if (d.gone) {
      md += "gone" + (d.reason.empty() ? std::string() : " (" + cell(clip(d.reason, kMaxLine)) + ")");
    } else {
      std::string parts;
      for (size_t k = 0; k < d.changes.size() && k < 5; ++k)
        parts += std::string(k ? "; " : "") + "<code>" + h(clip(d.changes[k].path + ": " +
                                                                   plan::change_text(Action::Update, d.changes[k]),
                                                               kMaxLine)) +
                 "</code>";
      if (d.changes.size() > 5) parts += "; " + std::to_string(d.changes.size() - 5) + " more";
      md += parts;
    }
    md += "\n";
  }
  if (drift.size() > shown)
    md += "- … and " + std::to_string(drift.size() - shown) +
          " more (plinth plan --json, `resource_drift`)\n";
  return md + "\n";
}

/// One entry: its line (marker, name and indexes, count and verb) and,
/// unless it deletes, its reasons and attributes in a collapsible block.
using Lines = std::vector<plan::AttributeLine>;

std::string entry_markdown(const Group& g, const Lines& attrs, const std::string& see) {
  const std::string title = "<code>" + h(clip(std::string(marker(g.action())) + " " + g.name() + g.indexes(), 300)) +
                            "</code> " + std::to_string(g.members.size()) + " to " + verb(g.action()) +
                            h(clip(forced_note(g), 300));
  if (g.action() == Action::Delete) return "<p>" + title + "</p>\n\n";
  std::vector<std::string> lines;
  for (const auto& why : plan::group_reasons(g)) lines.push_back("# because " + why);
  for (const auto& a : attrs) lines.push_back(a.path + ": " + plan::line_text(g, a));
  std::string md = "<details><summary>" + title + "</summary>\n\n<pre>\n";
  size_t shown = 0;
  for (; shown < lines.size() && shown < kMaxEntryLines && md.size() < kMaxEntryBytes; ++shown)
    md += h(clip(lines[shown], kMaxLine)) + "\n";
  if (lines.size() > shown) md += "… " + std::to_string(lines.size() - shown) + " more lines: " + h(see) + "\n";
  return md + "</pre>\n\n</details>\n\n";
}

/// The keys that fold entries, finest first: identical changes; the same
/// type, action and attribute paths; the same type and action.
constexpr int kLevels = 3;

std::string fold_key(const Group& g, const Lines& attrs, int level) {
  std::string key = g.first().type + "\x1f" + verb(g.action());
  if (level == 2) return key;
  key += "\x1f" + forced_note(g);
  for (const auto& a : attrs) {
    key += "\x1f" + a.path;
    if (level == 0) key += "=" + (a.shared ? plan::line_text(g, a) : std::string("(per node)"));
  }
  return key;
}

const char* kLevelWords[kLevels] = {"identical changes", "the same type, action and attributes",
                                    "the same type and action"};

struct FoldRow {
  const Lines* attrs = nullptr;  ///< the first entry's
  const Group* first = nullptr;
  const Group* last = nullptr;
  size_t entries = 0, resources = 0;
};

std::string fold_row_text(const FoldRow& row, int level) {
  const Group& g = *row.first;
  std::string names = "<code>" + h(g.name()) + "</code>";
  if (row.entries > 1) names += (row.entries > 2 ? " … " : ", ") + std::string("<code>") + h(row.last->name()) + "</code>";
  std::string changes;
  if (level == 2) {
    changes = "(various)";
  } else if (g.action() == Action::Delete) {
    changes = "(every attribute)";
  } else {
    std::vector<std::string> parts;
    for (const auto& a : *row.attrs)
      parts.push_back(level == 0 && a.shared && g.action() != Action::Create ? a.path + ": " + plan::line_text(g, a)
                                                                              : a.path);
    changes = join(parts, ", ");
  }
  std::string head = "| " + std::string(verb(g.action())) + " | " + code(g.first().type) + " | " +
                     std::to_string(row.entries) + " | " + std::to_string(row.resources) + " | " + names + " | ";
  std::string tail = cell(clip(changes + forced_note(g), kMaxFoldRow / 2));
  return head + tail + " |\n";
}

std::vector<FoldRow> fold(const std::vector<Group>& groups, const std::vector<Lines>& attrs, size_t from, int level) {
  std::vector<FoldRow> rows;
  std::map<std::string, size_t> row_of;
  for (size_t i = from; i < groups.size(); ++i) {
    auto [it, fresh] = row_of.emplace(fold_key(groups[i], attrs[i], level), rows.size());
    if (fresh) rows.push_back({&attrs[i], &groups[i], &groups[i], 0, 0});
    FoldRow& r = rows[it->second];
    r.last = &groups[i];
    ++r.entries;
    r.resources += groups[i].members.size();
  }
  return rows;
}

std::string summary_table(const plan::Summary& s, const std::vector<Group>& groups) {
  std::map<Action, size_t> entries;
  for (const auto& g : groups) ++entries[g.action()];
  return "| | Create | Update | Replace | Destroy | Unchanged |\n|---|---:|---:|---:|---:|---:|\n"
         "| Resources | " + std::to_string(s.create) + " | " + std::to_string(s.update) + " | " +
         std::to_string(s.replace) + " | " + std::to_string(s.remove) + " | " + std::to_string(s.no_op) + " |\n"
         "| Entries | " + std::to_string(entries[Action::Create]) + " | " + std::to_string(entries[Action::Update]) +
         " | " + std::to_string(entries[Action::Replace]) + " | " + std::to_string(entries[Action::Delete]) + " | |\n";
}

/// How a reader sees everything: the saved plan, else the plan command.
std::string see_all(const PlanView& v) {
  return v.plan_file.empty() ? "plinth plan --no-group (or --json)" : "plinth show --no-group " + v.plan_file;
}

}  // namespace plan_view_internal

namespace plan_view_internal {

bool invalid(const PlanView& v) { return !v.plan || (v.validation && has_errors(*v.validation)); }

/// The validation errors, one per line, "file:line:column CODE message".
std::vector<std::string> error_lines(const PlanView& v) {
  std::vector<std::string> out;
  if (v.validation)
    for (const auto& d : *v.validation)
      if (d.severity == Severity::Error) out.push_back((d.loc.known() ? d.loc.str() + " " : "") + d.code + " " + d.message);
  return out;
}

}  // namespace plan_view_internal

namespace plan_view_internal {

std::string markdown(const PlanView& v, size_t limit) {
  if (invalid(v)) {
    auto errors = error_lines(v);
    std::string md = "## Plinth plan: " + cell(clip(v.blueprint_name, 200)) + "\n\n❌ **The blueprint is invalid** (" +
                     count_text(errors.size(), "error", "errors") + "): nothing was planned.\n\n";
    size_t shown = 0;
    for (; shown < errors.size() && shown < kMaxFindingRows && md.size() < kMaxErrorsBytes; ++shown)
      md += "- " + cell(clip(errors[shown], kMaxLine)) + "\n";
    if (errors.size() > shown) md += "- … and " + std::to_string(errors.size() - shown) + " more: plinth validate\n";
    return md + "\n---\n<sub>plinth " + h(v.plinth_version) + "</sub>\n";
  }
  const plan::Plan& p = *v.plan;
  const plan::Summary s = p.summary();
  const auto groups = ordered_groups(p);
  const Findings f = findings_of(v.evaluation);

  std::string head = "## Plinth plan: " + cell(clip(v.blueprint_name, 200)) + "\n\n**" + plan::summary_line(p) + "**\n\n";
  if (s.changes() > 0) head += summary_table(s, groups) + "\n";
  if (!v.evaluation) {
    head += "Policy verdicts are not part of a saved plan: the plan job's output and reports have them.\n\n";
  } else if (!f.blocking.empty()) {
    head += "❌ **Blocked**: " + count_text(f.blocking.size(), "mandatory policy finding", "mandatory policy findings") +
            "; this plan cannot be applied.\n\n### Blocking (mandatory policies)\n\n" +
            findings_table(f.blocking, "the compliance report (--report markdown:FILE) lists them all") + "\n";
  } else {
    head += "✅ **No mandatory policy failures**" +
            (f.waived ? " (" + count_text(f.waived, "failure", "failures") + " waived)" : std::string()) + "\n\n";
  }
  if (!f.warnings.empty())
    head += "### Warnings (advisory policies)\n\n" +
            findings_table(f.warnings, "the compliance report (--report markdown:FILE) lists them all") + "\n";
  if (v.drift) head += drift_section(*v.drift);

  std::string foot = "---\n<sub>";
  if (!v.plan_file.empty())
    foot += "Plan file <code>" + h(clip(v.plan_file, 300)) + "</code> sha256 <code>" + h(v.plan_sha256) + "</code> · ";
  else foot += "Plan not saved (plinth plan -out PLANFILE saves it) · ";
  if (!v.provenance.empty()) foot += h(clip(v.provenance, 300)) + " · ";
  foot += "plinth " + h(v.plinth_version) + "</sub>\n";

  // Entries one by one while they fit with the fold of the rest.
  const std::string see = see_all(v);
  std::vector<Lines> attrs;
  attrs.reserve(groups.size());
  for (const auto& g : groups) attrs.push_back(plan::attribute_lines(g));
  std::vector<std::string> entries;
  entries.reserve(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) entries.push_back(entry_markdown(groups[i], attrs[i], see));
  // Distinct fold keys of each suffix, per level: an upper bound of the
  // fold table's size when the entries from k on are folded.
  std::vector<std::array<size_t, kLevels>> distinct(groups.size() + 1, {0, 0, 0});
  for (int level = 0; level < kLevels; ++level) {
    std::unordered_set<std::string> seen;
    for (size_t k = groups.size(); k-- > 0;) {
      seen.insert(fold_key(groups[k], attrs[k], level));
      distinct[k][level] = seen.size();
    }
  }
  const std::string changes_head = s.changes() ? "### Changes\n\nReplaces and deletes first.\n\n" : "";
  const size_t fold_intro = 600;  // the Folded heading, sentence and table header
  const size_t fixed = head.size() + changes_head.size() + foot.size() + fold_intro + 2;
  const size_t room = limit > fixed ? limit - fixed : 0;
  size_t listed = 0;
  int level = kLevels - 1;
  // Prefix sums make the search linear.
  std::vector<size_t> prefix(groups.size() + 1, 0);
  for (size_t i = 0; i < groups.size(); ++i) prefix[i + 1] = prefix[i] + entries[i].size();
  bool found = false;
  for (size_t k = groups.size() + 1; k-- > 0 && !found;) {
    for (int l = 0; l < kLevels; ++l) {
      size_t bound = k == groups.size() ? 0 : distinct[k][l] * (kMaxFoldRow + 80);
      if (prefix[k] + bound <= room) {
        listed = k;
        level = l;
        found = true;
        break;
      }
    }
  }

  std::string md = head + changes_head;
  for (size_t i = 0; i < listed; ++i) md += entries[i];
  if (listed < groups.size()) {
    auto rows = fold(groups, attrs, listed, level);
    size_t resources = 0;
    for (const auto& r : rows) resources += r.resources;
    md += "### Folded\n\n" + count_text(groups.size() - listed, "entry", "entries") + " (" +
          count_text(resources, "resource", "resources") + ") did not fit one by one in a pull-request comment; " +
          "here they are in " + count_text(rows.size(), "row", "rows") + " of entries with " + kLevelWords[level] +
          " (first … last pool). Every change: " + h(see) + ".\n\n" +
          "| Action | Type | Entries | Resources | Pools | Changes |\n|---|---|---:|---:|---|---|\n";
    std::string table;
    for (const auto& r : rows) table += fold_row_text(r, level);
    if (md.size() + table.size() + foot.size() + 2 >= limit) {
      // Only when even the coarsest fold does not fit (thousands of types): the totals.
      table.clear();
      std::map<Action, std::pair<size_t, size_t>> total;
      for (size_t i = listed; i < groups.size(); ++i) {
        ++total[groups[i].action()].first;
        total[groups[i].action()].second += groups[i].members.size();
      }
      for (const auto& [a, t] : total)
        table += "| " + std::string(verb(a)) + " | (every type) | " + std::to_string(t.first) + " | " +
                 std::to_string(t.second) + " | | (various) |\n";
    }
    md += table + "\n";
  }
  md += foot;
  if (md.size() >= limit) {
    // Not reached with the budgets above; a last guard, cut at a line.
    size_t cut = md.rfind('\n', limit > 400 ? limit - 400 : 0);
    md = md.substr(0, cut == std::string::npos ? 0 : cut) + "\n\n(cut at " + std::to_string(limit) +
         " bytes: " + h(see) + ")\n";
  }
  return md;
}

}  // namespace plan_view_internal

// ---------------------------------------------------------------------------
// HTML

namespace plan_view_internal {

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{font-size:14px;margin:14px 0 4px}
.meta{color:#57606a;font-size:13px}
.banner{padding:10px 14px;border-radius:6px;margin:14px 0;font-weight:600}
.banner.blocked{background:#ffebe9;border:1px solid #ff8182}.banner.ok{background:#dafbe1;border:1px solid #4ac26b}
.banner.none{background:#f6f8fa;border:1px solid #d0d7de}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}
td.n{text-align:right}
code,.v{font-family:ui-monospace,monospace;font-size:12px}
.row{display:grid;grid-template-columns:minmax(260px,1fr) repeat(4,80px) 170px;column-gap:14px;align-items:center;
 padding:4px 8px;border-bottom:1px solid #eaeef2;font-size:13px}
.row>span:nth-child(n+2):nth-child(-n+5){text-align:right;font-variant-numeric:tabular-nums}
.row.head{font-weight:600;background:#f6f8fa;border-top:1px solid #d0d7de}
details.pool>summary{list-style:none;cursor:pointer}
details.pool>summary::-webkit-details-marker{display:none}
details.pool>summary>span:first-child::before{content:"▸ ";color:#57606a}
details.pool[open]>summary>span:first-child::before{content:"▾ "}
details.pool[open]>summary{background:#f6f8fa}
.body{padding:6px 12px 14px 28px;border-bottom:1px solid #d0d7de}
.c{color:#1a7f37}.u{color:#9a6700}.r{color:#8250df;font-weight:600}.d{color:#cf222e;font-weight:600}
.z{color:#afb8c1}
.badge{display:inline-block;padding:1px 6px;border-radius:10px;font-size:12px;margin-right:4px}
.badge.block{background:#ff8182}.badge.warn{background:#fae17d}
.why{color:#57606a;font-style:italic}
)";

std::string e(const std::string& s) { return xml_escape(s); }

const char* action_class(Action a) {
  switch (a) {
    case Action::Create: return "c";
    case Action::Update: return "u";
    case Action::Replace: return "r";
    case Action::Delete: return "d";
    case Action::NoOp: break;
  }
  return "z";
}

int action_column(Action a) {
  switch (a) {
    case Action::Create: return 0;
    case Action::Update: return 1;
    case Action::Replace: return 2;
    case Action::Delete: return 3;
    case Action::NoOp: break;
  }
  return 0;
}

/// A row of the view: a pool (its entries, one per action) or a single resource.
struct Row {
  std::string name;
  std::vector<const Group*> groups;
  std::vector<const Finding*> findings;
  int rank = 4;
};

std::string findings_html(const std::vector<const Finding*>& rows) {
  std::string out = "<table class=\"findings\"><tr><th>Policy</th><th>Severity</th><th>Resource</th><th>Finding</th></tr>\n";
  for (const auto* f : rows)
    out += std::string("<tr><td><span class=\"badge ") + (f->blocking ? "block" : "warn") + "\">" +
           (f->blocking ? "blocks" : "warns") + "</span><code>" + e(f->policy) + "</code></td><td>" + e(f->severity) +
           "</td><td><code>" + e(f->address.empty() ? f->where : f->address) + "</code></td><td>" + e(f->message) +
           "</td></tr>\n";
  return out + "</table>\n";
}

/// What one member changes of a per-node attribute: `after` of a create, else `before -> after`.
std::string member_value(const plan::ResourceChange& rc, const std::string& path) {
  for (const auto& c : rc.changes)
    if (c.path == path) return plan::change_text(rc.action, c);
  return "";
}

std::string group_html(const Group& g) {
  const auto lines = plan::attribute_lines(g);
  const size_t n = g.members.size();
  std::string out = std::string("<h3 class=\"") + action_class(g.action()) + "\">" + e(marker(g.action())) + " " +
                    e(g.name() + g.indexes()) + " — " + std::to_string(n) + " to " + verb(g.action()) +
                    e(forced_note(g)) + "</h3>\n";
  for (const auto& why : plan::group_reasons(g)) out += "<div class=\"why\">because " + e(why) + "</div>\n";
  if (g.action() == Action::Delete) {
    out += "<div class=\"why\">every attribute goes</div>\n";
  } else {
    out += "<table class=\"attrs\"><tr><th>Attribute</th><th>" +
           std::string(g.action() == Action::Create ? "Value" : "Before → after") + "</th><th>Members</th></tr>\n";
    for (const auto& a : lines) {
      if (!a.shared) continue;
      out += "<tr><td><code>" + e(a.path) + "</code></td><td class=\"v\">" +
             e(plan::change_text(g.action(), *a.first)) + (g.action() != Action::Create && a.first->forces_replacement
                                                               ? " <b>(forces replacement)</b>"
                                                               : "") +
             "</td><td class=\"n\">" + std::to_string(a.count) + " of " + std::to_string(n) + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  // The members, with the attributes that differ between them.
  std::vector<std::string> per_node;
  for (const auto& a : lines)
    if (!a.shared) per_node.push_back(a.path);
  if (g.pooled() || !per_node.empty()) {
    out += "<table class=\"nodes\"><tr><th>Address</th>";
    for (const auto& path : per_node) out += "<th><code>" + e(path) + "</code></th>";
    out += "</tr>\n";
    for (const auto* rc : g.members) {
      out += "<tr><td><code>" + e(rc->address) + "</code></td>";
      for (const auto& path : per_node) out += "<td class=\"v\">" + e(member_value(*rc, path)) + "</td>";
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  return out;
}

}  // namespace plan_view_internal

namespace plan_view_internal {

std::string html(const PlanView& v) {
  if (invalid(v)) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
                      "<title>" + e("Plinth plan: " + v.blueprint_name) + "</title>\n<style>" + kStyle +
                      "</style>\n</head>\n<body>\n<h1>Plinth plan: " + e(v.blueprint_name) +
                      "</h1>\n<div class=\"banner blocked\" id=\"verdict\">The blueprint is invalid: nothing was planned</div>\n<ul>\n";
    for (const auto& line : error_lines(v)) out += "<li><code>" + e(line) + "</code></li>\n";
    return out + "</ul>\n</body>\n</html>\n";
  }
  const plan::Plan& p = *v.plan;
  const plan::Summary s = p.summary();
  const auto groups = plan::group_changes(p);
  const Findings f = findings_of(v.evaluation);

  // Rows: a pool's entries together, or one resource; replaces and deletes first.
  std::vector<Row> rows;
  std::map<std::string, size_t> row_of;
  std::map<std::string, size_t> row_of_address;
  for (const auto& g : groups) {
    auto [it, fresh] = row_of.emplace(g.name(), rows.size());
    if (fresh) rows.push_back({g.name(), {}, {}, 4});
    Row& r = rows[it->second];
    r.groups.push_back(&g);
    r.rank = std::min(r.rank, rank(g.action()));
    for (const auto* rc : g.members) row_of_address.emplace(rc->address, it->second);
  }
  std::vector<const Finding*> elsewhere;  // blueprint-wide, or about resources the plan does not change
  for (const auto* list : {&f.blocking, &f.warnings})
    for (const auto& x : *list) {
      auto it = row_of_address.find(x.address);
      if (it == row_of_address.end()) elsewhere.push_back(&x);
      else rows[it->second].findings.push_back(&x);
    }
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows[a].rank < rows[b].rank; });

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  out += "<title>" + e("Plinth plan: " + v.blueprint_name) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>Plinth plan: " + e(v.blueprint_name) + "</h1>\n<div class=\"meta\" id=\"provenance\">";
  if (!v.provenance.empty()) out += e(v.provenance) + " · ";
  out += "plinth " + e(v.plinth_version);
  if (!v.plan_file.empty()) out += " · plan file <code>" + e(v.plan_file) + "</code> sha256 <code>" + e(v.plan_sha256) + "</code>";
  out += "</div>\n";
  out += std::string("<div class=\"banner ") + (s.changes() ? "none" : "ok") + "\" id=\"summary\">" +
         e(plan::summary_line(p)) + "</div>\n";
  out += "<table class=\"counts\"><tr><th></th><th>Create</th><th>Update</th><th>Replace</th><th>Destroy</th>"
         "<th>Unchanged</th></tr>\n<tr><td>Resources</td><td class=\"n\">" + std::to_string(s.create) +
         "</td><td class=\"n\">" + std::to_string(s.update) + "</td><td class=\"n\">" + std::to_string(s.replace) +
         "</td><td class=\"n\">" + std::to_string(s.remove) + "</td><td class=\"n\">" + std::to_string(s.no_op) +
         "</td></tr>\n</table>\n";
  if (!v.evaluation)
    out += "<div class=\"banner none\">Policy verdicts are not part of a saved plan: the plan job's output and "
           "reports have them.</div>\n";
  else if (!f.blocking.empty())
    out += "<div class=\"banner blocked\" id=\"verdict\">Blocked: " +
           count_text(f.blocking.size(), "mandatory policy finding", "mandatory policy findings") +
           "; this plan cannot be applied</div>\n";
  else
    out += "<div class=\"banner ok\" id=\"verdict\">No mandatory policy failures" +
           (f.warnings.empty() ? std::string() : ", " + count_text(f.warnings.size(), "warning", "warnings")) +
           (f.waived ? ", " + count_text(f.waived, "failure", "failures") + " waived" : std::string()) + "</div>\n";
  if (!elsewhere.empty()) out += "<h2>Policy findings outside the changes</h2>\n" + findings_html(elsewhere);
  if (v.drift && !v.drift->empty()) {
    out += "<h2>Drift</h2>\n<table id=\"drift\"><tr><th>Resource</th><th>Changed outside Plinth (state → observed)</th></tr>\n";
    for (const auto& d : *v.drift) {
      std::string what = d.gone ? "gone" + (d.reason.empty() ? std::string() : " (" + d.reason + ")") : "";
      for (const auto& c : d.changes)
        what += (what.empty() ? "" : "; ") + c.path + ": " + plan::change_text(Action::Update, c);
      out += "<tr><td><code>" + e(d.address) + "</code></td><td class=\"v\">" + e(what) + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  out += "<h2>Changes</h2>\n";
  if (rows.empty()) out += "<p>None.</p>\n";
  else
    out += "<div class=\"row head\"><span>Pool or resource</span><span>create</span><span>update</span>"
           "<span>replace</span><span>destroy</span><span>policy</span></div>\n";
  int opened = 0;
  for (size_t i : order) {
    const Row& r = rows[i];
    size_t counts[4] = {0, 0, 0, 0};
    for (const auto* g : r.groups) counts[action_column(g->action())] += g->members.size();
    const char* cls[4] = {"c", "u", "r", "d"};
    // Open from the start: what a reviewer must not miss (a replace, a delete, a blocking finding), the first 20.
    bool blocked_here = false;
    for (const auto* x : r.findings) blocked_here = blocked_here || x->blocking;
    const bool open = (r.rank <= 1 || blocked_here) && opened++ < 20;
    out += "<details class=\"pool\" id=\"row-" + std::to_string(i) + "\"" + (open ? " open" : "") +
           "><summary class=\"row\"><span><code>" + e(r.name) + "</code></span>";
    for (int c = 0; c < 4; ++c)
      out += std::string("<span class=\"") + (counts[c] ? cls[c] : "z") + "\">" + std::to_string(counts[c]) + "</span>";
    size_t blocks = 0, warns = 0;
    for (const auto* x : r.findings) ++(x->blocking ? blocks : warns);
    out += "<span>";
    if (blocks) out += "<span class=\"badge block\">" + std::to_string(blocks) + " blocks</span>";
    if (warns) out += "<span class=\"badge warn\">" + std::to_string(warns) + " warns</span>";
    out += "</span></summary>\n<div class=\"body\">\n";
    if (!r.findings.empty()) out += findings_html(r.findings);
    std::vector<const Group*> gs = r.groups;
    std::stable_sort(gs.begin(), gs.end(), [](const Group* a, const Group* b) { return rank(a->action()) < rank(b->action()); });
    for (const auto* g : gs) out += group_html(*g);
    out += "</div></details>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace plan_view_internal

// Their helpers are in a namespace of their own, not an anonymous one: the
// unity build compiles this file with the audit reports, whose helpers have
// the same names.
std::string plan_markdown(const PlanView& v, size_t limit) { return plan_view_internal::markdown(v, limit); }
std::string plan_html(const PlanView& v) { return plan_view_internal::html(v); }

}  // namespace plinth::audit
