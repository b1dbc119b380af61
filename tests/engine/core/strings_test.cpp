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

TEST_CASE("invalid_utf8_offset finds the first byte that is not UTF-8 (RFC 3629)") {
  CHECK_FALSE(invalid_utf8_offset("plain ascii").has_value());
  CHECK_FALSE(invalid_utf8_offset("caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80").has_value());
  CHECK(invalid_utf8_offset("caf\xe9") == 3u);              // Latin-1
  CHECK(invalid_utf8_offset("ab\xc3") == 2u);                // truncated
  CHECK(invalid_utf8_offset("\xc0\xaf") == 0u);             // overlong '/'
  CHECK(invalid_utf8_offset("x\xed\xa0\x80") == 1u);        // a UTF-16 surrogate
  CHECK(invalid_utf8_offset("\xf4\x90\x80\x80") == 0u);     // above U+10FFFF
}

TEST_CASE("escape_control makes text safe for a terminal") {
  CHECK(escape_control("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(escape_control("bell\a del\x7f") == "bell\\x07 del\\x7f");
  CHECK(escape_control("csi \xc2\x9b" "2J") == "csi \\u{9b}2J");
  CHECK(escape_control("bad \xe9 byte") == "bad \\xe9 byte");
  CHECK(escape_control("caf\xc3\xa9 \xe2\x98\x83") == "caf\xc3\xa9 \xe2\x98\x83");
  CHECK(escape_control("tab\tnewline\n") == "tab\tnewline\n");
  CHECK(escape_control("tab\tnewline\n", false) == "tab\\x09newline\\x0a");
}

TEST_CASE("diagnostics escape control characters, and the caret stays under its column") {
  plinth::test::TempDir dir;
  std::string f = dir.write("x.yaml", "a: \"\x1b[2J\"  bad\n");
  Diagnostic d{"BP005", Severity::Error, "value \x1b[2J is bad", {f, 1, 12}, "", "remove \x1b"};
  CHECK(format_diagnostic(d) == f + ":1:12: error[BP005]: value \\x1b[2J is bad\n"
                                    " 1 | a: \"\\x1b[2J\"  bad\n"
                                    "   |               ^\n"
                                    "  hint: remove \\x1b\n");
}
