// The plan file parser (plan::parse_planfile) on any text, unsigned and with
// an HMAC verification key. Properties: nothing throws or crashes, a plan
// file that parses is written back (to_text) as text that parses to the same
// plan file, and the JSON reader the parser uses (engine/core/json_reader.h)
// reads the text as Json::parse does: the same value, number types included,
// or the same error; and the reading in pieces of large files gives what
// the whole gives.
#include "engine/core/json_reader.h"
#include "engine/plan/format.h"
#include "engine/plan/planfile.h"
#include "tests/fuzz/fuzz.h"

using namespace plinth;

namespace {

/// Equal values of equal types (Json's operator== takes 1u and 1 as equal).
bool identical(const Json& a, const Json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i)
      if (!identical(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
      if (i.key() != j.key() || !identical(*i, *j)) return false;
    return true;
  }
  return a == b && a.dump() == b.dump();  // dump: -0.0 and 0.0 compare equal
}

/// What a parse of `text` gives: its value, or the message of what it threw.
template <typename Parse>
std::pair<Json, std::string> reading(Parse parse) {
  try {
    return {parse(), ""};
  } catch (const Json::exception& e) {
    return {Json(), e.what()};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const plan::PlanKey key = [] {
    auto k = plan::PlanKey::parse("fuzz-hmac-secret-0123456789abcdef0123456789abcdef", "fuzz key");
    if (!k) fuzz::violated("the HMAC key does not parse: " + k.error().message);
    return std::move(*k);
  }();
  const std::string text = fuzz::text(data, size);
  if (json_shape_problem(text) == std::nullopt) {  // deeper nesting could overflow the stack of either parser
    auto [value, error] = reading([&] { return parse_json_text(text); });
    auto [expected, expected_error] = reading([&] { return Json::parse(text); });
    if (error != expected_error) fuzz::violated("JsonReader's error differs from Json::parse's: " + error);
    if (!identical(value, expected)) fuzz::violated("JsonReader's value differs from Json::parse's");
  }
  // A large file is read in pieces; here in pieces of a few bytes. Whatever
  // they read, the whole reads the same (the text is read whole below 256 KiB).
  for (const plan::PlanKey* k : {static_cast<const plan::PlanKey*>(nullptr), &key})
    if (auto pieces = plan::detail::read_in_pieces(text, k, 8)) {
      auto whole = plan::parse_planfile(text, "fuzz.plan", k);
      if (!whole) fuzz::violated("the pieces read a plan file the whole refuses: " + whole.error().message);
      if (!(*pieces == *whole)) fuzz::violated("the pieces read another plan file than the whole");
    }
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
