// The Compute list `filter` expressions gcp-emulator understands.
#include "tests/emulators/gcp/list_filter.h"

#include <catch2/catch.hpp>

using nlohmann::json;
using plinth::gcp_emulator::ListFilter;

namespace {

const json kInstance = {
    {"name", "gpu-12"},
    {"status", "RUNNING"},
    {"id", "4700000000000007919"},
    {"creationTimestamp", "2026-01-02T03:04:05.000-07:00"},
    {"labels", {{"plinth-pool", "gcp-a3"}, {"plinth-lineage", "l-1234"}}},
    {"scheduling", {{"provisioningModel", "SPOT"}, {"preemptible", false}}},
    {"guestAccelerators", json::array({{{"acceleratorCount", 8}}})},
    {"networkInterfaces", json::array({{{"networkIP", "10.128.0.7"}}, {{"networkIP", "10.128.0.8"}}})}};

bool match(const std::string& filter, const json& resource = kInstance) {
  std::string error;
  auto f = ListFilter::parse(filter, error);
  INFO(filter << ": " << error);
  REQUIRE(f);
  return f->matches(resource);
}

std::string parse_error(const std::string& filter) {
  std::string error;
  auto f = ListFilter::parse(filter, error);
  CHECK_FALSE(f);
  return error;
}

}  // namespace

TEST_CASE("label filters in every form a provider writes") {
  CHECK(match(""));
  CHECK(match("labels.plinth-pool = \"gcp-a3\""));
  CHECK(match("labels.plinth-pool=\"gcp-a3\""));
  CHECK(match("labels.plinth-pool = gcp-a3"));
  CHECK(match("labels.plinth-pool = 'gcp-a3'"));
  CHECK_FALSE(match("labels.plinth-pool = \"gcp-a2\""));
  CHECK(match("labels.plinth-pool != \"gcp-a2\""));
  CHECK(match("labels.plinth-pool:*"));
  CHECK_FALSE(match("labels.absent:*"));
  CHECK(match("-labels.absent:*"));
  CHECK(match("labels.absent != x"));  // a missing label is "not equal"
  CHECK_FALSE(match("labels.absent = x"));
  CHECK(match("labels.plinth-pool = \"gcp-a3\" AND labels.plinth-lineage = \"l-1234\""));
  CHECK(match("(labels.plinth-pool = \"gcp-a3\") (labels.plinth-lineage = \"l-1234\")"));
  CHECK_FALSE(match("labels.plinth-pool = \"gcp-a3\" labels.plinth-lineage = \"other\""));
  CHECK(match("labels.plinth-lineage eq l-[0-9]+"));
  CHECK_FALSE(match("labels.plinth-lineage eq l-[0-9]"));  // eq matches the whole value
  CHECK(match("labels.plinth-lineage ne other"));
}

TEST_CASE("names, statuses, nested fields, numbers and OR") {
  CHECK(match("name = \"gpu-*\""));
  CHECK(match("name = \"*-12\""));
  CHECK_FALSE(match("name = \"gpu-1\""));
  CHECK(match("status = RUNNING"));
  CHECK(match("NOT status = TERMINATED"));
  CHECK(match("scheduling.provisioningModel = SPOT"));
  CHECK(match("scheduling.preemptible = false"));
  CHECK(match("guestAccelerators.acceleratorCount >= 8"));
  CHECK_FALSE(match("guestAccelerators.acceleratorCount > 8"));
  CHECK(match("networkInterfaces.networkIP = \"10.128.0.8\""));  // any element of an array
  CHECK(match("creationTimestamp > \"2026-01-01\""));
  CHECK(match("status = STOPPING OR name = \"gpu-12\""));
  CHECK_FALSE(match("status = STOPPING OR name = \"gpu-13\""));
  CHECK(match("(status = STOPPING OR status = RUNNING) labels.plinth-pool = gcp-a3"));
}

TEST_CASE("a malformed filter is refused with where it went wrong") {
  CHECK(parse_error("name = \"gpu") == "unterminated string at offset 11");
  CHECK(parse_error("name") == "expected a comparison (=, !=, <, <=, >, >=, :, eq, ne) after 'name' at offset 4");
  CHECK(parse_error("name =") == "expected a value after 'name =' at offset 6");
  CHECK(parse_error("(name = x") == "missing ')' at offset 9");
  CHECK(parse_error("name = x)") == "unexpected ')' at offset 8");
  CHECK(parse_error("name eq '['") == "'[' is not a regular expression at offset 11");
  CHECK(parse_error("= x") == "expected a field name at offset 0");
}
