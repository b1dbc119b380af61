// plinth apply of AWS burst pools against aws-ec2-emulator (docs/providers/aws.md):
// what only EC2 does. The burst-pool contract's cases (spot pools over zones,
// create-before-destroy, fallback, throttling, lost answers, reclaim, refresh in
// O(pages), secrets) run for AWS in burst_pool_conformance_test.cpp (AwsCloud,
// tests/support/burst_cloud_aws.cpp, checks EFA and placement groups there).
#include <catch2/catch.hpp>

#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/run.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_aws {

namespace {

/// A Workspace on `ec2` whose HOME (for ~/.aws/config) is a folder of its own.
struct Ec2Workspace : Workspace {
  explicit Ec2Workspace(Ec2Emulator& ec2) : Workspace(&ec2, "10") { env = aws_env(ec2, home.path()); }
  TempDir home;
};

}  // namespace

TEST_CASE("aws: an unknown access key gives AuthFailure and touches nothing, and with a state the refresh meets it "
          "first",
          "[e2e][aws]") {
  Ec2Emulator ec2;
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool(2);
  ws.env["AWS_ACCESS_KEY_ID"] = "AKIDUNKNOWN";
  auto k = ws.apply(burst_blueprint({pool}));
  INFO(k.out << k.err);
  CHECK(k.exit_code == 1);
  CHECK(k.out.find("aws.instance.gpu[1]: AuthFailure: AWS was not able to validate the provided access credentials") !=
        std::string::npos);
  CHECK(ec2.instances().empty());
  CHECK(ec2.requests("RunInstances") == 2);  // one each, never retried
  // With a state, the refresh is what meets the wrong key first: nothing is planned.
  auto again = ws.apply(burst_blueprint({pool}));
  INFO(again.out << again.err);
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("AuthFailure: AWS was not able to validate the provided access credentials") != std::string::npos);
  CHECK(again.err.find("nothing was changed") != std::string::npos);
  CHECK(ec2.requests("RunInstances") == 2);
}

TEST_CASE("aws: a Capacity Block is targeted with MarketType capacity-block and its reservation", "[e2e][aws]") {
  Ec2Emulator ec2({"--capacity-reservation", "cr-0123456789abcdef0=p5.48xlarge:us-east-1b:2:capacity-block"});
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool(2, "    capacity: {capacity_block: cr-0123456789abcdef0}\n", false);
  auto r = ws.applied(burst_blueprint({pool}));
  auto active = ec2.active();
  REQUIRE(active.size() == 2);
  for (const auto& i : active) {
    CHECK(i["lifecycle"] == "capacity-block");
    CHECK(i["capacity_reservation_id"] == "cr-0123456789abcdef0");
    CHECK(i["availability_zone"] == "us-east-1b");
  }
}

}  // namespace plinth::test::e2e_aws
