#include "engine/cli/render_events.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>

#include "engine/cli/common.h"
#include "engine/core/strings.h"
#include "engine/plan/format.h"
#include "engine/policy/listing.h"
#include "engine/provider/registry.h"

namespace plinth::cli {
namespace {

std::string seconds(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

/// "10s" from ten seconds on (Terraform's "[10s elapsed]"), "0.5s" below.
std::string elapsed_text(std::chrono::milliseconds d) {
  if (d >= std::chrono::seconds(10)) return std::to_string(d.count() / 1000) + "s";
  return seconds(d);
}

const char* done_verb(plan::Action a) {
  switch (a) {
    case plan::Action::Create: return "created";
    case plan::Action::Update: return "updated";
    case plan::Action::Replace: return "replaced";
    case plan::Action::Delete: return "destroyed";
    case plan::Action::NoOp: break;
  }
  return "unchanged";
}

const char* running_verb(plan::Action a) {
  switch (a) {
    case plan::Action::Create: return "creating";
    case plan::Action::Update: return "updating";
    case plan::Action::Replace: return "replacing";
    case plan::Action::Delete: return "destroying";
    case plan::Action::NoOp: break;
  }
  return "working";
}

/// What a finished operation did, said plainly: "created", or for a type
/// that is only recorded in state "recorded in state (recorded only: no
/// cluster configured)" so nobody reads it as done.
std::string done_text(const std::string& address, plan::Action a) {
  auto parts = parse_address(address);
  const ResourceType* t = parts ? find_resource_type(parts->type) : nullptr;
  // The logical provider's types (stacks, VLANs, tiers, ...) exist only in
  // the blueprint and the state: deleting one destroys nothing.
  if (t && t->recorded_only.empty() && t->provider == "plinth" && a == plan::Action::Delete)
    return "removed from state";
  if (!t || t->recorded_only.empty()) return done_verb(a);
  return std::string(a == plan::Action::Delete ? "removed from state" : "recorded in state") + " (" +
         t->recorded_only + ")";
}

std::string id_of(const Resource& r) {
  return r.computed.value("id", Json("")).is_string() ? r.computed.value("id", "") : "";
}

std::string describe(const policy::PolicyInfo& p) {
  std::string controls = policy::controls_text(p);
  return "  policy " + p.id + " (" + p.enforcement + ", " + p.severity + "): " + p.title +
         (controls.empty() ? "" : " [" + controls + "]") + "\n";
}

/// "Placement:", then per pool and distinct placement of the objects created
/// (the computed keys their type declares, ResourceType::placement) how many
/// went there and which: what a capacity fallback chose, each object once.
void print_placement(Io& io, const apply::Report& report) {
  struct Group {
    std::vector<int> indices;
    std::vector<std::string> singles;  // addresses without an index
  };
  std::map<std::string, Group> groups;  // "TYPE.NAME: where"
  for (const auto& o : report.outcomes) {
    if (o.status != apply::OutcomeStatus::Succeeded || o.computed.empty()) continue;
    auto parts = parse_address(o.address);
    const ResourceType* type = parts ? find_resource_type(parts->type) : nullptr;
    if (!type || type->placement.empty()) continue;
    std::string where;
    for (const auto& key : type->placement) {
      auto it = o.computed.find(key);
      if (it == o.computed.end() || (it->is_string() && it->get<std::string>().empty())) continue;
      if (!where.empty()) where += ", ";
      where += key + " " + (it->is_string() ? it->get<std::string>() : it->dump());
    }
    if (where.empty()) continue;
    Group& g = groups[parts->type + "." + parts->name + ": " + safe_text(where)];
    if (parts->index >= 0) g.indices.push_back(parts->index);
    else g.singles.push_back(o.address);
  }
  if (groups.empty()) return;
  std::fprintf(io.out, "Placement:\n");
  for (const auto& [what, g] : groups) {
    const size_t n = g.indices.size() + g.singles.size();
    std::string which = g.indices.empty() ? join(g.singles, ", ") : index_ranges(g.indices);
    if (!g.indices.empty() && !g.singles.empty()) which += ", " + join(g.singles, ", ");
    std::fprintf(io.out, "  %zu x %s: %s\n", n, what.c_str(), which.c_str());
  }
}

}  // namespace

Diagnostic verdict_diagnostic(const policy::Verdict& v, const policy::PolicyInfo& p) {
  Diagnostic d{v.policy, Severity::Warning, v.message, v.loc, v.address, ""};
  switch (v.outcome) {
    case policy::Outcome::Fail: d.severity = p.mandatory() ? Severity::Error : Severity::Warning; break;
    case policy::Outcome::Error:
      d.severity = p.mandatory() ? Severity::Error : Severity::Warning;
      d.message = "policy " + v.policy + " could not run: " + v.message;
      d.hint = "fix the policy; a mandatory policy that cannot run blocks like a failure";
      break;
    case policy::Outcome::Waived:
      d.severity = Severity::Info;
      d.message = "waived: " + v.message;
      d.hint = "waiver at " + v.waiver_loc.str() + ": " + v.waiver_justification + " (approved by " +
               v.waiver_approver + ")";
      break;
    case policy::Outcome::Pass:
    case policy::Outcome::NotApplicable: break;
  }
  return d;
}

// ---- the human view ---------------------------------------------------------

HumanView::HumanView(Io& io, std::string command, bool drift_to_stdout)
    : io_(io), command_(std::move(command)), drift_to_stdout_(drift_to_stdout) {}

void HumanView::diagnostics(const Diagnostics& ds) {
  clear_bar();
  print_diagnostics(ds, io_);
  draw_bar();
}

void HumanView::error(const std::string& message) {
  clear_bar();
  fail(io_, command_, message);
  draw_bar();
}

void HumanView::warning(const std::string& line) {
  clear_bar();
  std::fprintf(io_.err, "%s\n", line.c_str());
  draw_bar();
}

void HumanView::note(const std::string& line) {
  clear_bar();
  std::fprintf(io_.err, "%s\n", line.c_str());
  draw_bar();
}

void HumanView::drift(const std::vector<apply::Drift>& changed, const std::vector<apply::Drift>& gone) {
  FILE* out = drift_to_stdout_ ? io_.out : io_.err;
  if (!gone.empty())
    std::fprintf(out, "Gone: %zu resource(s) removed by their provider, not by a person:\n%s\n", gone.size(),
                 apply::drift_text(gone).c_str());
  if (!changed.empty())
    std::fprintf(out, "Drift: %zu resource(s) changed outside Plinth (state -> observed):\n%s\n", changed.size(),
                 apply::drift_text(changed).c_str());
}

void HumanView::adopted(const std::string& lineage, const std::vector<Resource>& resources) {
  std::fprintf(io_.err, "Adopted: %zu object(s) made for this state (lineage %s) but missing from it:\n",
               resources.size(), lineage.c_str());
  for (const auto& a : resources) {
    const std::string id = id_of(a);
    std::fprintf(io_.err, "  + %s%s\n", a.address.c_str(), id.empty() ? "" : (" (" + safe_text(id) + ")").c_str());
  }
}

void HumanView::superseded(const std::vector<Resource>& resources) {
  std::fprintf(io_.err,
               "Superseded: %zu object(s) made for this state at an address it records with another object; "
               "recorded as deposed, the next apply removes them:\n",
               resources.size());
  for (const auto& d : resources) {
    const std::string id = id_of(d);
    std::fprintf(io_.err, "  - %s%s\n", d.address.c_str(), id.empty() ? "" : (" (" + safe_text(id) + ")").c_str());
  }
}

void HumanView::policy_checked(const run::PolicyChecked& c) {
  const policy::Evaluation& eval = *c.evaluation;
  bool color = io_.err_tty && !std::getenv("NO_COLOR");
  print_diagnostics(eval.diagnostics, io_);
  for (const auto& v : eval.verdicts) {
    const policy::PolicyInfo* p = eval.find(v.policy);
    if (!p || !policy::is_finding(v.outcome)) continue;
    std::string text = format_diagnostic(verdict_diagnostic(v, *p), color) + describe(*p);
    std::fputs(text.c_str(), io_.err);
  }
  std::fprintf(io_.err,
               "policy check: %zu policies run, %d mandatory failure(s), %d advisory warning(s), %d waived, %d "
               "error(s)%s\n",
               eval.policies.size(), c.mandatory, c.advisory, c.waived, c.errors,
               eval.skipped.empty()
                   ? ""
                   : ("; " + std::to_string(eval.skipped.size()) + " not selected by metadata.compliance").c_str());
  // A waiver accepts a policy's failure; it cannot fix a broken pack or
  // waivers file, so it is only offered when a policy failed.
  if (c.blocked && c.mandatory > 0)
    std::fprintf(io_.err, "policy check failed: fix the errors above, or accept a failure with a waiver in %s\n",
                 c.waivers_path.c_str());
  else if (c.blocked)
    std::fprintf(io_.err, "policy check failed: fix the errors above (docs/policy-authoring.md)\n");
}

void HumanView::planned(const plan::Plan& plan) {
  std::string text = plan::to_text(plan, {io_.color, io_.group});
  std::fwrite(text.data(), 1, text.size(), io_.out);
  total_ = static_cast<size_t>(plan.summary().changes());
}

void HumanView::operation(const run::Operation& op) {
  applying_ = true;
  std::string line;
  switch (op.phase) {
    case run::Operation::Phase::Started: ++in_flight_; break;
    case run::Operation::Phase::Retrying:
      line = command_ + ": " + op.address + ": attempt " + std::to_string(op.attempt) + " failed, retrying in " +
             seconds(op.wait) + ": " + op.message;
      break;
    case run::Operation::Phase::Running:
      line = command_ + ": " + op.address + ": still " + running_verb(op.action) + "... [" +
             elapsed_text(op.elapsed) + " elapsed]";
      break;
    case run::Operation::Phase::Finished:
      --in_flight_;
      ++done_;
      if (!op.ok) ++failed_;
      line = command_ + ": " + op.address + ": " +
             (op.ok ? done_text(op.address, op.action) : std::string(plan::to_string(op.action)) + " failed") + " (" +
             seconds(op.elapsed) + ")" + (op.ok ? "" : ": " + op.message);
      break;
  }
  if (!line.empty()) {
    clear_bar();
    std::fprintf(io_.out, "%s\n", safe_text(line).c_str());  // provider errors quote BMC answers
    std::fflush(io_.out);
  }
  draw_bar();
}

void HumanView::clear_bar() {
  if (!io_.err_tty || !drawn_) return;
  std::fputs("\r\033[K", io_.err);
  std::fflush(io_.err);
  drawn_ = false;
}

void HumanView::draw_bar() {
  if (!io_.err_tty || !applying_) return;
  const int width = 30;
  const int filled = total_ ? static_cast<int>(done_ * width / total_) : width;
  std::string bar(static_cast<size_t>(filled), '=');
  bar.resize(width, ' ');
  std::fprintf(io_.err, "\r\033[K[%s] %zu/%zu done, %zu in flight, %zu failed", bar.c_str(), done_, total_, in_flight_,
               failed_);
  std::fflush(io_.err);
  drawn_ = true;
}

void HumanView::applied(const run::Applied& a) {
  clear_bar();
  applying_ = false;
  const apply::Report& report = *a.report;
  const std::string& command = a.operation;
  using apply::OutcomeStatus;
  const size_t ok = report.count(OutcomeStatus::Succeeded), failed = report.count(OutcomeStatus::Failed),
               skipped = report.count(OutcomeStatus::Skipped), not_started = report.count(OutcomeStatus::NotStarted),
               cancelled = report.count(OutcomeStatus::Cancelled);
  std::fprintf(io_.out, "\n%s %s: %zu succeeded, %zu failed, %zu skipped", command == "destroy" ? "Destroy" : "Apply",
               report.ok() ? "complete" : "incomplete", ok, failed, skipped);
  if (not_started) std::fprintf(io_.out, ", %zu not started", not_started);
  if (cancelled) std::fprintf(io_.out, ", %zu cancelled", cancelled);
  std::fprintf(io_.out, ".\n");
  print_placement(io_, report);
  size_t timed_out = 0;
  for (const auto& o : report.outcomes) timed_out += o.timed_out ? 1 : 0;
  if (timed_out) {
    std::fprintf(io_.out, "Timed out (the operation's deadline passed; see the provider's *_deadline options):\n");
    for (const auto& o : report.outcomes)
      if (o.timed_out) std::fprintf(io_.out, "  %s (%s)\n", o.address.c_str(), plan::to_string(o.action));
  }
  for (OutcomeStatus s : {OutcomeStatus::Failed, OutcomeStatus::Skipped, OutcomeStatus::Cancelled}) {
    if (!report.count(s)) continue;
    std::string heading = apply::to_string(s);
    heading[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(heading[0])));
    std::fprintf(io_.out, "%s:\n", heading.c_str());
    for (const auto& o : report.outcomes)
      if (o.status == s)
        std::fprintf(io_.out, "  %s (%s): %s\n", o.address.c_str(), plan::to_string(o.action),
                     safe_text(o.error).c_str());
  }
  std::fflush(io_.out);
  const auto serial = static_cast<unsigned long long>(report.final_serial);
  if (!report.journal_error.empty() && !report.fallback_journal.empty())
    std::fprintf(io_.err,
                 "plinth %s: %s; stopped: started no new operation. The %zu operation(s) that completed after that are "
                 "kept in the %s (serial %llu). When the state is reachable again, the next apply writes them into it, "
                 "or run: plinth state push-journal --state %s\n",
                 command.c_str(), report.journal_error.c_str(), report.fallback_records,
                 report.fallback_journal.c_str(), serial, a.state_path.c_str());
  else if (!report.journal_error.empty())
    std::fprintf(io_.err, "plinth %s: %s; stopped. Completed operations up to serial %llu are recorded.\n",
                 command.c_str(), report.journal_error.c_str(), serial);
  if (report.cancelled)
    std::fprintf(io_.err,
                 "plinth %s: interrupted: %zu of %zu operations completed and are recorded in state %s (serial %llu); "
                 "%zu not started%s. Re-running plinth %s converges.\n",
                 command.c_str(), ok, a.total, a.state_path.c_str(), serial, not_started,
                 cancelled ? (", " + std::to_string(cancelled) + " cancelled in flight").c_str() : "",
                 command.c_str());
  else if (failed || skipped)
    std::fprintf(io_.err,
                 "plinth %s: %zu operation(s) failed and %zu were skipped; the %zu that succeeded are recorded in "
                 "state %s. Fix the errors above and run plinth %s again.\n",
                 command.c_str(), failed, skipped, ok, a.state_path.c_str(), command.c_str());
}

// ---- the JSON view ----------------------------------------------------------

namespace {

std::string timestamp() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t t = system_clock::to_time_t(now);
  const auto us = duration_cast<microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[32], frac[16];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(frac, sizeof frac, ".%06dZ", static_cast<int>(us));
  return std::string(date) + frac;
}

Json where(const SourceLoc& loc) {
  if (!loc.known()) return nullptr;
  return {{"file", loc.file}, {"line", loc.line}, {"column", loc.column}};
}

Json value_of(const plan::AttributeChange& c, const Shared<Json>& v) {
  if (!v) return nullptr;
  if (c.sensitive) return "(sensitive)";
  return *v;
}

Json changes_of(const std::vector<plan::AttributeChange>& changes) {
  Json out = Json::array();
  for (const auto& c : changes)
    out.push_back({{"path", c.path}, {"before", value_of(c, c.before)}, {"after", value_of(c, c.after)}});
  return out;
}

}  // namespace

JsonView::JsonView(Io& io, std::string command) : io_(io), command_(std::move(command)) {
  emit("info", "plinth " + std::string(PLINTH_VERSION), "version", {{"plinth", PLINTH_VERSION}, {"ui", "1.0"}});
}

void JsonView::emit(const std::string& level, const std::string& message, const std::string& type, Json fields) {
  Json line = {{"@level", level}, {"@message", message}, {"@module", "plinth.ui"}, {"@timestamp", timestamp()},
               {"type", type}};
  for (auto& [k, v] : fields.items()) line[k] = std::move(v);
  std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace);
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), io_.out);
  std::fflush(io_.out);
}

void JsonView::diagnostics(const Diagnostics& ds) {
  for (const auto& d : ds) {
    const char* severity = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "info";
    emit(d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warn" : "info",
         std::string(severity == std::string("error") ? "Error: " : severity == std::string("warning") ? "Warning: " : "") +
             d.message,
         "diagnostic",
         {{"diagnostic",
           {{"severity", severity}, {"code", d.code}, {"summary", d.message}, {"detail", d.hint},
            {"address", d.address}, {"range", where(d.loc)}}}});
  }
}

void JsonView::error(const std::string& message) {
  emit("error", "Error: " + message, "diagnostic",
       {{"diagnostic", {{"severity", "error"}, {"code", ""}, {"summary", message}, {"detail", ""}, {"address", ""},
                        {"range", nullptr}}}});
}

void JsonView::warning(const std::string& line) {
  emit("warn", line, "diagnostic",
       {{"diagnostic", {{"severity", "warning"}, {"code", ""}, {"summary", line}, {"detail", ""}, {"address", ""},
                        {"range", nullptr}}}});
}

void JsonView::note(const std::string& line) { emit("info", line, "log", Json::object()); }

Json drift_json(const apply::Drift& d, bool by_provider) {
  return {{"resource", {{"addr", d.address}}}, {"action", d.gone ? "delete" : "update"},
          {"by_provider", by_provider}, {"reason", d.reason}, {"changes", changes_of(d.changes)}};
}

void JsonView::drift(const std::vector<apply::Drift>& changed, const std::vector<apply::Drift>& gone) {
  for (const auto* list : {&gone, &changed})
    for (const auto& d : *list)
      emit("info", d.address + ": drift detected (" + (d.gone ? "gone" : "changed") + ")", "resource_drift",
           {{"change", drift_json(d, list == &gone)}});
}

void JsonView::adopted(const std::string& lineage, const std::vector<Resource>& resources) {
  for (const auto& r : resources)
    emit("info", r.address + ": adopted into the state (lineage " + lineage + ")", "resource_adopted",
         {{"resource", {{"addr", r.address}, {"id", id_of(r)}}}, {"lineage", lineage}});
}

void JsonView::superseded(const std::vector<Resource>& resources) {
  for (const auto& r : resources)
    emit("info", r.address + ": superseded object recorded as deposed", "resource_superseded",
         {{"resource", {{"addr", r.address}, {"id", id_of(r)}}}});
}

void JsonView::policy_checked(const run::PolicyChecked& c) {
  const policy::Evaluation& eval = *c.evaluation;
  diagnostics(eval.diagnostics);
  for (const auto& v : eval.verdicts) {
    const policy::PolicyInfo* p = eval.find(v.policy);
    if (!p || !policy::is_finding(v.outcome)) continue;
    const bool blocks = p->mandatory() && (v.outcome == policy::Outcome::Fail || v.outcome == policy::Outcome::Error);
    Json verdict = {{"policy", p->id},         {"title", p->title},       {"outcome", policy::to_string(v.outcome)},
                    {"enforcement", p->enforcement}, {"severity", p->severity}, {"address", v.address},
                    {"message", v.message},    {"range", where(v.loc)}, {"blocks", blocks}};
    if (v.outcome == policy::Outcome::Waived)
      verdict["waiver"] = {{"justification", v.waiver_justification}, {"approver", v.waiver_approver},
                           {"range", where(v.waiver_loc)}};
    emit(blocks ? "error" : "warn", p->id + ": " + v.message, "policy_verdict", {{"verdict", std::move(verdict)}});
  }
  emit(c.blocked ? "error" : "info",
       "policy check: " + std::to_string(eval.policies.size()) + " policies run, " + std::to_string(c.mandatory) +
           " mandatory failure(s)",
       "policy_summary",
       {{"policies", eval.policies.size()}, {"mandatory_failures", c.mandatory}, {"advisory_warnings", c.advisory},
        {"waived", c.waived}, {"errors", c.errors}, {"blocked", c.blocked}});
}

void JsonView::planned(const plan::Plan& plan) {
  for (const auto& rc : plan.changes) {
    if (rc.action == plan::Action::NoOp) continue;
    Json change = {{"resource", {{"addr", rc.address}, {"resource_type", rc.type}}},
                   {"action", plan::to_string(rc.action)}};
    if (rc.action == plan::Action::Replace) change["forced_by"] = rc.forced_by();
    if (rc.deposed) change["deposed"] = true;
    emit("info", rc.address + ": plan to " + plan::to_string(rc.action), "planned_change", {{"change", change}});
  }
  const plan::Summary s = plan.summary();
  emit("info", plan::summary_line(plan), "change_summary",
       {{"changes", {{"add", s.create}, {"change", s.update}, {"replace", s.replace}, {"remove", s.remove},
                     {"operation", command_}}}});
}

void JsonView::operation(const run::Operation& op) {
  const double elapsed = static_cast<double>(op.elapsed.count()) / 1000.0;
  Json hook = {{"resource", {{"addr", op.address}}}, {"action", plan::to_string(op.action)}};
  switch (op.phase) {
    case run::Operation::Phase::Started:
      emit("info", op.address + ": " + running_verb(op.action) + "...", "apply_start", {{"hook", hook}});
      break;
    case run::Operation::Phase::Retrying:
      hook["attempt"] = op.attempt;
      hook["wait_seconds"] = static_cast<double>(op.wait.count()) / 1000.0;
      hook["error"] = op.message;
      emit("warn", op.address + ": attempt " + std::to_string(op.attempt) + " failed, retrying", "apply_retry",
           {{"hook", hook}});
      break;
    case run::Operation::Phase::Running:
      hook["elapsed_seconds"] = elapsed;
      emit("info",
           op.address + ": still " + running_verb(op.action) + "... [" + elapsed_text(op.elapsed) + " elapsed]",
           "apply_progress", {{"hook", hook}});
      break;
    case run::Operation::Phase::Finished:
      hook["elapsed_seconds"] = elapsed;
      if (op.ok) {
        emit("info", op.address + ": " + done_text(op.address, op.action), "apply_complete", {{"hook", hook}});
      } else {
        hook["error"] = op.message;
        emit("error", op.address + ": " + plan::to_string(op.action) + " failed: " + op.message, "apply_errored",
             {{"hook", hook}});
      }
      break;
  }
}

void JsonView::applied(const run::Applied& a) {
  const apply::Report& r = *a.report;
  using apply::OutcomeStatus;
  Json outcomes = Json::array();
  for (const auto& o : r.outcomes) {
    Json e = {{"addr", o.address}, {"action", plan::to_string(o.action)}, {"status", apply::to_string(o.status)},
              {"elapsed_seconds", static_cast<double>(o.elapsed.count()) / 1000.0}, {"attempts", o.attempts},
              {"timed_out", o.timed_out}};
    if (!o.error.empty()) e["error"] = o.error;
    outcomes.push_back(std::move(e));
  }
  Json fields = {{"operation", a.operation},
                 {"complete", r.ok()},
                 {"total", a.total},
                 {"succeeded", r.count(OutcomeStatus::Succeeded)},
                 {"failed", r.count(OutcomeStatus::Failed)},
                 {"skipped", r.count(OutcomeStatus::Skipped)},
                 {"not_started", r.count(OutcomeStatus::NotStarted)},
                 {"cancelled", r.count(OutcomeStatus::Cancelled)},
                 {"interrupted", r.cancelled},
                 {"state",
                  {{"path", a.state_path},
                   {"serial", r.final_serial},
                   {"saves", r.saves},
                   {"bytes_written", r.state_bytes_written}}},
                 {"outcomes", std::move(outcomes)}};
  if (!r.journal_error.empty()) fields["journal_error"] = r.journal_error;
  if (!r.fallback_journal.empty()) fields["fallback_journal"] = r.fallback_journal;
  emit(r.ok() ? "info" : "error",
       std::string(a.operation == "destroy" ? "Destroy" : "Apply") + (r.ok() ? " complete" : " incomplete") + ": " +
           std::to_string(r.count(OutcomeStatus::Succeeded)) + " succeeded, " +
           std::to_string(r.count(OutcomeStatus::Failed)) + " failed",
       "apply_summary", std::move(fields));
}

std::unique_ptr<run::Events> make_view(Io& io, const std::string& command, bool json, bool drift_to_stdout) {
  if (json) return std::make_unique<JsonView>(io, command);
  return std::make_unique<HumanView>(io, command, drift_to_stdout);
}

}  // namespace plinth::cli
