// The blueprint loader (bp::load_string) on any text (and the domain rules
// over what loaded beside its errors, as validate runs them), then everything plan
// does with a blueprint that loads: the domain rules, expansion, the diff
// against an empty state, the plan as text and JSON, the Graphviz graph,
// the blueprint's JSON view (what policies see) and cloud-init for every pool.
// Property: nothing throws or crashes; a blueprint that loads and passes the
// rules always expands, renders and prints.
#include "engine/blueprint/json.h"
#include "engine/blueprint/loader.h"
#include "engine/catalog/catalog.h"
#include "engine/graph/expand.h"
#include "engine/plan/format.h"
#include "engine/plan/plan.h"
#include "engine/render/render.h"
#include "engine/validate/validate.h"
#include "providers/registry/registry.h"
#include "tests/fuzz/fuzz.h"

using namespace plinth;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The built-in providers' schemas, as the plinth binary has them: without
  // them every blueprint naming a provider fails to load and the rest of
  // this target is never reached.
  static const bool providers = [] {
    register_builtin_providers();
    return true;
  }();
  (void)providers;
  static const catalog::Catalog cat = [] {
    auto c = catalog::Catalog::load_embedded();
    if (!c) fuzz::violated("the embedded catalog does not load: " + c.error().message);
    return std::move(*c);
  }();
  auto loaded = bp::load_string(fuzz::text(data, size), "fuzz.yaml");
  for (const auto& d : loaded.diagnostics) (void)format_diagnostic(d);
  if (!loaded.ok()) {
    // validate reports the rules over what loaded beside the loader's errors.
    for (const auto& d : validate::validate_beside_load_errors(loaded.blueprint, cat, loaded.diagnostics))
      (void)format_diagnostic(d);
    return 0;
  }
  auto rules = validate::validate(loaded.blueprint, cat);
  for (const auto& d : rules) (void)format_diagnostic(d);
  if (has_errors(rules)) return 0;
  auto graph = graph::expand(loaded.blueprint);
  if (!graph) return 0;
  (void)graph::to_dot(*graph);
  (void)graph::to_dot(*graph, true);
  plan::Plan p = plan::diff(graph->resources, {});
  (void)plan::to_text(p);
  (void)plan::to_json_text(p);
  (void)bp::to_json(loaded.blueprint).dump();
  for (const auto& pool : loaded.blueprint.node_pools) (void)render::render_pool(loaded.blueprint, pool.name);
  return 0;
}
