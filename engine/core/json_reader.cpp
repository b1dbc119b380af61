// JsonReader: simdjson's DOM parser, its tape turned into a Json tree.
#include "engine/core/json_reader.h"

#include <simdjson.h>

#include <string>

namespace plinth {

namespace {

/// Whether `text` may hold the integer -0 (a '-0' after a character that can
/// come before a value and before one that can follow it): simdjson reads it
/// as an int64 0, which reads back as unsigned, Json::parse as a signed 0. The
/// same characters inside a string only send the text to Json::parse.
bool may_hold_minus_zero(std::string_view text) {
  auto before = [](char c) { return c == ':' || c == ',' || c == '[' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  auto after = [](char c) { return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (size_t i = text.find("-0"); i != std::string_view::npos; i = text.find("-0", i + 1))
    if ((i == 0 || before(text[i - 1])) && (i + 2 == text.size() || after(text[i + 2]))) return true;
  return false;
}

void convert(simdjson::dom::element e, Json& out) {
  using Type = simdjson::dom::element_type;
  switch (e.type()) {
    case Type::ARRAY: {
      const simdjson::dom::array array = e.get_array().value_unsafe();
      out = Json::array();
      auto& a = out.get_ref<Json::array_t&>();
      a.reserve(array.size());
      for (simdjson::dom::element v : array) convert(v, a.emplace_back());
      return;
    }
    case Type::OBJECT: {
      const simdjson::dom::object object = e.get_object().value_unsafe();
      out = Json::object();
      auto& o = out.get_ref<Json::object_t&>();
      // operator[]: a repeated key keeps its last value, as Json::parse does.
      for (const simdjson::dom::key_value_pair field : object) convert(field.value, o[std::string(field.key)]);
      return;
    }
    case Type::INT64: {
      // Json::parse reads an integer without a sign as unsigned.
      const int64_t v = e.get_int64().value_unsafe();
      if (v >= 0)
        out = static_cast<Json::number_unsigned_t>(v);
      else
        out = static_cast<Json::number_integer_t>(v);
      return;
    }
    case Type::UINT64: out = static_cast<Json::number_unsigned_t>(e.get_uint64().value_unsafe()); return;
    case Type::DOUBLE: out = e.get_double().value_unsafe(); return;
    case Type::STRING: out = std::string(e.get_string().value_unsafe()); return;
    case Type::BOOL: out = e.get_bool().value_unsafe(); return;
    case Type::NULL_VALUE: out = nullptr; return;
  }
}

}  // namespace

struct JsonReader::Impl {
  simdjson::dom::parser parser;
  std::string text;  ///< the joined pieces, with simdjson's padding in its capacity
};

JsonReader::JsonReader() : impl_(std::make_unique<Impl>()) {}
JsonReader::~JsonReader() = default;

Json JsonReader::parse(std::initializer_list<std::string_view> pieces) {
  std::string& text = impl_->text;
  size_t size = 0;
  for (std::string_view p : pieces) size += p.size();
  text.clear();
  text.reserve(size + simdjson::SIMDJSON_PADDING);
  for (std::string_view p : pieces) text.append(p);
  simdjson::dom::element root;
  if (!may_hold_minus_zero(text) &&
      impl_->parser.parse(text.data(), text.size(), false).get(root) == simdjson::SUCCESS) {
    Json out;
    convert(root, out);
    return out;
  }
  return Json::parse(text);
}

Json parse_json_text(std::string_view text) {
  static constexpr size_t kKeptUpTo = 64 << 10;
  if (text.size() > kKeptUpTo) return JsonReader().parse({text});
  thread_local JsonReader reader;
  return reader.parse({text});
}

}  // namespace plinth
