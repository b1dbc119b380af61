#include <catch2/catch.hpp>

#include "engine/core/diagnostic.h"
#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "tests/support/run.h"

using namespace plinth;

TEST_CASE("edit distance and did-you-mean suggest close names only") {
  CHECK(edit_distance("stack", "stakc") == 2);
  CHECK(did_you_mean("trian", {"train", "infer"}) == "did you mean 'train'?");
  CHECK(did_you_mean("zzzzzz", {"train", "infer"}) == "expected one of: train, infer");
}

TEST_CASE("versions compare numerically per component") {
  CHECK(compare_versions("550.54.15", "550.54.14") > 0);
  CHECK(compare_versions("550.54.15", "550.100") < 0);
  CHECK(compare_versions("12.4", "12.4.0") == 0);
  CHECK(compare_versions("9", "10") < 0);
}

TEST_CASE("sha256 matches the FIPS 180-2 test vector") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("diagnostics render as file:line:col with a caret under the column") {
  Diagnostic d{"BP002", Severity::Error, "unknown key 'cuda_version'", {"/nonexistent.yaml", 3, 5}, "", "did you mean 'cuda'?"};
  CHECK(format_diagnostic(d) ==
        "/nonexistent.yaml:3:5: error[BP002]: unknown key 'cuda_version'\n  hint: did you mean 'cuda'?\n");
}

TEST_CASE("a diagnostic marked show_source=false leaves out the source excerpt") {
  plinth::test::TempDir dir;
  std::string f = dir.write("bp.yaml", "bmc:\n  credentials: \"admin:calvin\"\n");
  Diagnostic d{"BP008", Severity::Error, "inline credentials", {f, 2, 16}, "", ""};
  CHECK(format_diagnostic(d).find("calvin") != std::string::npos);
  d.show_source = false;
  CHECK(format_diagnostic(d) == f + ":2:16: error[BP008]: inline credentials\n");
}
