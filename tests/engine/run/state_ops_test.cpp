// engine/run/state_ops.h: the state subcommands as operations, against a
// local state file: rm and mv with their refusals, dry runs, restore,
// migrate and rekey.
#include <catch2/catch.hpp>

#include "engine/run/state_ops.h"
#include "tests/engine/state/fixtures.h"
#include "tests/support/run.h"

namespace plinth::test::run_state_ops {

namespace {

using std::chrono::milliseconds;

/// A state file in `dir` at serial 1 holding VLANs v0..v2 and the nodes gpu[0], gpu[1].
std::unique_ptr<state::Backend> seeded(const TempDir& dir, state::StateDocument& doc) {
  auto b = state::open_backend(dir.path() + "/plinth.state.json");
  doc = save_version(*b, state::new_document(), 1, 3);
  for (int i = 0; i < 2; ++i) {
    Resource n = make_resource("baremetal.node", "gpu", i, "baremetal", Json{{"gpu", "H100-80GB"}});
    n.depends_on = {"net.vlan.v0"};
    doc.resources.push_back(n);
  }
  doc.serial = 2;
  REQUIRE(b->save(doc).ok());
  return b;
}

std::vector<std::string> addresses(state::Backend& b) {
  auto doc = b.load();
  REQUIRE(doc.ok());
  REQUIRE(doc->has_value());
  std::vector<std::string> out;
  for (const auto& r : (**doc).resources) out.push_back(r.address);
  return out;
}

}  // namespace

TEST_CASE("run::edit_state with remove_resources forgets a pool's every index as a new serial, a dry run saves nothing",
          "[run]") {
  TempDir dir;
  state::StateDocument doc;
  auto b = seeded(dir, doc);
  auto remove = [](state::StateDocument& d) { return run::remove_resources(d, "plinth.state.json", {"baremetal.node.gpu"}); };
  auto dry = run::edit_state(*b, "plinth.state.json", "rm", milliseconds(0), true, remove);
  REQUIRE(dry.ok());
  CHECK(dry->to_serial == 0);
  CHECK(dry->lines.size() == 2);
  CHECK(addresses(*b).size() == 5);
  auto done = run::edit_state(*b, "plinth.state.json", "rm", milliseconds(0), false, remove);
  REQUIRE(done.ok());
  CHECK(done->from_serial == 2);
  CHECK(done->to_serial == 3);
  CHECK(done->lines.front() ==
        "removed baremetal.node.gpu[0] from state (it still exists; Plinth no longer manages it)");
  CHECK(addresses(*b) == std::vector<std::string>{"net.vlan.v0", "net.vlan.v1", "net.vlan.v2"});
  // A pattern that matches nothing changes nothing and names the closest address.
  auto typo = run::edit_state(*b, "plinth.state.json", "rm", milliseconds(0), false, [](state::StateDocument& d) {
    return run::remove_resources(d, "plinth.state.json", {"net.vlan.v9"});
  });
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message ==
        "no resource 'net.vlan.v9' in state plinth.state.json; did you mean 'net.vlan.v0'?; nothing was removed");
  CHECK(addresses(*b).size() == 3);
}

TEST_CASE("run::move_resources renames a pool with its dependants, and refuses another type or a taken address",
          "[run]") {
  TempDir dir;
  state::StateDocument doc;
  seeded(dir, doc);
  state::StateDocument moved = doc;
  auto lines = run::move_resources(moved, "s", "net.vlan.v0", "net.vlan.train");
  REQUIRE(lines.ok());
  CHECK(*lines == std::vector<std::string>{"moved net.vlan.v0 to net.vlan.train"});
  CHECK(moved.find("baremetal.node.gpu[1]")->depends_on == std::vector<std::string>{"net.vlan.train"});
  state::StateDocument pool = doc;
  REQUIRE(run::move_resources(pool, "s", "baremetal.node.gpu", "baremetal.node.hgx").ok());
  CHECK(pool.find("baremetal.node.hgx[1]") != nullptr);
  state::StateDocument bad = doc;
  CHECK(run::move_resources(bad, "s", "net.vlan.v0", "baremetal.node.x").error().message ==
        "cannot move net.vlan.v0 (a net.vlan) to baremetal.node.x (a baremetal.node): a resource keeps its type");
  CHECK(run::move_resources(bad, "s", "net.vlan.v0", "net.vlan.v1").error().message ==
        "cannot move net.vlan.v0 to net.vlan.v1: the state already has net.vlan.v1; remove it first (plinth state rm) "
        "if it is stale");
  CHECK(run::move_resources(bad, "s", "baremetal.node.gpu", "baremetal.node.hgx[0]").error().message ==
        "'baremetal.node.gpu' names every index of a pool; move it to a pool address without an index, e.g. "
        "baremetal.node.hgx");
  CHECK(bad == doc);
}

TEST_CASE("run::restore_state, migrate_state and rekey_state keep the lineage and say what they did", "[run]") {
  TempDir dir;
  state::StateDocument doc;
  auto b = seeded(dir, doc);
  auto restored = run::restore_state(*b, 1, milliseconds(0));
  REQUIRE(restored.ok());
  CHECK(addresses(*b).size() == 3);  // serial 1 held the VLANs only

  const std::string from = dir.path() + "/plinth.state.json", to = dir.path() + "/moved.state.json";
  auto m = run::migrate_state(from, "plinth.state.json", to, milliseconds(0));
  REQUIRE(m.ok());
  CHECK(m->lineage == doc.lineage);
  CHECK(m->serial == 3);
  CHECK(m->versions >= 2);
  CHECK(run::migrate_state(from, "plinth.state.json", from, milliseconds(0)).error().message ==
        "--to " + from + " is the state itself; nothing to do");

  auto key = state::parse_state_key(std::string(64, 'a'), "test");
  REQUIRE(key.ok());
  auto r = run::rekey_state(run::StateOptions{}, to, "moved.state.json", *key, milliseconds(0));
  REQUIRE(r.ok());
  CHECK(r->serial == 4);
  CHECK(r->left.empty());
  CHECK(r->rewritten >= 1);  // the kept versions too: the old key opens nothing
}

}  // namespace plinth::test::run_state_ops
