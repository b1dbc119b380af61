// The plan file parser (plan::parse_planfile) on any text, unsigned and with
// an HMAC verification key. Properties: nothing throws or crashes, and a plan
// file that parses is written back (to_text) as text that parses to the same
// plan file.
#include "engine/plan/format.h"
#include "engine/plan/planfile.h"
#include "tests/fuzz/fuzz.h"

using namespace plinth;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const plan::PlanKey key = [] {
    auto k = plan::PlanKey::parse("fuzz-hmac-secret-0123456789abcdef0123456789abcdef", "fuzz key");
    if (!k) fuzz::violated("the HMAC key does not parse: " + k.error().message);
    return std::move(*k);
  }();
  const std::string text = fuzz::text(data, size);
  (void)plan::parse_planfile(text, "fuzz.plan", &key);
  auto pf = plan::parse_planfile(text, "fuzz.plan");
  if (!pf) return 0;
  (void)plan::to_text(pf->plan);
  (void)plan::starting_state(*pf, std::nullopt);
  auto again = plan::to_text(*pf);
  if (!again) return 0;  // e.g. a signature that cannot be re-made without the key
  auto back = plan::parse_planfile(*again, "fuzz.plan (written back)");
  if (!back) fuzz::violated("a parsed plan file does not parse after to_text: " + back.error().message);
  if (!(back->plan == pf->plan) || !(back->bindings == pf->bindings))
    fuzz::violated("a parsed plan file changed in a to_text round trip");
  return 0;
}
