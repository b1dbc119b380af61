// The shipped example blueprints load with no diagnostics at all.
#include <catch2/catch.hpp>

#include "engine/blueprint/loader.h"

using namespace plinth;

namespace {
std::string dump(const Diagnostics& ds) {
  std::string out;
  for (const auto& d : ds) out += format_diagnostic(d);
  return out;
}
}  // namespace

TEST_CASE("every example blueprint loads clean", "[blueprint][examples]") {
  for (const char* f : {"blueprints/examples/lab.yaml", "blueprints/examples/cluster.yaml",
                        "blueprints/examples/regulated.yaml"}) {
    INFO(f);
    auto r = bp::load_files({f});
    INFO(dump(r.diagnostics));
    CHECK(r.diagnostics.empty());
    REQUIRE(r.blueprint.files.size() == 1);
    CHECK(r.blueprint.files[0].path == f);
    CHECK(r.blueprint.files[0].sha256.size() == 64);
  }
}
