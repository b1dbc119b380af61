// JsonReader against Json::parse: the same value (type included: unsigned,
// signed, float), the same exception and message, for every kind of input.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/core/json_reader.h"

namespace plinth::test::json_reader {

namespace {

/// The value's dump with each number's type marked (u, i, f).
std::string typed(const Json& j) {
  switch (j.type()) {
    case Json::value_t::array: {
      std::string out = "[";
      for (const auto& v : j) out += typed(v) + ",";
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      for (const auto& [k, v] : j.items()) out += Json(k).dump() + ":" + typed(v) + ",";
      return out + "}";
    }
    case Json::value_t::number_unsigned: return "u" + j.dump();
    case Json::value_t::number_integer: return "i" + j.dump();
    case Json::value_t::number_float: return "f" + j.dump();
    default: return j.dump();
  }
}

/// What Json::parse makes of `text`: the value's dump with each number's
/// type, or the exception's message.
std::string nlohmann_reading(const std::string& text) {
  try {
    return typed(Json::parse(text));
  } catch (const Json::exception& e) {
    return std::string("error: ") + e.what();
  }
}

std::string reader_reading(const std::string& text) {
  try {
    return typed(parse_json_text(text));
  } catch (const Json::exception& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

TEST_CASE("JsonReader reads what Json::parse reads, and refuses what it refuses, with its message") {
  const std::vector<std::string> texts = {
      // values of every type; integers without a sign are unsigned, as Json::parse reads them
      R"({"a":1,"b":-1,"c":1.5,"d":true,"e":false,"f":null,"g":"x","h":[],"i":{}})",
      R"([0,0.0,1e2,1E-2,-1.0e+3,123456789012345678,-9223372036854775808])",
      // the integer -0 is signed for Json::parse (simdjson reads an int64 0); each alone, as the fuzzer found it
      "[-0]", R"({"index":-0})", "[0, -0 ]", "-0", "[-0.0]", "[-0e0]", R"(["-0", "a,-0,b", "x-0"])",
      R"([9223372036854775807,9223372036854775808,18446744073709551615])",
      // beyond 64 bits Json::parse reads a double; beyond a double's range it refuses
      R"([18446744073709551616,-9223372036854775809,1e308,1e-400])", R"([1e400])", R"([-1e400])",
      // strings: escapes, surrogate pairs, NUL, UTF-8
      R"(["a\"b\\c\/d\b\f\n\r\t","\u00e9\u4e2d\ud83d\ude00","\u0000x","é中😀"])",
      // a repeated key keeps its last value; keys are sorted either way
      R"({"b":1,"a":2,"b":3})", R"({"":{"":[]}})",
      // whitespace around and inside
      " \t\r\n{ \"a\" : [ 1 , 2 ] } \n",
      // refused: truncated, trailing garbage, trailing comma, bad literals and numbers
      "", " ", "{", R"({"a":1)", R"({"a":1}})", R"({"a":1} x)", "[1,]", R"({"a":1,})", "tru", "nul",
      "[01]", "[1.]", "[.5]", "[+1]", "[-]", "[1e]", "[NaN]", "[Infinity]",
      // refused: control characters, bad escapes, lone surrogates, bad UTF-8
      "[\"a\tb\"]", "[\"a\nb\"]", R"(["\x"])", R"(["\u12"])", R"(["\ud800"])", R"(["\udc00x"])",
      "[\"\xff\"]", "[\"\xc3\"]", "[\"\xed\xa0\x80\"]",
      // a byte order mark before the value
      "\xEF\xBB\xBF{\"a\":1}",
      // nesting deeper than simdjson's 1,024 levels: read by Json::parse
      std::string(1100, '[') + std::string(1100, ']'),
  };
  for (const auto& text : texts) {
    INFO(text.substr(0, 80));
    CHECK(reader_reading(text) == nlohmann_reading(text));
  }
}

TEST_CASE("JsonReader joins pieces, and reads one document after another with the same buffers") {
  JsonReader reader;
  CHECK(reader.parse({R"({"resources":[)", R"({"a":1},{"b":[2,3]})", "]}"}) ==
        Json::parse(R"({"resources":[{"a":1},{"b":[2,3]}]})"));
  // A large document, then a small one: the buffers are reused, the values independent.
  std::string large = "[";
  for (int i = 0; i < 20000; ++i) large += (i ? "," : "") + std::string(R"({"i":)") + std::to_string(i) + "}";
  large += "]";
  const Json big = reader.parse({large});
  CHECK(big.size() == 20000);
  CHECK(big[19999]["i"] == 19999);
  CHECK(reader.parse({"[1]"}) == Json::array({1}));
  CHECK_THROWS_AS(reader.parse({"[1", ""}), Json::parse_error);
  CHECK(reader.parse({"[", "2", "]"}) == Json::array({2}));
}

TEST_CASE("json_array_splits cuts between elements of the array at a nested path only") {
  const std::vector<std::string_view> path = {"plan", "resource_changes"};
  const std::string text =
      R"({"bindings":{"resource_changes":[9,9]},"plan":{"resource_changes":[{"a":[1,2]},"x,y",{"b":{"c":3}}],)"
      R"("summary":{"n":[4,5]}},"signature":{"v":"]}"}})";
  const std::vector<size_t> at = json_array_splits(text, path, 1);
  REQUIRE(at.size() == 2);
  CHECK(text.substr(at[0] - 6, 9) == "[1,2]},\"x");  // not the commas inside elements
  CHECK(text.substr(at[1] - 4, 6) == "x,y\",{");
  // The pieces parse on their own and give the whole's elements.
  JsonReader reader;
  Json first = reader.parse({std::string_view(text).substr(0, at[0]), "]}}"});
  Json middle = reader.parse({"[", std::string_view(text).substr(at[0] + 1, at[1] - at[0] - 1), "]"});
  Json last = reader.parse({R"({"plan":{"resource_changes":[)", std::string_view(text).substr(at[1] + 1)});
  const Json whole = Json::parse(text);
  CHECK(first["plan"]["resource_changes"] == Json::array({whole["plan"]["resource_changes"][0]}));
  CHECK(middle == Json::array({"x,y"}));
  CHECK(last["plan"]["resource_changes"] == Json::array({whole["plan"]["resource_changes"][2]}));
  CHECK(last["signature"] == whole["signature"]);
  CHECK(json_array_splits(text, path, text.size()) == std::vector<size_t>{at[1]});  // the last comma alone
  CHECK(json_array_splits(text, {"resources"}, 1).empty());                         // no such array
  CHECK(json_array_splits(text, {"bindings", "resource_changes"}, 1).size() == 1);
  // Keys repeated or escaped along the path, another shape on the path, not an object.
  CHECK(json_array_splits(R"({"plan":{"resource_changes":[1,2]},"plan":{"resource_changes":[3,4]}})", path, 1).empty());
  CHECK(json_array_splits(R"({"plan":{"resource_changes":[1,2],"resource_changes":[3]}})", path, 1).empty());
  CHECK(json_array_splits(R"({"plan":{"resource_change\u0073":[1,2]}})", path, 1).empty());
  CHECK(json_array_splits(R"({"plan":[{"resource_changes":[1,2]}]})", path, 1).empty());
  CHECK(json_array_splits(R"({"plan":{"resource_changes":{"a":1,"b":2}}})", path, 1).empty());
  CHECK(json_array_splits(R"({"plan":{"resource_changes":[1]}})", path, 1).empty());
  CHECK(json_array_splits(R"([{"plan":{"resource_changes":[1,2]}}])", path, 1).empty());
  CHECK(json_array_splits(R"({"plan":{"resource_changes":["unterminated,)", path, 1).empty());
  // Keys elsewhere may repeat: only the objects on the path are read.
  CHECK(json_array_splits(R"({"x":{"a":1,"a":2},"plan":{"resource_changes":[1,2]}})", path, 1).size() == 1);
}

}  // namespace plinth::test::json_reader
