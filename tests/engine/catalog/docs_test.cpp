// docs/catalog.md is generated from the embedded catalog data; this keeps it
// current and checks that a reader finds what the data says.
#include <catch2/catch.hpp>

#include "engine/catalog/markdown.h"
#include "tests/support/run.h"

using namespace plinth;

TEST_CASE("docs/catalog.md is generated from the catalog data and up to date") {
  auto cat = catalog::Catalog::load_embedded();
  REQUIRE(cat.ok());
  INFO("regenerate with: plinth catalog --markdown > docs/catalog.md");
  CHECK(test::slurp("docs/catalog.md") == catalog::catalog_markdown(cat.value()));
}

TEST_CASE("docs/catalog.md has a CUDA to minimum driver table") {
  auto cat = catalog::Catalog::load_embedded().value();
  std::string md = catalog::catalog_markdown(cat);
  for (const auto& v : cat.cuda_versions()) {
    INFO(v);
    // Each release is a row naming its minimum Linux driver.
    std::string row = "| " + v + " | " + *cat.min_driver_for_cuda(v) + " |";
    CHECK(md.find(row) != std::string::npos);
  }
  for (const auto* g : cat.gpu_models()) CHECK(md.find(g->name) != std::string::npos);
}
