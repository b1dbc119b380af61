#pragma once
// What an operation reports while it runs, as typed events (Terraform's
// hooks): the CLI renders them for a person (engine/cli/render_events.h) or
// as one JSON object per line (apply --json, docs/apply.md); tests record
// them. The operations print nothing themselves.
#include <chrono>
#include <string>
#include <vector>

#include "engine/apply/executor.h"
#include "engine/apply/refresh.h"
#include "engine/core/diagnostic.h"
#include "engine/plan/plan.h"
#include "engine/policy/policy.h"

namespace plinth::run {

/// One operation of an apply, as it starts, retries, runs on and ends.
struct Operation {
  enum class Phase {
    Started,
    Retrying,  ///< `attempt` failed with `message`; the next one starts after `wait`
    Running,   ///< still in flight after `elapsed` (every ApplyOptions::progress_interval)
    Finished,  ///< `ok`, or failed with `message`
  };
  Phase phase = Phase::Started;
  std::string address;
  plan::Action action = plan::Action::NoOp;
  std::chrono::milliseconds elapsed{0};
  std::string message;
  bool ok = true;
  int attempt = 1;
  std::chrono::milliseconds wait{0};
};

/// What the policy gate found (every verdict, waivers applied).
struct PolicyChecked {
  const policy::Evaluation* evaluation = nullptr;
  int mandatory = 0, advisory = 0, waived = 0, errors = 0;
  bool blocked = false;
  std::string waivers_path;  ///< where a waiver would go
};

/// How an apply or destroy ended.
struct Applied {
  std::string operation;  ///< "apply" or "destroy"
  const apply::Report* report = nullptr;
  size_t total = 0;        ///< changes the plan held
  std::string state_path;  ///< the state, as shown
};

/// The sink. Every method has a default that ignores the event; calls come
/// from one thread at a time (the apply serialises its workers' events).
class Events {
 public:
  virtual ~Events() = default;
  /// Loader, validation, provider or policy-pack diagnostics.
  virtual void diagnostics(const Diagnostics&) {}
  /// A problem that stops the operation (the human view prints "plinth OP: message").
  virtual void error(const std::string&) {}
  /// A warning line, already worded ("warning: ...").
  virtual void warning(const std::string&) {}
  /// A line the user should read (a notice, what was saved where).
  virtual void note(const std::string&) {}
  /// Refresh found resources changed outside Plinth (state -> observed),
  /// and resources their provider removed on its own (`gone`).
  virtual void drift(const std::vector<apply::Drift>& /*changed*/, const std::vector<apply::Drift>& /*gone*/) {}
  /// Objects made for this state (lineage) that it did not record, now recorded.
  virtual void adopted(const std::string& /*lineage*/, const std::vector<Resource>&) {}
  /// Objects found at an address the state records with another object,
  /// recorded as deposed (the next apply removes them).
  virtual void superseded(const std::vector<Resource>&) {}
  virtual void policy_checked(const PolicyChecked&) {}
  /// The plan an apply is about to run (before the policy gate and the question).
  virtual void planned(const plan::Plan&) {}
  virtual void operation(const Operation&) {}
  virtual void applied(const Applied&) {}
};

}  // namespace plinth::run
