#include <catch2/catch.hpp>

#include <algorithm>

#include "engine/core/files.h"
#include "engine/provider/resource.h"

using namespace plinth;

TEST_CASE("the resource type table is sorted, unique and looked up by name") {
  const auto& types = resource_types();
  REQUIRE(types.size() == 14);
  CHECK(std::is_sorted(types.begin(), types.end(), [](const auto& a, const auto& b) { return a.type < b.type; }));
  for (const auto& t : types) {
    INFO(t.type);
    CHECK(find_resource_type(t.type) == &t);
    CHECK(parse_address(make_address(t.type, "x", 1)).has_value());
    CHECK_FALSE(t.description.empty());
    for (const auto& a : t.attributes) CHECK_FALSE(a.description.empty());
  }
  CHECK(find_resource_type("baremetal.nodes") == nullptr);
  const ResourceType* node = find_resource_type("baremetal.node");
  REQUIRE(node);
  CHECK(node->find("user_data_hash")->force_new);
  CHECK(node->find("boot_method")->force_new);
  CHECK(node->find("bmc_endpoint")->force_new);
  CHECK_FALSE(node->find("bios")->force_new);
  CHECK(node->find("bmc_credentials")->sensitive);
  CHECK(find_resource_type("storage.tier")->find("encryption.at_rest")->force_new);
  CHECK(find_resource_type("aws.instance")->find("instance_type")->force_new);
  CHECK(find_resource_type("azure.vm")->find("resource_group"));
  CHECK(find_resource_type("aws.instance")->find("resource_group") == nullptr);
}

TEST_CASE("docs/resources.md documents every resource type and attribute with its marks") {
  std::string doc = read_file("docs/resources.md").value();
  for (const auto& t : resource_types()) {
    std::string heading = "## `" + t.type + "`";
    INFO(heading);
    size_t at = doc.find(heading);
    REQUIRE(at != std::string::npos);
    size_t end = doc.find("\n## ", at + 1);
    std::string section = doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
    size_t rows = 0;
    for (size_t r = section.find("\n| `"); r != std::string::npos; r = section.find("\n| `", r + 1)) ++rows;
    CHECK(rows == t.attributes.size());  // no stale rows either
    for (const auto& a : t.attributes) {
      std::string row = "| `" + a.name + "` | " + (a.force_new ? "yes" : "no") + " | " + (a.sensitive ? "yes" : "no") + " |";
      INFO(row);
      CHECK(section.find(row) != std::string::npos);
    }
  }
}
