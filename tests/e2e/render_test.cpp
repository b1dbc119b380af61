// plinth render as a user runs it.
#include <catch2/catch.hpp>

#include "engine/core/hash.h"
#include "tests/support/run.h"

using plinth::test::run_plinth;
using plinth::test::slurp;
using plinth::test::TempDir;

namespace {
bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }
}  // namespace

TEST_CASE("plinth render prints a pool's cloud-config", "[e2e][render]") {
  auto r = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "train-a"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("#cloud-config\n", 0) == 0);
  CHECK(contains(r.out, "      Pin: version 550.54.15-*\n"));
  CHECK(contains(r.out, "\"cuda-drivers-550\", \"cuda-toolkit-12-4\""));
  CHECK(contains(r.out, "\"/usr/local/sbin/plinth-luks\", \"hot\", \"/etc/plinth/keys/hot.key\", \"/mnt/hot\""));
}

TEST_CASE("plinth render --network-config prints the VLANs and --output writes a file", "[e2e][render]") {
  auto r = run_plinth({"render", "blueprints/examples/cluster.yaml", "-pool=train-a", "--network-config"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "version: 2\n"));
  CHECK(contains(r.out, "  vlan100:  # ml-fabric 10.100.0.0/16 (training)\n    id: 100\n    link: bond0\n    mtu: 9000\n"));

  TempDir dir;
  const std::string out = dir.path() + "/user-data";
  auto w = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "aws-p5", "--output", out});
  INFO(w.err);
  REQUIRE(w.exit_code == 0);
  CHECK(w.out.empty());
  CHECK(slurp(out).rfind("#cloud-config\n", 0) == 0);
  CHECK(contains(w.err, "Wrote user-data for pool aws-p5 to " + out + " (sha256 " + plinth::sha256_hex(slurp(out)) +
                           "); the pool's user_data_hash is "));

  auto none = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "aws-p5", "--network-config"});
  CHECK(none.exit_code == 1);
  CHECK(contains(none.err, "plinth render: pool 'aws-p5' has no network config"));
}

TEST_CASE("plinth render with an unknown pool exits 1 with a did-you-mean", "[e2e][render]") {
  auto r = run_plinth({"render", "blueprints/examples/cluster.yaml", "--pool", "train-b"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "plinth render: unknown pool 'train-b'; did you mean 'train-a'? Pools in this blueprint: "
                        "train-a, infer-mig, prep, aws-p5, gcp-a3, azure-nd\n"));

  auto missing = run_plinth({"render", "blueprints/examples/cluster.yaml"});
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "plinth render: --pool NAME is required"));
}
