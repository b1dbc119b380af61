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

}  // namespace plinth::test::json_reader
