// waivers.yaml (policy::parse_waivers) on any text, then applying what
// loaded to a set of verdicts. Property: nothing throws or crashes.
#include "engine/policy/waivers.h"
#include "tests/fuzz/fuzz.h"

using namespace plinth;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = policy::parse_waivers(fuzz::text(data, size), "waivers.yaml");
  for (const auto& d : file.diagnostics) (void)format_diagnostic(d);
  policy::Evaluation eval;
  eval.policies.push_back({"SOC2-ENC-001", "t", "", "high", "mandatory", {}, "soc2", {}});
  eval.verdicts.push_back({"SOC2-ENC-001", policy::Outcome::Fail, "storage.tier.hot", "m", {}, "", "", {}});
  eval.verdicts.push_back({"SOC2-ENC-001", policy::Outcome::Fail, "baremetal.node.train-a[3]", "m", {}, "", "", {}});
  policy::apply_waivers(file.waivers, "2026-06-01", eval);
  return 0;
}
