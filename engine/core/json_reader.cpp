// JsonReader: simdjson's DOM parser, its tape turned into a Json tree.
#include "engine/core/json_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

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

std::vector<size_t> json_array_splits(std::string_view text, const std::vector<std::string_view>& path,
                                      size_t every) {
  if (path.empty()) return {};
  // One frame per open object or array. Keys are read only in the objects on
  // the path; `level` is a frame's depth (the top-level object is 0).
  struct Frame {
    bool object = false, on_path = false, expect_key = false;
    std::string_view last_key;
    std::vector<std::string_view> keys;
  };
  std::vector<Frame> frames;
  std::vector<size_t> splits;
  std::optional<size_t> last_comma;
  const size_t step = std::max<size_t>(every, 1);
  size_t next = step;
  for (size_t i = 0; i < text.size(); ++i) {
    switch (const char c = text[i]) {
      case '"': {
        const size_t end = json_string_end(text, i);
        if (end == std::string_view::npos) return {};
        if (!frames.empty() && frames.back().expect_key) {
          Frame& f = frames.back();
          const std::string_view key = text.substr(i + 1, end - i - 1);
          // An escaped key could repeat another one.
          if (key.find('\\') != std::string_view::npos || std::find(f.keys.begin(), f.keys.end(), key) != f.keys.end())
            return {};
          f.keys.push_back(key);
          f.last_key = key;
          f.expect_key = false;
        }
        i = end;
        break;
      }
      case '{':
      case '[': {
        const bool object = c == '{';
        if (frames.empty() && !object) return {};
        Frame f;
        f.object = object;
        if (frames.empty()) {
          f.on_path = true;
        } else if (const Frame& parent = frames.back(); parent.on_path && parent.object) {
          const size_t level = frames.size();  // of the new frame
          f.on_path = level <= path.size() && parent.last_key == path[level - 1] && object == (level < path.size());
        }
        f.expect_key = object && f.on_path;
        frames.push_back(std::move(f));
        break;
      }
      case '}':
      case ']':
        if (frames.empty()) return {};
        frames.pop_back();
        break;
      case ',':
        if (frames.empty()) break;
        if (frames.back().object) {
          frames.back().expect_key = frames.back().on_path;
        } else if (frames.back().on_path) {  // the array at `path`
          last_comma = i;
          if (i >= next) {
            splits.push_back(i);
            next = i + step;
          }
        }
        break;
      default:
        break;
    }
  }
  if (splits.empty() && last_comma) splits.push_back(*last_comma);
  return splits;
}

}  // namespace plinth
