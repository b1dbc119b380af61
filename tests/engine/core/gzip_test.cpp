// gzip for capped transports (EC2 user data) and its inverse.
#include <catch2/catch.hpp>

#include "engine/core/gzip.h"

using namespace plinth;

TEST_CASE("gzip is deterministic, round-trips and refuses what is not gzip", "[gzip]") {
  std::string doc = "#cloud-config\n";
  for (int i = 0; i < 500; ++i) doc += "  - [\"echo\", \"line " + std::to_string(i) + "\"]\n";
  const std::string z = gzip(doc);
  CHECK(z == gzip(doc));
  CHECK(is_gzip(z));
  CHECK(z.size() < doc.size() / 4);
  CHECK(static_cast<unsigned char>(z[3]) == 0);  // FLG: no name, no comment
  CHECK(z.substr(4, 4) == std::string(4, '\0'));  // MTIME 0
  CHECK(gunzip(z) == doc);
  CHECK_FALSE(is_gzip(doc));
  CHECK_FALSE(gunzip(doc));
  CHECK_FALSE(gunzip(z.substr(0, z.size() / 2)));  // truncated
  CHECK_FALSE(gunzip(z, 100));                     // over the limit
  CHECK(gunzip(gzip("")) == "");
}
