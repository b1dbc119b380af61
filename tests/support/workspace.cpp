#include "tests/support/workspace.h"

#include <catch2/catch.hpp>

#include "engine/blueprint/loader.h"
#include "engine/graph/expand.h"
#include "tests/support/emulator_process.h"

namespace plinth::test {

Workspace::Workspace(const EmulatorProcess* emulator, std::string parallelism, std::map<std::string, std::string> env)
    : env(std::move(env)), emulator_(emulator), parallelism_(std::move(parallelism)) {}

RunResult Workspace::run(std::vector<std::string> args, const std::string& blueprint) {
  dir.write("bp.yaml", blueprint);
  args.insert(args.begin() + 1, dir.path() + "/bp.yaml");
  args.insert(args.end(), {"--state", state()});
  return run_plinth(args, dir.path(), env);
}

RunResult Workspace::apply(const std::string& blueprint) {
  return run({"apply", "--auto-approve", "--parallelism", parallelism_}, blueprint);
}

RunResult Workspace::applied(const std::string& blueprint) {
  RunResult r = apply(blueprint);
  INFO(r.out << r.err << (emulator_ ? emulator_->stderr_text() : ""));
  REQUIRE(r.exit_code == 0);
  return r;
}

RunResult Workspace::plan(const std::string& blueprint) { return run({"plan", "--detailed-exitcode"}, blueprint); }

std::string Workspace::state() const { return dir.path() + "/plinth.state.json"; }

state::StateDocument Workspace::doc() const {
  auto d = state::parse(slurp(state()), state());
  REQUIRE(d.ok());
  return *d;
}

size_t Workspace::in_state(const std::string& type) const {
  size_t n = 0;
  for (const auto& r : doc().resources) n += r.type == type ? 1 : 0;
  return n;
}

Resource Workspace::recorded(const std::string& address) const {
  auto d = doc();
  const Resource* r = d.find(address);
  REQUIRE(r != nullptr);
  return *r;
}

Resource make_resource(const std::string& type, const std::string& name, int index, const std::string& provider,
                       Json attributes) {
  Resource r;
  r.type = type;
  r.name = name;
  r.index = index;
  r.address = make_address(type, name, index);
  r.provider = provider;
  r.attributes = std::move(attributes);
  return r;
}

state::StateDocument expanded_state(const std::vector<std::string>& paths) {
  auto loaded = bp::load_files(paths);
  REQUIRE(loaded.ok());
  auto g = graph::expand(loaded.blueprint);
  REQUIRE(g.ok());
  auto doc = state::new_document();
  doc.resources = g->resources;
  return doc;
}

std::string write_state_of(const TempDir& dir, const std::string& blueprint_path, uint64_t serial,
                           const std::string& lineage) {
  auto doc = expanded_state({blueprint_path});
  if (!lineage.empty()) doc.lineage = lineage;
  doc.serial = serial;
  return dir.write("plinth.state.json", state::to_json_text(doc));
}

}  // namespace plinth::test
