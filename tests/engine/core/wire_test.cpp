// engine/core/wire.h: the shape limits of JSON read from outside.
#include "engine/core/wire.h"

#include <catch2/catch.hpp>

using namespace plinth;

TEST_CASE("JSON from outside: nesting deeper than 256 levels or denser than real documents is refused unparsed",
          "[security]") {
  const std::string at_limit = std::string(256, '[') + std::string(256, ']');
  CHECK_FALSE(json_shape_problem(at_limit));
  CHECK_FALSE(parse_json_or_discard(at_limit).is_discarded());
  const std::string deeper = std::string(257, '[') + std::string(257, ']');
  REQUIRE(json_shape_problem(deeper));
  CHECK(*json_shape_problem(deeper) == "nests arrays or objects deeper than 256 levels (at byte 257)");
  CHECK(parse_json_or_discard(deeper).is_discarded());
  // Brackets in strings, escaped quotes included, are text.
  CHECK_FALSE(json_shape_problem("[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]"));

  // Dense: 100,000 empty arrays in 300 kB.
  std::string wide = "[";
  for (int i = 0; i < 100000; ++i) wide += i ? ",[]" : "[]";
  wide += "]";
  REQUIRE(json_shape_problem(wide));
  CHECK(*json_shape_problem(wide) == "holds 100001 arrays and objects in " + std::to_string(wide.size()) +
                                         " bytes, more than one per 24 bytes (real documents hold one per 40 or more)");
  // A small document may be dense; a real one of any size passes.
  CHECK_FALSE(json_shape_problem("[[],[],[],[]]"));
  std::string resources = "[";
  for (int i = 0; i < 20000; ++i)
    resources += std::string(i ? "," : "") + R"({"address":"net.vlan.v)" + std::to_string(i) +
                 R"(","type":"net.vlan","name":"v","index":-1,"provider":"plinth",)"
                 R"("source":{"file":"a.yaml","line":3,"column":7},"depends_on":[],"attributes":{},"computed":{}})";
  resources += "]";
  CHECK_FALSE(json_shape_problem(resources));
}

TEST_CASE("json_string_end finds the quote that closes a string: one after an odd run of backslashes is escaped") {
  const std::string_view text = R"(["a\"b", "c\\", "\\\"d", "unterminated\")";
  CHECK(json_string_end(text, 1) == 6);    // "a\"b": the quote after one backslash is escaped
  CHECK(json_string_end(text, 9) == 13);   // "c\\": two backslashes, then the end
  CHECK(json_string_end(text, 16) == 22);  // "\\\"d": three backslashes and a quote, then d and the end
  CHECK(json_string_end(text, 25) == std::string_view::npos);
  CHECK(json_string_end(R"("")", 0) == 1);
  // Every string of a document ends where nlohmann's parser ends it.
  const Json values = Json::array({"", "\\", "\"", "a\\\"b", "\\\\", "x\u00e9\n\t"});
  const std::string dumped = values.dump();
  size_t at = 1;
  for (const auto& v : values) {
    const size_t end = json_string_end(dumped, at);
    REQUIRE(end != std::string_view::npos);
    CHECK(Json::parse(dumped.substr(at, end - at + 1)) == v);
    at = end + 2;
  }
}

TEST_CASE("a source location reads back exactly what str() writes, and only positive numbers are positions") {
  auto read = [](const Json& j) { return j.get<SourceLoc>(); };
  CHECK(read("a.yaml:25:7") == SourceLoc{"a.yaml", 25, 7});
  CHECK(read("a.yaml:25") == SourceLoc{"a.yaml", 25, 0});
  CHECK(read("C:/x.yaml:3:1") == SourceLoc{"C:/x.yaml", 3, 1});
  // The fuzzer's plan file (tests/fuzz/regressions/fuzz_planfile/negative-source-column.plan): "-7" was read
  // as column -7, which str() leaves out, so the plan changed when written back.
  for (const char* text : {"a.yaml:25:-7", "a.yaml:0", "a.yaml:+3", "a.yaml:0:5"}) {
    INFO(text);
    const SourceLoc loc = read(text);
    CHECK(loc.str() == text);
    CHECK(read(loc.str()) == loc);
  }
  // The 0.1 object form: what str() cannot write is unknown.
  CHECK(read(Json{{"file", "a.yaml"}, {"line", -1}, {"column", 4}}) == SourceLoc{"a.yaml", 0, 0});
  CHECK(read(Json{{"file", ""}, {"line", 3}, {"column", 4}}) == SourceLoc{});
  CHECK(read(Json{{"file", "a.yaml"}, {"line", 3}, {"column", -4}}) == SourceLoc{"a.yaml", 3, 0});
}
