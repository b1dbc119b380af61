// blueprints/invalid/rule-*.yaml through the library: each file loads cleanly
// and the domain rules report exactly its one finding, at the line in
// rule_cases.h (tests/e2e/rules_test.cpp checks the same through `plinth`).
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "engine/blueprint/loader.h"
#include "engine/validate/validate.h"
#include "tests/engine/validate/rule_cases.h"

using namespace plinth;

TEST_CASE("each blueprints/invalid/rule-*.yaml gives exactly its rule's diagnostic") {
  auto cat = catalog::Catalog::load_embedded().value();
  for (const auto& c : test::rule_cases()) {
    INFO(c.file);
    auto loaded = bp::load_files({c.file});
    for (const auto& d : loaded.diagnostics) INFO(format_diagnostic(d));
    REQUIRE(loaded.ok());
    CHECK(loaded.diagnostics.empty());
    auto ds = validate::validate(loaded.blueprint, cat);
    REQUIRE(ds.size() == 1 + c.also.size());
    const auto open = c.line.find('[');
    const std::string code = c.line.substr(open + 1, c.line.find(']') - open - 1);
    std::vector<std::string> others;
    for (const auto& d : ds) {
      if (d.code != code) {
        others.push_back(d.code);
        continue;
      }
      std::string text = format_diagnostic(d);
      CHECK(text.substr(0, text.find('\n')) == c.line);
    }
    CHECK(others == c.also);
    CHECK(has_errors(ds) == c.error);
  }
}

TEST_CASE("every domain rule has a blueprints/invalid/rule-*.yaml file") {
  std::set<std::string> covered, files;
  for (const auto& c : test::rule_cases()) {
    auto open = c.line.find('[');
    covered.insert(c.line.substr(open + 1, c.line.find(']') - open - 1));
    files.insert(c.file);
  }
  for (const auto& r : validate::rules()) {
    INFO(r.id);
    CHECK(covered.count(r.id) == 1);
  }
  for (const auto& e : std::filesystem::directory_iterator("blueprints/invalid")) {
    std::string name = e.path().filename().string();
    if (name.rfind("rule-", 0) == 0) {
      INFO(name);
      CHECK(files.count("blueprints/invalid/" + name) == 1);
    }
  }
}
