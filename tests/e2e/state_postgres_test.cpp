// plinth plan and plinth state with the state in PostgreSQL (--state
// postgres://..., PLINTH_STATE), against a real server (tests/support/postgres.h).
#include <catch2/catch.hpp>

#include <unistd.h>

#include "engine/state/state.h"
#include "tests/support/blueprints.h"
#include "tests/support/postgres.h"
#include "tests/support/run.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_state_postgres {

using plinth::state::StateDocument;
using std::chrono::milliseconds;

namespace {

/// The state a successful apply of the lab example leaves: its expanded resources.
StateDocument lab_state() {
  auto doc = expanded_state({kLabExample});
  doc.serial = 1;
  return doc;
}

std::string addresses(const StateDocument& doc) {
  std::string out;
  for (const auto& r : doc.resources) out += r.address + "\n";
  return out;
}

}  // namespace

TEST_CASE("e2e: plinth plan and plinth state list with --state postgres://", "[postgres]") {
  const std::string url = test::postgres_workspace_url("e2e-plan");

  // No state yet in this workspace: everything is to be created.
  auto r = run_plinth({"plan", kLabExample, "--state", url, "--refresh=false", "--detailed-exitcode"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("to create") != std::string::npos);
  r = run_plinth({"state", "list", "--state", url});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "");
  CHECK(r.err == "plinth state: no state at " + state::redact_location(url) +
                     " yet (nothing has been applied there); pass --state FILE or set PLINTH_STATE to use another\n");

  // What an apply of the lab leaves behind: no changes, and list shows it.
  StateDocument doc = lab_state();
  REQUIRE(state::open_backend(url)->save(doc).ok());
  r = run_plinth({"plan", kLabExample, "--state", url, "--refresh=false", "--detailed-exitcode"});
  INFO(r.out);
  CHECK(r.exit_code == 0);
  r = run_plinth({"state", "list", "--state", url});
  CHECK(r.err == "");
  CHECK(r.out == addresses(doc));
  CHECK(r.exit_code == 0);
  r = run_plinth({"state", "list"}, "", {{"PLINTH_STATE", url}});
  CHECK(r.out == addresses(doc));

  // plan --json names the state by its URL, without the password.
  r = run_plinth({"plan", kLabExample, "--state", url, "--refresh=false", "--json"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"path\":\"" + state::redact_location(url) + "\"") != std::string::npos);
  CHECK(r.out.find(":***@") != std::string::npos);
  CHECK(r.out.find("plinth-test-secret") == std::string::npos);

  r = run_plinth({"state", "history", "--state", url});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("       1  ") != std::string::npos);
  CHECK(r.out.find("  (current)\n") != std::string::npos);
}

TEST_CASE("e2e: a second plinth is refused while another run holds the PostgreSQL lock", "[postgres]") {
  const std::string url = test::postgres_workspace_url("e2e-lock");
  auto holder = state::open_backend(url);
  REQUIRE(holder->save(lab_state()).ok());
  REQUIRE(holder->lock("plinth apply", milliseconds(0)).ok());

  auto r = run_plinth({"plan", kLabExample, "--state", url});
  CHECK(r.exit_code == 1);
  CHECK(r.out == "");
  const std::string shown = state::redact_location(url);
  const std::string who = "is locked by PID " + std::to_string(getpid()) + " on " + hostname() + " since ";
  INFO(r.err);
  CHECK(r.err.find("state " + shown + " (workspace ") != std::string::npos);
  CHECK(r.err.find(who) != std::string::npos);
  CHECK(r.err.find(" (plinth apply); wait for it to finish, or pass --lock-timeout=60s to wait, or run 'plinth "
                   "state unlock' if that process is gone") != std::string::npos);
  CHECK(r.err.find("plinth-test-secret") == std::string::npos);

  r = run_plinth({"state", "unlock", "--state", url});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(", and its PostgreSQL session is still open; wait for it to finish, or pass --force") !=
        std::string::npos);

  holder->unlock();
  r = run_plinth({"plan", kLabExample, "--state", url, "--refresh=false", "--detailed-exitcode"});
  CHECK(r.exit_code == 0);
}

TEST_CASE("e2e: a PostgreSQL server that is not there is a clear error without the password", "[postgres]") {
  auto r = run_plinth({"state", "list", "--state", "postgres://plinth:hunter2-secret@127.0.0.1:1/plinth_test"});
  CHECK(r.exit_code == 1);
  CHECK(r.out == "");
  CHECK(r.err.starts_with("plinth state: cannot connect to PostgreSQL state "
                          "postgres://plinth:***@127.0.0.1:1/plinth_test (workspace default): "));
  CHECK(r.err.find("Check that the server is running and reachable at that host and port") != std::string::npos);
  CHECK(r.err.find("hunter2") == std::string::npos);
}

}  // namespace plinth::test::e2e_state_postgres
