// safe_text and to_valid_utf8 (engine/core/strings.h), the boundary every
// hostile string crosses on its way to a terminal or a report. Properties:
// the output is valid UTF-8 without raw control characters, ESC, C1 or bidi
// overrides; safe_text is idempotent and keeps valid, harmless text as it is;
// JSON can always write the result.
#include <nlohmann/json.hpp>

#include "engine/core/strings.h"
#include "tests/fuzz/fuzz.h"

using namespace plinth;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = fuzz::text(data, size);
  const std::string valid = to_valid_utf8(in);
  if (!valid_utf8(valid)) fuzz::violated("to_valid_utf8 returned malformed UTF-8");
  if (valid_utf8(in) && valid != in) fuzz::violated("to_valid_utf8 changed valid text");
  const std::string safe = safe_text(in);
  if (!valid_utf8(safe)) fuzz::violated("safe_text returned malformed UTF-8");
  if (safe_text(safe) != safe) fuzz::violated("safe_text is not idempotent");
  for (size_t i = 0; i < safe.size(); ++i) {
    const auto c = static_cast<unsigned char>(safe[i]);
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F) fuzz::violated("a raw control character survived");
    if (c == 0xC2 && i + 1 < safe.size() && static_cast<unsigned char>(safe[i + 1]) <= 0x9F)
      fuzz::violated("a C1 control survived");
    if (c == 0xE2 && i + 2 < safe.size() && static_cast<unsigned char>(safe[i + 1]) == 0x80 &&
        static_cast<unsigned char>(safe[i + 2]) >= 0xAA && static_cast<unsigned char>(safe[i + 2]) <= 0xAE)
      fuzz::violated("a bidi override survived");
  }
  (void)nlohmann::json(safe).dump();  // throws (and aborts the run) on malformed UTF-8
  return 0;
}
