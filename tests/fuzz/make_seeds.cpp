// fuzz_seeds OUT_DIR: seed inputs for the fuzzers whose formats no checked-in
// file has, made from the example blueprints (blueprints/examples): for each
// one a state document of its resources (OUT_DIR/fuzz_state/) and plan files
// creating, updating and deleting them, unsigned and HMAC-signed
// (OUT_DIR/fuzz_planfile/), and a waivers.yaml naming them
// (OUT_DIR/fuzz_waivers/). Run by .ci/fuzz from the repository root.
#include <filesystem>

#include "engine/blueprint/loader.h"
#include "engine/core/files.h"
#include "engine/graph/expand.h"
#include "engine/plan/planfile.h"
#include "engine/state/state.h"

#include "providers/registry/registry.h"

using namespace plinth;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds OUT_DIR\n");
    return 2;
  }
  register_builtin_providers();  // blueprints name providers, as in the plinth binary
  const fs::path out = argv[1];
  for (const char* dir : {"fuzz_state", "fuzz_planfile", "fuzz_waivers"}) fs::create_directories(out / dir);
  auto key = plan::PlanKey::parse("fuzz-hmac-secret-0123456789abcdef0123456789abcdef", "fuzz key");
  if (!key) return 1;
  int written = 0;
  auto write = [&](const fs::path& p, const std::string& text) {
    if (auto st = write_file_atomic(p.string(), text); !st) {
      std::fprintf(stderr, "%s\n", st.error().message.c_str());
      std::exit(1);
    }
    ++written;
  };
  for (const auto& entry : fs::directory_iterator("blueprints/examples")) {
    Diagnostics diags;
    auto files = bp::collect_blueprint_files({entry.path().string()}, diags);
    auto loaded = bp::load_files(files);
    if (!loaded.ok()) continue;
    auto graph = graph::expand(loaded.blueprint);
    if (!graph) continue;
    const std::string name = entry.path().stem().string();
    state::StateDocument doc = state::new_document();
    doc.serial = 7;
    doc.resources = graph->resources;
    for (auto& r : doc.resources) r.computed = {{"power_state", "On"}, {"system_uri", "/redfish/v1/Systems/1"}};
    write(out / "fuzz_state" / (name + ".json"), state::to_json_text(doc));

    // Plans: everything to create; then some changed, some gone, some new.
    std::vector<Resource> changed = graph->resources;
    if (!changed.empty()) changed.erase(changed.begin());
    for (size_t i = 0; i < changed.size(); i += 3) changed[i].attributes["changed"] = static_cast<int>(i);
    auto bindings = plan::make_bindings(files, {}, doc, "0123456789abcdef0123456789abcdef01234567", false);
    if (!bindings) continue;
    int n = 0;
    for (const auto& p : {plan::diff(graph->resources, {}), plan::diff(changed, doc.resources)}) {
      auto pf = plan::make_planfile(p, *bindings);
      for (const plan::PlanKey* k : {static_cast<const plan::PlanKey*>(nullptr), static_cast<const plan::PlanKey*>(&*key)}) {
        auto text = plan::to_text(pf, k);
        if (text) write(out / "fuzz_planfile" / (name + "-" + std::to_string(n++) + ".plan"), *text);
      }
    }
    std::string waivers = "waivers:\n";
    for (size_t i = 0; i < graph->resources.size() && i < 4; ++i)
      waivers += "  - policy: SOC2-ENC-001\n    resource: \"" + graph->resources[i].address +
                 "*\"\n    justification: seed\n    approver: fuzz@example.com\n    expires: 2027-03-31\n";
    write(out / "fuzz_waivers" / (name + ".yaml"), waivers);
  }
  std::printf("wrote %d seed files under %s\n", written, out.c_str());
  return written > 0 ? 0 : 1;
}
