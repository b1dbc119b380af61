#pragma once
// What the state backend tests (local file, PostgreSQL, journal) share: a
// VLAN resource and a saved version of a document.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/state/state.h"
#include "tests/support/workspace.h"

namespace plinth::test {

/// The VLAN `name` with `id`, as expand makes it.
inline Resource vlan(const std::string& name, int id) {
  return make_resource("net.vlan", name, -1, "plinth", Json{{"id", id}});
}

/// Saves `base` at `serial` holding `n` VLANs v0, v1, ... through `b`; the document saved.
inline state::StateDocument save_version(state::Backend& b, const state::StateDocument& base, uint64_t serial, int n) {
  state::StateDocument doc = base;
  doc.serial = serial;
  doc.resources.clear();
  for (int i = 0; i < n; ++i) doc.resources.push_back(vlan("v" + std::to_string(i), 100 + i));
  auto st = b.save(doc);
  INFO((st ? "" : st.error().message));
  REQUIRE(st.ok());
  return doc;
}

/// The changes that take `doc` one serial further: `put` recorded, `removed` gone.
inline state::StateChanges next_changes(const state::StateDocument& doc, std::vector<Resource> put,
                                        std::vector<std::string> removed = {}) {
  state::StateChanges c;
  c.lineage = doc.lineage;
  c.from_serial = doc.serial;
  c.serial = doc.serial + 1;
  c.put = std::move(put);
  c.removed = std::move(removed);
  return c;
}

/// Applies `c` to `doc`, as a whole save would hold it.
inline void advance(state::StateDocument& doc, state::StateChanges c) { state::apply_changes(doc, std::move(c)); }

}  // namespace plinth::test
