// The shipped example blueprints load with no diagnostics at all.
#include <catch2/catch.hpp>

#include "engine/blueprint/loader.h"
#include "tests/support/text.h"

namespace plinth::test::blueprint_examples {

TEST_CASE("every example blueprint loads clean", "[blueprint][examples]") {
  for (const char* f : {"blueprints/examples/lab.yaml", "blueprints/examples/cluster.yaml",
                        "blueprints/examples/regulated.yaml"}) {
    INFO(f);
    auto r = bp::load_files({f});
    INFO(diagnostics_text(r.diagnostics));
    CHECK(r.diagnostics.empty());
    REQUIRE(r.blueprint.files.size() == 1);
    CHECK(r.blueprint.files[0].path == f);
    CHECK(r.blueprint.files[0].sha256.size() == 64);
  }
}

TEST_CASE("the multi-file example merges into one clean blueprint", "[blueprint][examples]") {
  Diagnostics d;
  auto files = bp::collect_blueprint_files({"blueprints/examples/multi-file"}, d);
  REQUIRE(d.empty());
  REQUIRE(files == std::vector<std::string>{"blueprints/examples/multi-file/base.yaml",
                                            "blueprints/examples/multi-file/pools.yaml"});
  auto r = bp::load_files(files);
  INFO(diagnostics_text(r.diagnostics));
  CHECK(r.diagnostics.empty());
  CHECK(r.blueprint.metadata.name == "edge-inference");
  REQUIRE(r.blueprint.node_pools.size() == 1);
  CHECK(r.blueprint.node_pools[0].origin.loc.file == "blueprints/examples/multi-file/pools.yaml");
  CHECK(r.blueprint.find_stack("serve")->origin.loc.file == "blueprints/examples/multi-file/base.yaml");
  CHECK(r.blueprint.files.size() == 2);
}

}  // namespace plinth::test::blueprint_examples
