// `plinth validate` as a user runs it: example blueprints pass, invalid ones
// fail with exact file:line:col diagnostics, directories merge.
#include <catch2/catch.hpp>

#include "tests/support/run.h"

namespace plinth::test::e2e_validate {

TEST_CASE("plinth validate accepts each example blueprint", "[e2e][validate]") {
  struct Case {
    const char* path;
    const char* out;
  };
  for (const Case& c : {
           Case{"blueprints/examples/cluster.yaml", "ml-prod is valid: 3 node pool(s), 3 burst pool(s), 0 warning(s).\n"},
           Case{"blueprints/examples/lab.yaml", "gpu-lab is valid: 1 node pool(s), 0 burst pool(s), 0 warning(s).\n"},
           Case{"blueprints/examples/regulated.yaml",
                "clinical-ml is valid: 1 node pool(s), 3 burst pool(s), 0 warning(s).\n"},
       }) {
    auto r = run_plinth({"validate", c.path});
    INFO(c.path << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == c.out);
    CHECK(r.err == "");
  }
}

TEST_CASE("plinth validate reports an unknown key with its position and exits 1", "[e2e][validate]") {
  auto r = run_plinth({"validate", "blueprints/invalid/bp-unknown-key.yaml"});
  CHECK(r.exit_code == 1);
  CHECK(r.out == "");
  CHECK(r.err ==
        "blueprints/invalid/bp-unknown-key.yaml:8:5: error[BP002]: unknown key 'cuda_version' in stack 'train'\n"
        " 8 |     cuda_version: \"12.4\"\n"
        "   |     ^\n"
        "  hint: did you mean 'cuda'?\n"
        "1 error(s); fix them and run again.\n");
}

TEST_CASE("plinth validate reports the errors of every file in one run", "[e2e][validate]") {
  auto r = run_plinth({"validate", "blueprints/invalid/bp-wrong-type.yaml", "blueprints/invalid/bp-inline-credentials.yaml",
                       "blueprints/invalid/bp-yaml-syntax.yaml"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("blueprints/invalid/bp-wrong-type.yaml:9:12: error[BP003]: 'count' in node pool 'train-a' must be "
                   "an integer, not \"two\"\n") != std::string::npos);
  CHECK(r.err.find("blueprints/invalid/bp-inline-credentials.yaml:14:20: error[BP008]:") != std::string::npos);
  CHECK(r.err.find("calvin") == std::string::npos);  // an inline password is never echoed, not even in the excerpt
  CHECK(r.err.find("blueprints/invalid/bp-yaml-syntax.yaml:5:7: error[BP001]: YAML syntax error") != std::string::npos);
  CHECK(r.err.find("error(s); fix them and run again.\n") != std::string::npos);
}

TEST_CASE("plinth validate DIR merges the directory's files", "[e2e][validate]") {
  auto ok = run_plinth({"validate", "blueprints/examples/multi-file/"});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "edge-inference is valid: 1 node pool(s), 1 burst pool(s), 0 warning(s).\n");

  // The three examples are separate blueprints: merged, their single-valued
  // sections clash, and each clash names the file that had it first.
  auto clash = run_plinth({"validate", "blueprints/examples/"});
  CHECK(clash.exit_code == 1);
  CHECK(clash.err.find("blueprints/examples/lab.yaml:5:1: error[BP006]: metadata is defined twice: the first is at "
                       "blueprints/examples/cluster.yaml:6:1\n") != std::string::npos);
  CHECK(clash.err.find("blueprints/examples/regulated.yaml:5:1: error[BP006]: metadata is defined twice") !=
        std::string::npos);

  TempDir dir;
  dir.write("a.yaml", "apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: split}\nstacks:\n"
                      "  train: {driver: \"550.54.15\", cuda: \"12.4\"}\n");
  dir.write("b.yaml", "apiVersion: plinth/v1\nkind: Blueprint\nstacks:\n"
                      "  train: {driver: \"550.54.15\", cuda: \"12.4\"}\n");
  auto dup = run_plinth({"validate", dir.path()});
  CHECK(dup.exit_code == 1);
  CHECK(dup.err.find(dir.path() + "/b.yaml:4:3: error[BP006]: duplicate stack 'train': the first is at " + dir.path() +
                     "/a.yaml:5:3\n") != std::string::npos);
}

TEST_CASE("plinth validate names a missing path", "[e2e][validate]") {
  auto r = run_plinth({"validate", "blueprints/nope.yaml"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("error[BP000]: no such file or directory: blueprints/nope.yaml") != std::string::npos);
}

}  // namespace plinth::test::e2e_validate
