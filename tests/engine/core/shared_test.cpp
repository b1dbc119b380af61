#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "engine/core/shared.h"

using plinth::Shared;

TEST_CASE("Shared: copies share one value, equality compares values, empty is like nullopt") {
  Shared<std::string> empty;
  CHECK_FALSE(empty);
  CHECK_FALSE(empty.has_value());
  CHECK_THROWS_AS(empty.value(), std::bad_optional_access);
  CHECK(empty == Shared<std::string>(std::nullopt));

  Shared<std::string> a = std::string("h100");
  Shared<std::string> b = a;
  REQUIRE(a);
  CHECK(&*a == &*b);  // shared, not copied
  CHECK(a->size() == 4);
  Shared<std::string> c = std::string("h100");
  CHECK(&*a != &*c);
  CHECK(a == c);  // equal values
  CHECK_FALSE(a == Shared<std::string>(std::string("a100")));
  CHECK_FALSE(a == empty);
  b.reset();
  CHECK_FALSE(b);
  CHECK(*a == "h100");
}

TEST_CASE("Shared: a part keeps the whole value alive") {
  Shared<std::string> part;
  {
    Shared<std::map<std::string, std::string>> whole = std::map<std::string, std::string>{{"gpu", "H100-80GB"}};
    part = whole.part(whole->at("gpu"));
    CHECK(&*part == &whole->at("gpu"));
  }
  // The map is gone from every name but lives on through its part.
  REQUIRE(part);
  CHECK(*part == "H100-80GB");
}
