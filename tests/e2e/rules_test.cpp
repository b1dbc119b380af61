// `plinth validate --no-policies` on each blueprints/invalid/rule-*.yaml: exit 1
// for errors (0 when the file has only warnings) and the exact file:line:col
// line on stderr. The domain rules alone: a file made to trigger one rule may
// well fail a policy pack too (an unpinned image does).
#include <catch2/catch.hpp>

#include "tests/engine/validate/rule_cases.h"
#include "tests/support/run.h"

namespace plinth::test::e2e_rules {

TEST_CASE("plinth validate reports each domain rule with its position and exit code") {
  for (const auto& c : rule_cases()) {
    INFO(c.file);
    auto r = run_plinth({"validate", c.file, "--no-policies"});
    INFO(r.err);
    CHECK(r.exit_code == (c.error ? 1 : 0));
    CHECK(r.err.rfind(c.line + "\n", 0) == 0);
  }
}

TEST_CASE("plinth validate accepts the example blueprints without warnings") {
  for (const char* f : {"blueprints/examples/lab.yaml", "blueprints/examples/cluster.yaml", "blueprints/examples/regulated.yaml"}) {
    INFO(f);
    auto r = run_plinth({"validate", f});
    CHECK(r.exit_code == 0);
    CHECK(r.err == "");
    CHECK(r.out.find("0 warning(s)") != std::string::npos);
  }
}

TEST_CASE("PLINTH_CATALOG_DIR replaces the built-in catalog") {
  TempDir dir;
  dir.write("cuda.yaml", slurp(source_dir() + "/engine/catalog/data/cuda.yaml"));
  dir.write("gpus.yaml", "version: \"1\"\nsources: {x: y}\ngpus: [\n");
  auto r = run_plinth({"validate", "blueprints/examples/lab.yaml"}, "", {{"PLINTH_CATALOG_DIR", dir.path()}});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth: cannot load the catalog: invalid catalog data:\n  " + dir.path() + "/gpus.yaml:4: YAML syntax error") !=
        std::string::npos);
}

}  // namespace plinth::test::e2e_rules
