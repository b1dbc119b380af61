#include "engine/audit/report.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <set>

#include "engine/core/files.h"
#include "engine/core/strings.h"

namespace fs = std::filesystem;

namespace plinth::audit {

const char* to_string(ControlStatus s) {
  switch (s) {
    case ControlStatus::Fail: return "fail";
    case ControlStatus::Error: return "error";
    case ControlStatus::Waived: return "waived";
    case ControlStatus::Partial: return "partial";
    case ControlStatus::Pass: return "pass";
    case ControlStatus::NotApplicable: return "not_applicable";
    case ControlStatus::NotEvaluated: return "not_evaluated";
    case ControlStatus::NotCovered: return "not_covered";
  }
  return "not_covered";
}

std::string utc_timestamp() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<std::vector<FrameworkCatalog>> load_frameworks(const std::vector<std::string>& policy_dirs) {
  std::vector<FrameworkCatalog> out;
  for (const auto& dir : policy_dirs) {
    fs::path folder = fs::path(dir) / "frameworks";
    std::vector<fs::path> files;
    for (const auto& f : list_files(folder.string()))  // also the compiled-in packs (engine/core/embedded.h)
      if (fs::path(f).extension() == ".yaml" && fs::path(f).parent_path() == folder) files.push_back(f);
    for (const auto& f : files) {
      FrameworkCatalog fw;
      try {
        auto text = read_file(f.string());
        if (!text) return text.error();
        YAML::Node doc = YAML::Load(*text);
        fw.name = doc["framework"].as<std::string>("");
        fw.title = doc["title"].as<std::string>("");
        if (fw.name.empty())
          return Error::invalid(f.string() + ": missing 'framework' (the name policies use in controls, e.g. hipaa)");
        for (const auto& c : doc["controls"]) {
          FrameworkCatalog::Control ctl{c["id"].as<std::string>(""), c["title"].as<std::string>(""), {}};
          if (ctl.id.empty())
            return Error::invalid(f.string() + ":" + std::to_string(c.Mark().line + 1) +
                                  ": a control needs an 'id' (e.g. id: \"164.312(a)(1)\")");
          if (const YAML::Node cov = c["covers"]) {
            if (!cov.IsSequence())
              return Error::invalid(f.string() + ":" + std::to_string(cov.Mark().line + 1) + ": 'covers' of control " +
                                    ctl.id + " must list paragraphs, e.g. covers: [\"164.312(a)\"]");
            for (const auto& x : cov) ctl.covers.push_back(x.as<std::string>());
          }
          if (const YAML::Node specs = c["specs"]) {
            if (!specs.IsSequence())
              return Error::invalid(f.string() + ":" + std::to_string(specs.Mark().line + 1) + ": 'specs' of control " +
                                    ctl.id + " must list specifications, e.g. specs: [{id: \"164.308(a)(1)(ii)(A)\", "
                                    "title: \"Risk analysis\", required: true}]");
            for (const auto& x : specs) {
              Specification s{x["id"].as<std::string>(""), x["title"].as<std::string>(""), x["required"].as<bool>(false)};
              if (s.id.empty())
                return Error::invalid(f.string() + ":" + std::to_string(x.Mark().line + 1) + ": a specification of " +
                                      ctl.id + " needs an 'id'");
              ctl.specs.push_back(std::move(s));
            }
          }
          fw.controls.push_back(std::move(ctl));
        }
      } catch (const YAML::Exception& e) {
        return Error::invalid(f.string() + ": " + e.what() +
                              "; expected framework:, title:, controls: [{id, title, covers, specs: [{id, title, required}]}]");
      }
      auto same = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.name == fw.name; });
      if (same != out.end()) *same = std::move(fw);  // a later policy dir overrides the built-in list
      else out.push_back(std::move(fw));
    }
  }
  return out;
}

namespace {

/// True when `cited` is `paragraph` or one of its sub-paragraphs
/// ("164.312(a)(2)(iv)" under "164.312(a)"; "Art.32(1)(c)" under "Art.32").
bool under(const std::string& cited, const std::string& paragraph) {
  if (cited == paragraph) return true;
  return cited.size() > paragraph.size() && cited.compare(0, paragraph.size(), paragraph) == 0 &&
         (cited[paragraph.size()] == '(' || cited[paragraph.size()] == '.');
}

/// True when a policy citing `cited` evidences catalog control `control`: the
/// control itself, its sub-paragraphs, or a paragraph the control heads (a
/// HIPAA standard numbered "(1)" covers its implementation specifications).
bool covers(const std::string& cited, const FrameworkCatalog::Control& control) {
  if (under(cited, control.id)) return true;
  return std::any_of(control.covers.begin(), control.covers.end(), [&](const std::string& p) { return under(cited, p); });
}

ControlStatus worst(ControlStatus a, ControlStatus b) { return static_cast<int>(a) < static_cast<int>(b) ? a : b; }

ControlStatus from_outcome(policy::Outcome o) {
  switch (o) {
    case policy::Outcome::Fail: return ControlStatus::Fail;
    case policy::Outcome::Error: return ControlStatus::Error;
    case policy::Outcome::Waived: return ControlStatus::Waived;
    case policy::Outcome::Pass: return ControlStatus::Pass;
    case policy::Outcome::NotApplicable: return ControlStatus::NotApplicable;
  }
  return ControlStatus::Pass;
}

int days_between(const std::string& from, const std::string& to) {
  auto parse = [](const std::string& d) {
    std::tm tm{};
    tm.tm_year = std::stoi(d.substr(0, 4)) - 1900;
    tm.tm_mon = std::stoi(d.substr(5, 2)) - 1;
    tm.tm_mday = std::stoi(d.substr(8, 2));
    return timegm(&tm);
  };
  if (from.size() < 10 || to.size() < 10) return 0;
  return static_cast<int>((parse(to) - parse(from)) / 86400);
}

std::vector<FrameworkView> framework_views(const Report& r, const std::vector<FrameworkCatalog>& catalogs) {
  std::set<std::string> names;
  for (const auto& c : catalogs) names.insert(c.name);
  for (const auto* list : {&r.policies, &r.skipped})
    for (const auto& p : *list)
      for (const auto& [fw, ids] : p.controls) names.insert(fw);

  std::map<std::string, ControlStatus> policy_status;
  for (const auto& v : r.verdicts) {
    auto it = policy_status.find(v.policy);
    ControlStatus s = from_outcome(v.outcome);
    policy_status[v.policy] = it == policy_status.end() ? s : worst(it->second, s);
  }

  std::vector<FrameworkView> out;
  for (const auto& name : names) {
    FrameworkView view;
    view.name = name;
    view.selected = std::find(r.compliance.begin(), r.compliance.end(), name) != r.compliance.end();
    auto cat = std::find_if(catalogs.begin(), catalogs.end(), [&](const auto& c) { return c.name == name; });
    if (cat != catalogs.end()) {
      view.title = cat->title;
      for (const auto& c : cat->controls) {
        view.controls.push_back({c.id, c.title, ControlStatus::NotCovered, {}, {}, true});
        view.controls.back().covers = c.covers;
      }
    }
    auto catalog_control = [&](const std::string& id) -> const FrameworkCatalog::Control* {
      if (cat == catalogs.end()) return nullptr;
      for (const auto& c : cat->controls)
        if (c.id == id) return &c;
      return nullptr;
    };
    // Cited controls that no catalog entry covers become controls of their own.
    std::set<std::string> extra;
    for (const auto* list : {&r.policies, &r.skipped})
      for (const auto& p : *list) {
        auto it = p.controls.find(name);
        if (it == p.controls.end()) continue;
        for (const auto& id : it->second) {
          bool known = std::any_of(view.controls.begin(), view.controls.end(), [&](const ControlView& c) {
            const auto* cc = catalog_control(c.id);
            return c.in_catalog && cc && covers(id, *cc);
          });
          if (!known) extra.insert(id);
        }
      }
    for (const auto& id : extra) view.controls.push_back({id, "", ControlStatus::NotCovered, {}, {}, false});

    for (auto& c : view.controls) {
      const FrameworkCatalog::Control own{c.id, c.title, {}, {}};
      const FrameworkCatalog::Control& match = c.in_catalog && catalog_control(c.id) ? *catalog_control(c.id) : own;
      std::set<std::string> evidenced;  // specifications cited by a policy that had something to check
      bool any = false;
      ControlStatus st = ControlStatus::NotEvaluated;
      for (const auto* list : {&r.policies, &r.skipped})
        for (const auto& p : *list) {
          auto it = p.controls.find(name);
          if (it == p.controls.end()) continue;
          if (!std::any_of(it->second.begin(), it->second.end(), [&](const auto& id) { return covers(id, match); }))
            continue;
          c.policies.push_back(p.id);
          if (list == &r.skipped) {
            c.not_evaluated.push_back(p.id);
            continue;
          }
          auto ps = policy_status.find(p.id);
          if (ps != policy_status.end()) {
            // Pass beats not applicable (worse ranks first): one policy with evidence is evidence.
            st = any ? worst(st, ps->second) : ps->second;
            any = true;
            if (ps->second == ControlStatus::Pass || ps->second == ControlStatus::Fail ||
                ps->second == ControlStatus::Waived)
              for (const auto& s : match.specs)
                if (std::any_of(it->second.begin(), it->second.end(), [&](const auto& id) { return under(id, s.id); }))
                  evidenced.insert(s.id);
          }
        }
      for (const auto& s : match.specs)
        if (!evidenced.count(s.id)) c.missing.push_back(s);
      // A covering policy that did not run leaves the control unproven: not evaluated,
      // unless something that did run already failed, errored or was waived.
      if (!c.not_evaluated.empty() && st == ControlStatus::Pass) st = ControlStatus::NotEvaluated;
      // Passing policies that leave a specification without evidence prove part of the control.
      if (st == ControlStatus::Pass && !c.missing.empty()) st = ControlStatus::Partial;
      // A framework the blueprint does not select claims nothing: its controls show what
      // other frameworks' policies found (failures stay visible) but never pass.
      if (!view.selected && (st == ControlStatus::Pass || st == ControlStatus::Partial ||
                             st == ControlStatus::NotApplicable))
        st = ControlStatus::NotEvaluated;
      c.status = c.policies.empty() ? ControlStatus::NotCovered : st;
    }
    out.push_back(std::move(view));
  }
  return out;
}

}  // namespace

const policy::PolicyInfo* Report::find(const std::string& id) const {
  for (const auto& p : policies)
    if (p.id == id) return &p;
  return nullptr;
}

std::map<std::string, int> Report::counts() const {
  std::map<std::string, int> c{{"pass", 0}, {"fail", 0}, {"waived", 0}, {"error", 0}, {"not_applicable", 0}};
  for (const auto& v : verdicts) c[policy::to_string(v.outcome)]++;
  return c;
}

std::map<std::string, int> Report::policy_outcomes() const {
  std::map<std::string, int> c{{"pass", 0},  {"fail", 0},           {"waived", 0},
                               {"error", 0}, {"not_applicable", 0}, {"not_evaluated", 0}};
  std::map<std::string, ControlStatus> by_policy;
  for (const auto& v : verdicts) {
    auto it = by_policy.find(v.policy);
    ControlStatus s = from_outcome(v.outcome);
    by_policy[v.policy] = it == by_policy.end() ? s : worst(it->second, s);
  }
  for (const auto& p : policies) {
    auto it = by_policy.find(p.id);
    c[it == by_policy.end() ? "not_evaluated" : to_string(it->second)]++;
  }
  c["not_evaluated"] += static_cast<int>(skipped.size());
  return c;
}

int Report::mandatory_failures() const {
  int n = 0;
  for (const auto& v : verdicts) {
    const auto* p = find(v.policy);
    if (p && p->mandatory() && (v.outcome == policy::Outcome::Fail || v.outcome == policy::Outcome::Error)) n++;
  }
  return n;
}

std::string Report::repo_path(const std::string& path) const {
  if (path.empty()) return path;
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
  fs::path root = provenance.in_repository ? fs::path(provenance.repository) : fs::current_path(ec);
  fs::path rel = abs.lexically_relative(fs::weakly_canonical(root, ec));
  if (rel.empty() || *rel.begin() == "..") return path;
  return rel.generic_string();
}

Report build_report(const ReportInput& in) {
  Report r;
  r.generated_at = in.generated_at.empty() ? utc_timestamp() : in.generated_at;
  r.provenance = in.provenance;
  r.plan = in.plan;
  r.state_path = in.state_path;
  if (in.blueprint) {
    r.blueprint_name = in.blueprint->metadata.name;
    r.compliance = in.blueprint->metadata.compliance;
    r.files = in.blueprint->files;
  }
  if (in.evaluation) {
    r.policies = in.evaluation->policies;
    r.skipped = in.evaluation->skipped;
    r.policy_files = in.evaluation->hashes;
    r.verdicts = in.evaluation->verdicts;
    r.diagnostics = in.evaluation->diagnostics;
    r.blocked = in.evaluation->blocked();
  }
  for (const auto& w : in.waivers) {
    bool used = std::any_of(r.verdicts.begin(), r.verdicts.end(), [&](const policy::Verdict& v) {
      return v.outcome == policy::Outcome::Waived && v.waiver_loc == w.loc;
    });
    if (used) r.waivers.push_back({w, days_between(in.today, w.expires)});
  }
  r.frameworks = framework_views(r, in.catalogs);
  return r;
}

void attach_observed(Report& r, Observed observed) {
  for (auto& f : r.frameworks)
    for (auto& c : f.controls) {
      const FrameworkCatalog::Control ctl{c.id, c.title, c.covers};
      for (const auto& ob : observed.observations)
        for (const auto& ref : ob.controls) {
          auto colon = ref.find(':');
          if (colon == std::string::npos || ref.substr(0, colon) != f.name || !covers(ref.substr(colon + 1), ctl)) continue;
          c.observed.push_back(ob.summary + (ob.observed_at.empty() ? "" : " (observed " + ob.observed_at + ")"));
          break;
        }
    }
  r.observed = std::move(observed);
}

plinth::Status restrict_to_framework(Report& r, const std::string& name) {
  auto it = std::find_if(r.frameworks.begin(), r.frameworks.end(), [&](const auto& f) { return f.name == name; });
  if (it == r.frameworks.end()) {
    std::string known;
    for (const auto& f : r.frameworks) known += (known.empty() ? "" : ", ") + f.name;
    return Error::invalid("unknown framework '" + name + "'; frameworks with policies or a control list: " +
                          (known.empty() ? "none" : known));
  }
  FrameworkView keep = *it;
  r.frameworks = {keep};
  r.framework_filter = name;
  auto cites = [&](const policy::PolicyInfo& p) { return p.controls.count(name) > 0; };
  std::set<std::string> ids;
  std::vector<policy::PolicyInfo> kept;
  for (const auto& p : r.policies)
    if (cites(p)) {
      ids.insert(p.id);
      kept.push_back(p);
    }
  r.policies = std::move(kept);
  std::erase_if(r.skipped, [&](const auto& p) { return !cites(p); });
  std::erase_if(r.verdicts, [&](const auto& v) { return !ids.count(v.policy); });
  std::erase_if(r.waivers, [&](const auto& w) { return !ids.count(w.waiver.policy); });
  return {};
}

namespace {

nlohmann::json loc_json(const Report& r, const SourceLoc& loc) {
  if (!loc.known()) return nullptr;
  return {{"file", r.repo_path(loc.file)}, {"line", loc.line}, {"column", loc.column}};
}

nlohmann::json policy_json(const Report& r, const policy::PolicyInfo& p) {
  return {{"id", p.id},
          {"title", p.title},
          {"description", p.description},
          {"severity", p.severity},
          {"enforcement", p.enforcement},
          {"pack", p.pack},
          {"controls", p.controls},
          {"location", loc_json(r, p.loc)}};
}

}  // namespace

nlohmann::json to_json(const Report& r) {
  nlohmann::json j;
  j["report_format_version"] = kReportFormatVersion;
  j["kind"] = "plinth-audit-report";
  j["generated_at"] = r.generated_at;
  j["plinth_version"] = r.plinth_version;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : r.files) files.push_back({{"path", r.repo_path(f.path)}, {"sha256", f.sha256}});
  j["blueprint"] = {{"name", r.blueprint_name}, {"compliance", r.compliance}, {"files", files}};
  j["provenance"] = audit::to_json(r.provenance);
  if (r.plan)
    j["plan"] = {{"state", r.state_path},   {"create", r.plan->create}, {"update", r.plan->update},
                 {"replace", r.plan->replace}, {"delete", r.plan->remove}, {"no_op", r.plan->no_op}};
  else
    j["plan"] = nullptr;
  nlohmann::json pf = nlohmann::json::array();
  for (const auto& [path, sha] : r.policy_files) pf.push_back({{"path", r.repo_path(path)}, {"sha256", sha}});
  j["policy_files"] = pf;
  auto counts = r.counts();
  j["summary"] = {{"policies", r.policies.size()},   {"skipped_policies", r.skipped.size()},
                  {"verdicts", r.verdicts.size()},   {"pass", counts["pass"]},
                  {"fail", counts["fail"]},          {"waived", counts["waived"]},
                  {"error", counts["error"]},        {"mandatory_failures", r.mandatory_failures()},
                  {"not_applicable", counts["not_applicable"]},
                  {"blocked", r.blocked},            {"policy_outcomes", r.policy_outcomes()}};
  j["framework_filter"] = r.framework_filter.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.framework_filter);
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& p : r.policies) policies.push_back(policy_json(r, p));
  j["policies"] = policies;
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& p : r.skipped) skipped.push_back(policy_json(r, p));
  j["skipped_policies"] = skipped;
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& v : r.verdicts) {
    const auto* p = r.find(v.policy);
    nlohmann::json vj = {{"policy", v.policy},
                         {"outcome", policy::to_string(v.outcome)},
                         {"severity", p ? p->severity : ""},
                         {"enforcement", p ? p->enforcement : ""},
                         {"controls", p ? nlohmann::json(p->controls) : nlohmann::json::object()},
                         {"address", v.address},
                         {"message", v.message},
                         {"location", loc_json(r, v.loc)},
                         {"waiver", nullptr}};
    if (v.outcome == policy::Outcome::Waived) {
      std::string expires;
      for (const auto& w : r.waivers)
        if (w.waiver.loc == v.waiver_loc) expires = w.waiver.expires;
      vj["waiver"] = {{"justification", v.waiver_justification},
                      {"approver", v.waiver_approver},
                      {"expires", expires},
                      {"location", loc_json(r, v.waiver_loc)}};
    }
    verdicts.push_back(std::move(vj));
  }
  j["verdicts"] = verdicts;
  nlohmann::json waivers = nlohmann::json::array();
  for (const auto& w : r.waivers)
    waivers.push_back({{"policy", w.waiver.policy},
                       {"resource", w.waiver.resource},
                       {"justification", w.waiver.justification},
                       {"approver", w.waiver.approver},
                       {"expires", w.waiver.expires},
                       {"days_left", w.days_left},
                       {"location", loc_json(r, w.waiver.loc)}});
  j["waivers"] = waivers;
  nlohmann::json diags = nlohmann::json::array();
  for (const auto& d : r.diagnostics)
    diags.push_back({{"code", d.code},
                     {"severity", plinth::to_string(d.severity)},
                     {"message", d.message},
                     {"address", d.address},
                     {"hint", d.hint},
                     {"location", loc_json(r, d.loc)}});
  j["diagnostics"] = diags;
  nlohmann::json vdiags = nlohmann::json::array();
  for (const auto& d : r.validation)
    vdiags.push_back({{"code", d.code},
                      {"severity", plinth::to_string(d.severity)},
                      {"message", d.message},
                      {"address", d.address},
                      {"hint", d.hint},
                      {"location", loc_json(r, d.loc)}});
  j["validation"] = {{"valid", r.blueprint_valid()},
                     {"errors", count(r.validation, Severity::Error)},
                     {"warnings", count(r.validation, Severity::Warning)},
                     {"diagnostics", vdiags}};
  nlohmann::json fws = nlohmann::json::array();
  for (const auto& f : r.frameworks) {
    nlohmann::json controls = nlohmann::json::array();
    std::map<std::string, int> tally;
    for (const auto& c : f.controls) {
      tally[to_string(c.status)]++;
      controls.push_back({{"id", c.id},
                          {"title", c.title},
                          {"status", to_string(c.status)},
                          {"policies", c.policies},
                          {"not_evaluated", c.not_evaluated},
                          {"in_catalog", c.in_catalog}});
      if (!c.missing.empty()) {
        nlohmann::json missing = nlohmann::json::array();
        for (const auto& s : c.missing)
          missing.push_back({{"id", s.id}, {"title", s.title}, {"required", s.required}});
        controls.back()["missing"] = missing;
      }
      if (!c.observed.empty()) controls.back()["observed"] = c.observed;
    }
    fws.push_back({{"name", f.name},
                   {"title", f.title},
                   {"selected", f.selected},
                   {"counts", tally},
                   {"controls", controls}});
  }
  j["frameworks"] = fws;
  if (r.observed) {
    nlohmann::json obs = nlohmann::json::array();
    for (const auto& o : r.observed->observations)
      obs.push_back({{"fact", o.fact},
                     {"summary", o.summary},
                     {"controls", o.controls},
                     {"nodes", o.nodes},
                     {"of", o.of},
                     {"observed_at", o.observed_at}});
    nlohmann::json finds = nlohmann::json::array();
    for (const auto& d : r.observed->findings)
      finds.push_back({{"rule", d.code}, {"severity", plinth::to_string(d.severity)}, {"node", d.address},
                       {"message", d.message}, {"fix", d.hint}});
    j["observed"] = {{"source", r.observed->source},
                     {"summary", r.observed->summary},
                     {"observations", obs},
                     {"findings", finds}};
  }
  return j;
}

const std::vector<std::string>& formats() {
  static const std::vector<std::string> f = {"json", "sarif", "junit", "markdown", "html"};
  return f;
}

namespace {

/// Every string in `j` (keys too) through safe_text: text from files Plinth
/// does not control (waivers, policy messages, paths) may be malformed UTF-8,
/// which would make dump() throw, or carry terminal escapes a reader's
/// `jq -r` would print raw.
nlohmann::json safe_strings(const nlohmann::json& j) {
  if (j.is_string()) return safe_text(j.get_ref<const std::string&>());
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : j) out.push_back(safe_strings(v));
    return out;
  }
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[safe_text(it.key())] = safe_strings(it.value());
    return out;
  }
  return j;
}

}  // namespace

Result<std::string> render(const Report& r, const std::string& format) {
  if (format == "json") return safe_strings(to_json(r)).dump(2) + "\n";
  if (format == "sarif") return safe_strings(to_sarif(r)).dump(2) + "\n";
  if (format == "junit") return to_junit(r);
  if (format == "markdown" || format == "md") return to_markdown(r);
  if (format == "html") return to_html(r);
  return Error::invalid("unknown report format '" + format + "'; use one of json, sarif, junit, markdown, html");
}

}  // namespace plinth::audit

namespace plinth::audit {

Result<Report> collect_report(const RunInput& in) {
  ReportInput ri;
  ri.blueprint = in.blueprint;
  ri.evaluation = in.evaluation;
  ri.plan = in.plan;
  ri.state_path = in.state_path;
  ri.today = policy::today_utc();
  std::vector<std::string> files;
  if (in.blueprint)
    for (const auto& f : in.blueprint->files) files.push_back(f.path);
  else
    for (const auto& f : in.files) files.push_back(f.path);
  if (!files.empty()) {
    auto prov = record_provenance(files);
    if (!prov) return Error::invalid("git provenance: " + prov.error().message);
    ri.provenance = std::move(*prov);
  }
  auto catalogs = load_frameworks(in.policy_dirs);
  if (!catalogs) return catalogs.error();
  ri.catalogs = std::move(*catalogs);
  if (!in.waivers_path.empty()) ri.waivers = policy::load_waivers(in.waivers_path).waivers;
  Report r = build_report(ri);
  r.validation = in.validation;
  if (!in.blueprint) r.files = in.files;
  if (!r.blueprint_valid()) r.blocked = true;
  return r;
}

Result<ReportTarget> parse_report_target(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
    return Error::invalid("--report '" + spec + "': expected FORMAT:FILE, e.g. sarif:plinth.sarif or markdown:-");
  ReportTarget t{spec.substr(0, colon), spec.substr(colon + 1)};
  if (t.format == "md") t.format = "markdown";
  if (std::find(formats().begin(), formats().end(), t.format) == formats().end())
    return Error::invalid("--report '" + spec + "': unknown format '" + t.format +
                          "'; use one of json, sarif, junit, markdown, html");
  return t;
}

plinth::Status write_report(const Report& r, const std::string& format, const std::string& path) {
  auto text = render(r, format);
  if (!text) return text.error();
  if (path == "-") {
    std::fwrite(text->data(), 1, text->size(), stdout);
    std::fflush(stdout);
    return {};
  }
  fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  fs::path tmp = target;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << *text;
    if (!out.good()) return Error::invalid("cannot write report " + path + ": check the folder exists and is writable");
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Error::invalid("cannot write report " + path + ": " + ec.message());
  }
  return {};
}

}  // namespace plinth::audit
