#pragma once
// What the state backend tests (local file, PostgreSQL, journal) share: a
// VLAN resource and a saved version of a document.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

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

}  // namespace plinth::test
