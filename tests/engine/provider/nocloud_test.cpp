// NoCloud seeds, read back with xorriso (the tool a user would check one with).
#include "engine/provider/nocloud.h"

#include <catch2/catch.hpp>

#include "tests/support/run.h"

namespace plinth {
namespace {

using test::run_program;
using test::slurp;
using test::TempDir;

Resource node(const std::string& pool, int index, const std::string& hash) {
  Resource r;
  r.type = "baremetal.node";
  r.name = pool;
  r.index = index;
  r.address = make_address(r.type, pool, index);
  r.attributes["user_data_hash"] = hash;
  return r;
}

}  // namespace

TEST_CASE("nocloud_meta_data names the node and ties the instance to its stack") {
  CHECK(nocloud_meta_data(node("hgx-a", 3, "0123456789abcdef0123")) ==
        "instance-id: hgx-a-3-0123456789ab\nlocal-hostname: hgx-a-3\n");
  CHECK(nocloud_meta_data(node("cpu", 0, "")) == "instance-id: cpu-0\nlocal-hostname: cpu-0\n");
}

TEST_CASE("nocloud_iso is an ISO 9660 image labelled cidata with the seed's files, byte for byte") {
  const NoCloudSeed seed{"#cloud-config\npackages: [nvidia-driver-550]\n", "instance-id: n-0\nlocal-hostname: n-0\n",
                         "network:\n  version: 2\n"};
  auto iso = nocloud_iso(seed);
  REQUIRE(iso);
  CHECK(iso->size() % 2048 == 0);
  CHECK(iso->substr(32768 + 1, 5) == "CD001");  // the primary volume descriptor
  TempDir dir;
  const std::string file = dir.write("seed.iso", *iso);

  auto info = run_program({"xorriso", "-indev", file, "-pvd_info"});
  REQUIRE(info.exit_code == 0);
  INFO(info.out + info.err);
  CHECK(info.out.find("Volume Id    : cidata") != std::string::npos);

  auto out = run_program({"xorriso", "-osirrox", "on", "-indev", file, "-extract", "/", dir.path() + "/x"});
  REQUIRE(out.exit_code == 0);
  CHECK(slurp(dir.path() + "/x/user-data") == seed.user_data);
  CHECK(slurp(dir.path() + "/x/meta-data") == seed.meta_data);
  CHECK(slurp(dir.path() + "/x/network-config") == seed.network_config);

  // Joliet names too (what Windows-based BMC firmware and blkid's readers see).
  auto joliet = run_program({"xorriso", "-rockridge", "off", "-joliet", "on", "-indev", file, "-find", "/", "-type", "f"});
  REQUIRE(joliet.exit_code == 0);
  CHECK(joliet.out.find("'/user-data'") != std::string::npos);

  SECTION("the same seed gives the same bytes, another seed other bytes") {
    CHECK(*nocloud_iso(seed) == *iso);
    NoCloudSeed other = seed;
    other.user_data += "# another pin\n";
    CHECK(*nocloud_iso(other) != *iso);
  }
  SECTION("no network-config file when the pool has none") {
    auto bare = nocloud_iso({seed.user_data, seed.meta_data, ""});
    REQUIRE(bare);
    const std::string f = dir.write("bare.iso", *bare);
    auto list = run_program({"xorriso", "-indev", f, "-find", "/", "-type", "f"});
    REQUIRE(list.exit_code == 0);
    CHECK(list.out.find("network-config") == std::string::npos);
    CHECK(list.out.find("'/meta-data'") != std::string::npos);
  }
}

}  // namespace plinth
