#include "engine/cli/execute.h"

#include <cctype>
#include <csignal>
#include <filesystem>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include "engine/apply/executor.h"
#include "engine/provider/registry.h"
#include "engine/cli/policy_gate.h"
#include "engine/core/strings.h"
#include "engine/plan/format.h"
#include "engine/state/journal.h"
#include "engine/provider/registry.h"

namespace plinth::cli {
namespace {

// Set by the signal handler (async-signal-safe: a lock-free atomic store).
// SIGINT (Ctrl-C) first asks for a graceful stop (apply::Cancel::Stop: start
// nothing new, let what is in flight finish), a second one cancels what is
// in flight (Cancel::Now). SIGTERM, which CI runners and service managers
// send before they kill, cancels at once: the apply ends within moments with
// the state holding exactly what completed.
std::atomic<int> g_cancel{0};
static_assert(std::atomic<int>::is_always_lock_free);

void on_signal(int sig) {
  int v = g_cancel.load();
  if (sig == SIGTERM) v = static_cast<int>(apply::Cancel::Now);
  else v = v < 2 ? v + 1 : 2;
  g_cancel.store(v);
}

/// Installs SIGINT/SIGTERM handlers for its lifetime.
class SignalScope {
 public:
  SignalScope() {
    g_cancel.store(0);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

std::string seconds(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(d.count()) / 1000.0);
  return buf;
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

/// What a finished operation did, said plainly: "created", or for a type
/// that is only recorded in state "recorded in state (recorded only: no
/// cluster configured)" so nobody reads it as done.
std::string done_text(const std::string& address, plan::Action a) {
  auto parts = parse_address(address);
  const ResourceType* t = parts ? find_resource_type(parts->type) : nullptr;
  if (!t || t->recorded_only.empty()) return done_verb(a);
  return std::string(a == plan::Action::Delete ? "removed from state" : "recorded in state") + " (" +
         t->recorded_only + ")";
}

/// Progress: one plain line per finished operation (and per retry) on
/// stdout; on a TTY also a redrawn counter and bar on stderr.
class Progress {
 public:
  Progress(Io& io, std::string command, size_t total) : io_(io), command_(std::move(command)), total_(total) {}

  void on_event(const apply::Event& e) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string line;
    switch (e.kind) {
      case apply::Event::Kind::Started:
        ++in_flight_;
        break;
      case apply::Event::Kind::Retrying:
        line = command_ + ": " + e.address + ": attempt " + std::to_string(e.attempt) + " failed, retrying in " +
               seconds(e.wait) + ": " + e.message;
        break;
      case apply::Event::Kind::Finished:
        --in_flight_;
        ++done_;
        if (!e.ok) ++failed_;
        line = command_ + ": " + e.address + ": " +
               (e.ok ? done_text(e.address, e.action) : std::string(plan::to_string(e.action)) + " failed") + " (" +
               seconds(e.elapsed) + ")" + (e.ok ? "" : ": " + e.message);
        break;
    }
    if (!line.empty()) {
      clear_bar();
      std::fprintf(io_.out, "%s\n", safe_text(line).c_str());  // provider errors quote BMC answers
      std::fflush(io_.out);
    }
    draw_bar();
  }
  void note(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    clear_bar();
    std::fprintf(io_.err, "%s\n", line.c_str());
    draw_bar();
  }
  void finish() {
    std::lock_guard<std::mutex> lock(mu_);
    clear_bar();
  }

 private:
  void clear_bar() {
    if (!io_.err_tty || !drawn_) return;
    std::fputs("\r\033[K", io_.err);
    std::fflush(io_.err);
    drawn_ = false;
  }
  void draw_bar() {
    if (!io_.err_tty) return;
    const int width = 30;
    const int filled = total_ ? static_cast<int>(done_ * width / total_) : width;
    std::string bar(static_cast<size_t>(filled), '=');
    bar.resize(width, ' ');
    std::fprintf(io_.err, "\r\033[K[%s] %zu/%zu done, %zu in flight, %zu failed", bar.c_str(), done_, total_,
                 in_flight_, failed_);
    std::fflush(io_.err);
    drawn_ = true;
  }

  std::mutex mu_;
  Io& io_;
  std::string command_;
  size_t total_, done_ = 0, in_flight_ = 0, failed_ = 0;
  bool drawn_ = false;
};

bool confirm(Io& io, const std::string& command) {
  std::fprintf(io.out,
               "\nDo you want to perform these actions?\n"
               "  Plinth will perform the %s described above.\n"
               "  Only 'yes' will be accepted to approve.\n\n"
               "  Enter a value: ",
               command == "destroy" ? "destruction" : "actions");
  std::fflush(io.out);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "yes";
}

Result<int> parse_parallelism(const Args& args) {
  const std::string v = args.get_or("parallelism", "10");
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 1 || n > 1000)
    return Error::invalid("--parallelism '" + v + "' must be a whole number from 1 to 1000");
  return static_cast<int>(n);
}

}  // namespace

std::vector<FlagSpec> execute_flags() {
  return {
      {"auto-approve", "", "Do not ask for confirmation (required when stdin is not a terminal)."},
      {"parallelism", "N", "Operations in flight at once (default 10)."},
      {"state", "FILE", "State file (default: plinth.state.json beside the first blueprint)."},
      {"lock-timeout", "D", "How long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
      state_key_flag(),
      {"refresh", "", "Read the resources in state through their providers first (default true)."},
      {"policy-dir", "DIR", "Also evaluate the policies in DIR (repeatable).", true},
      provider_option_flag(),
  };
}

namespace {

/// "Placement:" and, per created resource whose type declares placement
/// keys (ResourceType::placement), where its provider put it, then a count
/// per distinct placement: what a capacity fallback chose.
void print_placement(Io& io, const apply::Report& report) {
  std::vector<std::string> lines;
  std::map<std::string, int> counts;
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
    lines.push_back("  " + o.address + ": " + safe_text(where));
    ++counts[parts->type + "." + parts->name + ": " + safe_text(where)];
  }
  if (lines.empty()) return;
  std::fprintf(io.out, "Placement:\n");
  for (const auto& l : lines) std::fprintf(io.out, "%s\n", l.c_str());
  for (const auto& [what, n] : counts) std::fprintf(io.out, "  %d x %s\n", n, what.c_str());
}

}  // namespace

int execute_plan(const Args& args, Io& io, const std::string& command, Planned& planned, ProviderSet& providers) {
  auto parallelism = parse_parallelism(args);
  if (!parallelism) return fail(io, command, parallelism.error().message);
  plan::Plan& p = planned.plan;
  StateSession& st = planned.state;
  if (!st.existed && st.doc.lineage.empty()) {  // a saved plan brings its own lineage
    state::StateDocument fresh = state::new_document();
    st.doc.lineage = fresh.lineage;
    st.doc.plinth_version = fresh.plinth_version;
  }
  providers.bind({st.doc.lineage, planned.loaded.blueprint.metadata.name});

  // Show the plan, then the policy gate: nothing is changed when it blocks.
  std::string text = plan::to_text(p, {io.color});
  std::fwrite(text.data(), 1, text.size(), io.out);
  auto policies = run_policies(planned.loaded, *planned.desired, p, policy_dirs(args), blueprint_dir(args.positional), io);
  if (policies.blocked)
    return fail(io, command, "a mandatory policy failed (see above); nothing was changed. Fix the blueprint or add a "
                             "waiver (docs/policy-authoring.md) and run again.");
  if (!check_inventory(planned.inventory, providers, io, command)) return kExitFailure;

  if (!p.has_changes()) {
    if (!planned.drift.empty() || planned.adopted) {  // record what the refresh observed
      state::StateDocument next = st.doc;
      next.serial = st.doc.serial + 1;
      if (auto s = st.backend->save(next); !s) return fail(io, command, "state " + st.path + ": " + s.error().message);
    }
    return kExitSuccess;
  }
  if (!args.flag("auto-approve")) {
    if (!confirm(io, command)) {
      std::fprintf(io.err, "plinth %s: cancelled; nothing was changed (only 'yes' approves).\n", command.c_str());
      return kExitFailure;
    }
  }

  // Only the providers that have work: a targeted plan of one provider's
  // resources does not need the others (nor their credentials).
  std::set<std::string> busy;
  for (const auto& rc : p.changes)
    if (rc.action != plan::Action::NoOp)
      for (const auto* r : {rc.before ? &*rc.before : nullptr, rc.after ? &*rc.after : nullptr})
        if (r) busy.insert(r->provider);
  if (auto s = providers.open(busy); !s) return fail(io, command, s.error().message);

  const size_t total = static_cast<size_t>(p.summary().changes());
  Progress progress(io, command, total);
  apply::Options opts;
  opts.parallelism = *parallelism;
  opts.limits = providers.limits();
  opts.cancel = &g_cancel;
  opts.on_event = [&](const apply::Event& e) { progress.on_event(e); };
  // A PostgreSQL state can go away mid-apply (server stopped, network
  // lost): what completes after that is kept in a local journal that the
  // next run (or plinth state push-journal) writes into the state.
  std::string journal_dir;
  if (state::is_postgres_location(st.location)) {
    const std::string jp = state::journal_path(st.location);
    journal_dir = std::filesystem::path(jp).parent_path().string();
    std::error_code ec;
    std::filesystem::create_directories(journal_dir, ec);
    std::filesystem::permissions(journal_dir, std::filesystem::perms::owner_all, ec);
    auto fb = open_state_backend(args, jp);  // encrypted as the state is
    if (fb) opts.fallback = std::shared_ptr<state::Backend>(std::move(*fb));
  }

  apply::Report report;
  {
    SignalScope signals;
    // Tells the user what a signal did; the handler itself only sets g_cancel.
    std::atomic<bool> running{true};
    std::thread watcher([&] {
      int seen = 0;
      while (running.load()) {
        int level = g_cancel.load();
        if (level > seen) {
          seen = level;
          progress.note(level == 1 ? "plinth " + command +
                                         ": interrupted: starting no new operations and waiting for those in flight "
                                         "(interrupt again to cancel them)"
                                   : "plinth " + command + ": cancelling the operations in flight");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    report = apply::execute(p, st.doc, *st.backend, providers.lookup(), opts);
    running = false;
    watcher.join();
  }
  progress.finish();
  if (!journal_dir.empty() && report.fallback_journal.empty()) {
    std::error_code ec;
    std::filesystem::remove(journal_dir, ec);  // only when empty: never anyone's journal
  }

  // Summary.
  using apply::OutcomeStatus;
  const size_t ok = report.count(OutcomeStatus::Succeeded), failed = report.count(OutcomeStatus::Failed),
               skipped = report.count(OutcomeStatus::Skipped), not_started = report.count(OutcomeStatus::NotStarted),
               cancelled = report.count(OutcomeStatus::Cancelled);
  std::fprintf(io.out, "\n%s %s: %zu succeeded, %zu failed, %zu skipped", command == "destroy" ? "Destroy" : "Apply",
               report.ok() ? "complete" : "incomplete", ok, failed, skipped);
  if (not_started) std::fprintf(io.out, ", %zu not started", not_started);
  if (cancelled) std::fprintf(io.out, ", %zu cancelled", cancelled);
  std::fprintf(io.out, ".\n");
  print_placement(io, report);
  size_t timed_out = 0;
  for (const auto& o : report.outcomes) timed_out += o.timed_out ? 1 : 0;
  if (timed_out) {
    std::fprintf(io.out, "Timed out (the operation's deadline passed; see the provider's *_deadline options):\n");
    for (const auto& o : report.outcomes)
      if (o.timed_out) std::fprintf(io.out, "  %s (%s)\n", o.address.c_str(), plan::to_string(o.action));
  }
  for (OutcomeStatus s : {OutcomeStatus::Failed, OutcomeStatus::Skipped, OutcomeStatus::Cancelled}) {
    if (!report.count(s)) continue;
    std::string heading = apply::to_string(s);
    heading[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(heading[0])));
    std::fprintf(io.out, "%s:\n", heading.c_str());
    for (const auto& o : report.outcomes)
      if (o.status == s)
        std::fprintf(io.out, "  %s (%s): %s\n", o.address.c_str(), plan::to_string(o.action),
                     safe_text(o.error).c_str());
  }
  std::fflush(io.out);
  if (!report.journal_error.empty() && !report.fallback_journal.empty())
    std::fprintf(io.err,
                 "plinth %s: %s; stopped: started no new operation. The %zu operation(s) that completed after that are "
                 "kept in the %s (serial %llu). When the state is reachable again, the next apply writes them into it, "
                 "or run: plinth state push-journal --state %s\n",
                 command.c_str(), report.journal_error.c_str(), report.fallback_records,
                 report.fallback_journal.c_str(), static_cast<unsigned long long>(report.final_serial),
                 st.path.c_str());
  else if (!report.journal_error.empty())
    std::fprintf(io.err, "plinth %s: %s; stopped. Completed operations up to serial %llu are recorded.\n",
                 command.c_str(), report.journal_error.c_str(), static_cast<unsigned long long>(report.final_serial));
  if (report.cancelled)
    std::fprintf(io.err,
                 "plinth %s: interrupted: %zu of %zu operations completed and are recorded in state %s (serial %llu); "
                 "%zu not started%s. Re-running plinth %s converges.\n",
                 command.c_str(), ok, total, st.path.c_str(), static_cast<unsigned long long>(report.final_serial),
                 not_started, cancelled ? (", " + std::to_string(cancelled) + " cancelled in flight").c_str() : "",
                 command.c_str());
  else if (failed || skipped)
    std::fprintf(io.err, "plinth %s: %zu operation(s) failed and %zu were skipped; the %zu that succeeded are recorded "
                         "in state %s. Fix the errors above and run plinth %s again.\n",
                 command.c_str(), failed, skipped, ok, st.path.c_str(), command.c_str());
  return report.ok() ? kExitSuccess : kExitFailure;
}

}  // namespace plinth::cli
