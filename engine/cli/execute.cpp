#include "engine/cli/execute.h"

#include <csignal>
#include <iostream>

#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/cli/render_events.h"

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

}  // namespace

bool confirm(Io& io, const std::string& operation) {
  std::fprintf(io.out,
               "\nDo you want to perform these actions?\n"
               "  Plinth will perform the %s described above.\n"
               "  Only 'yes' will be accepted to approve.\n\n"
               "  Enter a value: ",
               operation == "destroy"         ? "destruction"
               : operation == "refresh-only" ? "recording of the drift above in the state (no resource changes)"
                                             : "actions");
  std::fflush(io.out);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "yes";
}

int execute(const Args& args, Io& io, run::ApplyOptions options, run::Planned& planned, run::ProviderSet& providers,
            run::Events& events) {
  if (!args.flag("auto-approve")) options.confirm = [&io, op = options.operation] { return confirm(io, op); };
  options.cancel = &g_cancel;
  SignalScope signals;
  return run::apply(options, planned, providers, events) ? kExitSuccess : kExitFailure;
}

int plan_and_execute(const Args& args, Io& io, const std::string& operation) {
  auto options = plan_options(args, operation);
  if (!options) return fail(io, operation, options.error().message);
  auto apply_opts = apply_options(args, operation);
  if (!apply_opts) return fail(io, operation, apply_opts.error().message);
  auto view = make_view(io, operation, args.flag("json"));
  run::ProviderSet providers(provider_factory(), provider_options(args));
  auto planned = run::plan(*options, providers, *view);
  if (!planned) return kExitFailure;
  return execute(args, io, std::move(*apply_opts), *planned, providers, *view);
}

}  // namespace plinth::cli
