// plinth graph on the example blueprints.
#include <catch2/catch.hpp>

#include "tests/support/run.h"

namespace plinth::test::e2e_graph {

TEST_CASE("plinth graph prints deterministic DOT of the lab") {
  auto r = run_plinth({"graph", "blueprints/examples/lab.yaml"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == R"dot(digraph plinth {
  rankdir = "LR";
  node [shape = "box"];
  "baremetal.node.lab-l40s[0]";
  "baremetal.node.lab-l40s[1]";
  "net.vlan.lab-net";
  "plinth.monitoring.default";
  "plinth.stack.lab";
  "storage.tier.scratch";
  "baremetal.node.lab-l40s[0]" -> "net.vlan.lab-net";
  "baremetal.node.lab-l40s[0]" -> "plinth.stack.lab";
  "baremetal.node.lab-l40s[0]" -> "storage.tier.scratch";
  "baremetal.node.lab-l40s[1]" -> "net.vlan.lab-net";
  "baremetal.node.lab-l40s[1]" -> "plinth.stack.lab";
  "baremetal.node.lab-l40s[1]" -> "storage.tier.scratch";
}
)dot");
  CHECK(run_plinth({"graph", "blueprints/examples/lab.yaml"}).out == r.out);
}

TEST_CASE("plinth graph --collapse draws each pool once with its count") {
  auto r = run_plinth({"graph", "blueprints/examples/cluster.yaml", "--collapse"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("  \"baremetal.node.train-a[*]\" [label = \"baremetal.node.train-a[0..31] (32)\"];\n") !=
        std::string::npos);
  CHECK(r.out.find("  \"baremetal.node.train-a[*]\" -> \"net.fabric.ib-ndr\";\n") != std::string::npos);
  CHECK(r.out.find("  \"storage.backup.ckpt\" -> \"storage.tier.cold\";\n") != std::string::npos);
  CHECK(r.out.find("train-a[5]") == std::string::npos);
}

TEST_CASE("plinth graph of an invalid path fails with the loader's diagnostic") {
  auto r = run_plinth({"graph", "blueprints/examples/nope.yaml"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("nope.yaml") != std::string::npos);
}

}  // namespace plinth::test::e2e_graph
