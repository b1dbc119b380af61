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

TEST_CASE("valid_utf8 accepts well-formed UTF-8 and refuses every kind of malformed sequence") {
  CHECK(valid_utf8(""));
  CHECK(valid_utf8("plain ascii"));
  CHECK(valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"));  // é € 🚀
  CHECK(valid_utf8("\xf4\x8f\xbf\xbf"));                         // U+10FFFF
  CHECK_FALSE(valid_utf8("\xff"));
  CHECK_FALSE(valid_utf8("\x80"));              // stray continuation byte
  CHECK_FALSE(valid_utf8("\xc0\xaf"));          // overlong '/'
  CHECK_FALSE(valid_utf8("\xe0\x80\xaf"));      // overlong, 3 bytes
  CHECK_FALSE(valid_utf8("\xed\xa0\x80"));      // surrogate U+D800
  CHECK_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(valid_utf8("caf\xc3"));           // cut at the end
  CHECK_FALSE(valid_utf8("\xe2\x82x"));         // cut in the middle
}

TEST_CASE("to_valid_utf8 replaces each bad byte with U+FFFD and keeps valid text as it is") {
  CHECK(to_valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(to_valid_utf8("a\xff" "b") == "a\xef\xbf\xbd" "b");
  CHECK(to_valid_utf8("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  CHECK(valid_utf8(to_valid_utf8("\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc")));
}

TEST_CASE("safe_text writes control characters, bidi overrides and bad UTF-8 as visible escapes") {
  CHECK(safe_text("no encryption at rest") == "no encryption at rest");
  CHECK(safe_text("two\nlines\tand a tab") == "two\nlines\tand a tab");
  CHECK(safe_text("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(safe_text("bell\a cr\r del\x7f nul" + std::string(1, '\0')) == "bell\\x07 cr\\x0d del\\x7f nul\\x00");
  CHECK(safe_text("\xc2\x9b" "31m") == "\\u009b31m");                 // C1 CSI
  CHECK(safe_text("abc\xe2\x80\xae" "cba") == "abc\\u202ecba");       // right-to-left override
  CHECK(safe_text("\xef\xbf\xbe") == "\\ufffe");
  CHECK(safe_text("caf\xc3\xa9 \xff") == "caf\xc3\xa9 \xef\xbf\xbd");
  CHECK(safe_text("tab\tnewline\n", false) == "tab\\x09newline\\x0a");  // for text that stays on one line
  for (const char* s : {"\x1b]8;;http://x\x07", "\xff\xfe\x1b", "ok", "\xe2\x80\xae\xc2\x85"}) {
    std::string once = safe_text(s);
    CHECK(valid_utf8(once));
    CHECK(safe_text(once) == once);
  }
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

TEST_CASE("diagnostics escape control characters, and the caret stays under its column") {
  plinth::test::TempDir dir;
  std::string f = dir.write("x.yaml", "a: \"\x1b[2J\"  bad\n");
  Diagnostic d{"BP005", Severity::Error, "value \x1b[2J is bad", {f, 1, 12}, "", "remove \x1b"};
  CHECK(format_diagnostic(d) == f + ":1:12: error[BP005]: value \\x1b[2J is bad\n"
                                    " 1 | a: \"\\x1b[2J\"  bad\n"
                                    "   |               ^\n"
                                    "  hint: remove \\x1b\n");  // A character of several bytes takes one cell, and so does the U+FFFD for a bad byte.
  std::string g = dir.write("y.yaml", "b: caf\xc3\xa9 \xff x\n");
  Diagnostic e{"BP005", Severity::Error, "bad", {g, 1, 12}, "", ""};
  CHECK(format_diagnostic(e) == g + ":1:12: error[BP005]: bad\n"
                                    " 1 | b: caf\xc3\xa9 \xef\xbf\xbd x\n"
                                    "   |           ^\n");
}
