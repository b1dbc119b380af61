// The state document parser (state::parse) on any text. Properties: nothing
// throws or crashes, and a document that parses is written back
// (to_json_text) as text that parses to the same document.
#include "engine/state/state.h"
#include "tests/fuzz/fuzz.h"

using namespace plinth;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto doc = state::parse(fuzz::text(data, size), "fuzz.state.json");
  if (!doc) return 0;
  std::string again = state::to_json_text(*doc);
  auto back = state::parse(again, "fuzz.state.json (written back)");
  if (!back) fuzz::violated("a parsed state does not parse after to_json_text: " + back.error().message);
  if (!(*back == *doc)) fuzz::violated("a parsed state changed in a to_json_text round trip");
  return 0;
}
