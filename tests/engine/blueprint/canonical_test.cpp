// engine/blueprint/canonical.h: plinth fmt's layout, comments kept, data unchanged.
#include "engine/blueprint/canonical.h"

#include <catch2/catch.hpp>

namespace plinth::test::blueprint_canonical {

TEST_CASE("fmt puts the sections in order with their comments, and tidies whitespace", "[blueprint][fmt]") {
  const std::string messy =
      "# A lab blueprint\n"
      "apiVersion: plinth/v1\r\n"
      "kind: Blueprint\n"
      "# pools first, by habit\n"
      "node_pools:   \n"
      "  - name: a   # the only pool\n"
      "    count: 2\n"
      "\n"
      "\n"
      "\n"
      "metadata: {name: lab}\n"
      "stacks:\n"
      "  train: {driver: \"550.54.15\", cuda: \"12.4\"}\n"
      "\n";
  auto out = bp::canonical_text(messy, "bp.yaml");
  REQUIRE(out.ok());
  CHECK(*out ==
        "# A lab blueprint\n"
        "apiVersion: plinth/v1\n"
        "kind: Blueprint\n"
        "metadata: {name: lab}\n"
        "\n"
        "stacks:\n"
        "  train: {driver: \"550.54.15\", cuda: \"12.4\"}\n"
        "\n"
        "# pools first, by habit\n"
        "node_pools:\n"
        "  - name: a   # the only pool\n"
        "    count: 2\n");
  // Canonical text stays as it is.
  CHECK(bp::canonical_text(*out, "bp.yaml").value() == *out);
}

TEST_CASE("fmt refuses tabs in indentation and YAML that does not parse, naming the line", "[blueprint][fmt]") {
  auto tab = bp::canonical_text("apiVersion: plinth/v1\nstacks:\n\ttrain: {}\n", "bp.yaml");
  REQUIRE_FALSE(tab.ok());
  CHECK(tab.error().message == "bp.yaml:3:1: a tab in indentation (YAML allows spaces only); indent with spaces");
  auto bad = bp::canonical_text("apiVersion: plinth/v1\nstacks: [\n", "bp.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.rfind("bp.yaml:", 0) == 0);
}

TEST_CASE("fmt keeps the order of several documents and of a flow top level", "[blueprint][fmt]") {
  const std::string docs = "stacks: {}\n---\napiVersion: plinth/v1\n";
  CHECK(bp::canonical_text(docs, "x.yaml").value() == docs);
  const std::string flow = "{stacks: {}, apiVersion: plinth/v1}\n";
  CHECK(bp::canonical_text(flow, "x.yaml").value() == flow);
}

}  // namespace plinth::test::blueprint_canonical
