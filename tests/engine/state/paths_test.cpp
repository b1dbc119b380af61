#include <catch2/catch.hpp>

#include <cstdlib>

#include "engine/state/state.h"
#include "tests/support/run.h"

namespace plinth::test::state_paths {

using namespace plinth::state;
using std::chrono::milliseconds;

TEST_CASE("the default state file sits beside the first blueprint") {
  test::TempDir dir;
  std::string bp = dir.write("site/cluster.yaml", "version: plinth/v1\n");
  CHECK(default_state_path({bp}) == dir.path() + "/site/plinth.state.json");
  CHECK(default_state_path({dir.path() + "/site"}) == dir.path() + "/site/plinth.state.json");
  CHECK(default_state_path({"cluster.yaml"}) == "plinth.state.json");
  CHECK(default_state_path({}) == "plinth.state.json");
}

TEST_CASE("the --state flag wins over PLINTH_STATE, which wins over the default") {
  unsetenv("PLINTH_STATE");
  CHECK(resolve_state_path(std::nullopt, {"site/cluster.yaml"}) == "site/plinth.state.json");
  CHECK(resolve_state_path(std::nullopt) == "plinth.state.json");
  setenv("PLINTH_STATE", "/var/lib/plinth/env.json", 1);
  CHECK(resolve_state_path(std::nullopt, {"site/cluster.yaml"}) == "/var/lib/plinth/env.json");
  CHECK(resolve_state_path(std::string("flag.json"), {"site/cluster.yaml"}) == "flag.json");
  unsetenv("PLINTH_STATE");
}

TEST_CASE("durations: ms, s, m, h and combinations") {
  CHECK(*parse_duration("500ms") == milliseconds(500));
  CHECK(*parse_duration("30s") == milliseconds(30000));
  CHECK(*parse_duration("2m") == milliseconds(120000));
  CHECK(*parse_duration("1h") == milliseconds(3600000));
  CHECK(*parse_duration("1m30s") == milliseconds(90000));
  CHECK(*parse_duration("0") == milliseconds(0));
  CHECK(*parse_duration("0s") == milliseconds(0));
  CHECK(format_duration(milliseconds(90000)) == "1m30s");
  CHECK(format_duration(milliseconds(500)) == "500ms");
  CHECK(format_duration(milliseconds(0)) == "0s");
  CHECK(format_duration(milliseconds(3600000)) == "1h");
}

TEST_CASE("bad durations say what is accepted") {
  const std::string tail = "; write a number with a unit: 500ms, 30s, 2m, 1h or 1m30s";
  CHECK(parse_duration("60").error().message == "invalid duration '60': the number 60 has no unit" + tail);
  CHECK(parse_duration("5 s").error().message == "invalid duration '5 s': the number 5 has no unit" + tail);
  CHECK(parse_duration("5s 1m").error().message == "invalid duration '5s 1m': expected a number at ' 1m'" + tail);
  CHECK(parse_duration("3d").error().message == "invalid duration '3d': unknown unit 'd'" + tail);
  CHECK(parse_duration("").error().message == "invalid duration '': it is empty" + tail);
  CHECK(parse_duration("-1s").error().message == "invalid duration '-1s': expected a number at '-1s'" + tail);
}

}  // namespace plinth::test::state_paths
