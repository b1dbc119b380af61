// docs/rules.md is generated from validate::rules(); this keeps it current.
#include <catch2/catch.hpp>

#include "engine/validate/validate.h"
#include "tests/support/run.h"

using namespace plinth;

TEST_CASE("docs/rules.md is generated from the rules and up to date") {
  INFO("regenerate with: plinth rules --markdown > docs/rules.md");
  CHECK(test::slurp("docs/rules.md") == validate::rules_markdown());
}

TEST_CASE("docs/rules.md gives every rule its rationale and fix") {
  std::string md = validate::rules_markdown();
  for (const auto& r : validate::rules()) {
    INFO(r.id);
    CHECK(md.find("### " + r.id) != std::string::npos);
    CHECK(md.find(r.rationale) != std::string::npos);
    CHECK_FALSE(r.checks.empty());
    CHECK_FALSE(r.fix.empty());
  }
}
