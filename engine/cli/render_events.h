#pragma once
// Rendering the operations' events (engine/run/events.h): for a person
// (stderr/stdout lines, a progress bar on a terminal, "still creating..."
// lines) or as one JSON object per line (apply/destroy/refresh --json;
// docs/apply.md, "Machine-readable output").
#include <memory>
#include <mutex>
#include <string>

#include "engine/cli/command.h"
#include "engine/run/events.h"

namespace plinth::cli {

/// The human view: what plinth has always printed. Errors are
/// "plinth COMMAND: message" on stderr; drift goes to stderr (to stdout for
/// `refresh`, whose result it is); operations print one line each as they
/// finish or retry, and every progress interval while they run.
/// A policy verdict (not a pass) as the diagnostic the views print: a
/// mandatory failure or a mandatory policy that could not run an error, an
/// advisory one a warning, a waived one an info naming its waiver.
Diagnostic verdict_diagnostic(const policy::Verdict& verdict, const policy::PolicyInfo& policy);

class HumanView : public run::Events {
 public:
  HumanView(Io& io, std::string command, bool drift_to_stdout = false);
  void diagnostics(const Diagnostics& ds) override;
  void error(const std::string& message) override;
  void warning(const std::string& line) override;
  void note(const std::string& line) override;
  void drift(const std::vector<apply::Drift>& changed, const std::vector<apply::Drift>& gone) override;
  void adopted(const std::string& lineage, const std::vector<Resource>& resources) override;
  void superseded(const std::vector<Resource>& resources) override;
  void policy_checked(const run::PolicyChecked& checked) override;
  void planned(const plan::Plan& plan) override;
  void operation(const run::Operation& op) override;
  void applied(const run::Applied& applied) override;

 private:
  void clear_bar();
  void draw_bar();

  Io& io_;
  std::string command_;
  bool drift_to_stdout_;
  size_t total_ = 0, done_ = 0, in_flight_ = 0, failed_ = 0;
  bool applying_ = false, drawn_ = false;
};

/// The machine-readable view: every event as one JSON object on its own line
/// of stdout, with "@level", "@message", "@module" ("plinth.ui"),
/// "@timestamp" and "type" (docs/apply.md lists the types and fields).
/// One drift as `resource_drift` events and `plan --json` show it: the
/// address, "delete" (gone) or "update", whether the provider removed it by
/// itself (`by_provider`, with its `reason`), and each attribute's state
/// value and observed value (sensitive ones as "(sensitive)").
Json drift_json(const apply::Drift& drift, bool by_provider);

class JsonView : public run::Events {
 public:
  JsonView(Io& io, std::string command);
  void diagnostics(const Diagnostics& ds) override;
  void error(const std::string& message) override;
  void warning(const std::string& line) override;
  void note(const std::string& line) override;
  void drift(const std::vector<apply::Drift>& changed, const std::vector<apply::Drift>& gone) override;
  void adopted(const std::string& lineage, const std::vector<Resource>& resources) override;
  void superseded(const std::vector<Resource>& resources) override;
  void policy_checked(const run::PolicyChecked& checked) override;
  void planned(const plan::Plan& plan) override;
  void operation(const run::Operation& op) override;
  void applied(const run::Applied& applied) override;
  /// A line of another type (the commands' own results: "refresh_complete").
  void emit(const std::string& level, const std::string& message, const std::string& type, Json fields);

 private:
  Io& io_;
  std::string command_;
};

/// The view --json asks for.
std::unique_ptr<run::Events> make_view(Io& io, const std::string& command, bool json, bool drift_to_stdout = false);

}  // namespace plinth::cli
