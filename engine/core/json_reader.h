#pragma once
// Reading JSON text into Json (nlohmann) with simdjson: the same value
// Json::parse gives, a few times faster. nlohmann's parser spends most of its
// time in its tokenizer, one character at a time; simdjson finds the structure
// of the text with SIMD instructions (chosen for the CPU at run time) and the
// tree is then built from simdjson's tape. Text simdjson refuses (a number
// beyond 64 bits, nesting deeper than 1,024), or whose value it would read
// differently (the integer -0, signed for Json::parse), is handed to
// Json::parse, so values, errors and their messages are Json::parse's own.
#include <memory>
#include <string_view>
#include <vector>

#include "engine/core/wire.h"

namespace plinth {

/// Reads JSON documents one after another, reusing its buffers (simdjson's
/// reserve up to about 14 times the size of the largest text read so far, of
/// which it touches about 4, kept until the reader is destroyed). Not
/// thread-safe: one per thread.
class JsonReader {
 public:
  JsonReader();
  ~JsonReader();
  JsonReader(const JsonReader&) = delete;
  JsonReader& operator=(const JsonReader&) = delete;

  /// Json::parse of the text the pieces make when joined (copied once, into
  /// simdjson's padded buffer): the same value, or the same exception.
  Json parse(std::initializer_list<std::string_view> pieces);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Json::parse(text), read as JsonReader reads it: with a reader kept per
/// thread for texts up to 64 KiB (an API answer: fresh buffers per answer
/// cost more than the parse with glibc's allocator), and a reader of its own,
/// freed on return, for larger ones, so that one large document does not keep
/// its buffers in every thread that read one.
Json parse_json_text(std::string_view text);

/// Where to cut a large document into pieces that parse on their own: the
/// offsets of commas between two elements of the array found at `path` (keys
/// of nested objects from the top, e.g. {"plan", "resource_changes"}), the
/// first at or after `every` bytes of text and each next one at least `every`
/// bytes after the one before (if the array ends sooner, its last comma
/// alone). Empty (read it whole) unless the text is one object, the objects
/// along the path have distinct unescaped keys (so no other value can stand
/// for the one found), and the array has two elements or more.
std::vector<size_t> json_array_splits(std::string_view text, const std::vector<std::string_view>& path, size_t every);

}  // namespace plinth
