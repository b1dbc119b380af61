// plinth state migrate --to: file -> PostgreSQL -> file, keeping lineage,
// serial, history (saved times and run starts) and encrypted values; a target
// holding another lineage is refused (docs/state.md, "Migrating between backends").
#include <catch2/catch.hpp>

#include "engine/state/state.h"
#include "tests/support/blueprints.h"
#include "tests/support/postgres.h"
#include "tests/support/run.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_state_migrate {

namespace {

/// A local state with `saves` serials of the lab example, each a run of its own.
std::string make_file_state(const test::TempDir& dir, int saves) {
  const std::vector<Resource> lab = expanded_state({kLabExample}).resources;
  const std::string path = dir.path() + "/plinth.state.json";
  state::StateDocument doc = state::new_document();
  for (int i = 1; i <= saves; ++i) {
    auto b = state::open_local(path);
    REQUIRE(b->lock("test", std::chrono::milliseconds(0)).ok());
    doc.serial = static_cast<uint64_t>(i);
    doc.resources.assign(lab.begin(), lab.begin() + std::min<long>(i, static_cast<long>(lab.size())));
    REQUIRE(b->save(doc).ok());
    b->unlock();
  }
  return path;
}

std::string history_text(const std::string& location) {
  auto r = run_plinth({"state", "history", "--state", location});
  REQUIRE(r.exit_code == 0);
  // The (current) marker and counts; saved times are checked to the second.
  return r.out;
}

}  // namespace

TEST_CASE("state migrate: file to PostgreSQL and back keeps lineage, serial, history and text, another lineage is "
          "refused",
          "[postgres][migrate]") {
  test::TempDir dir;
  const std::string file = make_file_state(dir, 5);
  const std::string url = test::postgres_workspace_url("migrate");
  auto before = state::open_local(file)->load();
  REQUIRE(before.ok());
  const auto& doc = **before;
  const std::string hist = history_text(file);

  auto r = run_plinth({"state", "migrate", "--state", file, "--to", url});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Migrated state " + file + " (lineage " + doc.lineage + ", serial 5, 5 kept version(s)) to " +
                   state::redact_location(url)) != std::string::npos);
  CHECK(r.out.find("plinth-test-secret") == std::string::npos);
  auto pg = state::open_postgres(url)->load();
  REQUIRE(pg.ok());
  REQUIRE(*pg);
  CHECK(**pg == doc);
  CHECK(history_text(url) == hist);  // serials, saved times, counts and run starts
  // The copies are the stored text: a kept version restores as it was.
  auto v3 = state::open_postgres(url)->saved_version(3);
  REQUIRE(v3.ok());
  CHECK(v3->resources.size() == 3);

  // Running it again is harmless (same lineage, same serial).
  r = run_plinth({"state", "migrate", "--state", file, "--to", url});
  CHECK(r.exit_code == 0);

  // The database moves on; back to a new file.
  {
    auto b = state::open_postgres(url);
    state::StateDocument next = **pg;
    next.serial = 6;
    REQUIRE(b->save(next).ok());
  }
  test::TempDir back;
  const std::string file2 = back.path() + "/s.json";
  r = run_plinth({"state", "migrate", "--state", url, "--to", file2});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto round = state::open_local(file2)->load();
  REQUIRE(round.ok());
  CHECK((*round)->lineage == doc.lineage);
  CHECK((*round)->serial == 6);
  CHECK(history_text(file2) == history_text(url));

  // A target holding another lineage is refused, and left as it was.
  test::TempDir other;
  const std::string foreign = make_file_state(other, 2);
  const std::string foreign_text = test::slurp(foreign);
  r = run_plinth({"state", "migrate", "--state", url, "--to", foreign});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("the target state " + foreign + " holds another state (lineage ") != std::string::npos);
  CHECK(r.err.find("nothing was written") != std::string::npos);
  CHECK(test::slurp(foreign) == foreign_text);
  r = run_plinth({"state", "migrate", "--state", foreign, "--to", url});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("holds another state (lineage " + doc.lineage) != std::string::npos);
  // An older copy of the same lineage cannot overwrite a newer one.
  r = run_plinth({"state", "migrate", "--state", file, "--to", url});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("is at serial 6, newer than the source's 5") != std::string::npos);
  // No state to migrate.
  r = run_plinth({"state", "migrate", "--state", other.path() + "/none.json", "--to", url});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no state at ") != std::string::npos);
}

}  // namespace plinth::test::e2e_state_migrate
