// The operations library (engine/run) driven as the CLI drives it, with
// fake providers: plan, apply (a failed operation, a cancelled apply,
// progress), refresh and import, and the events each reports.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>

#include "engine/provider/registry.h"
#include "engine/run/apply.h"
#include "engine/run/plan.h"
#include "tests/engine/apply/fakes.h"
#include "tests/support/run.h"

using namespace plinth;
using plinth::test::FakeProvider;
using plinth::test::TempDir;

namespace {

/// Makes a FakeProvider for every provider the blueprint names, with that
/// provider's real schema (so resource types, force-new attributes and
/// inventory marks are the ones plinth uses); keeps pointers to them.
class FakeFactory : public run::ProviderFactory {
 public:
  Status resolve(const std::string& name, const bp::ProviderDecl*) override {
    if (schema_registry().provider(name)) return {};
    return Error::invalid("unknown provider '" + name + "'");
  }
  const ProviderSchema* schema(const std::string& name) override { return schema_registry().provider(name); }
  std::vector<const ProviderSchema*> schemas() override { return schema_registry().providers(); }
  Result<std::unique_ptr<Provider>> make(const std::string& name) override {
    auto p = std::make_unique<FakeProvider>(name);
    p->mutable_schema() = *schema_registry().provider(name);
    if (setup) setup(*p);
    made[name] = p.get();
    return std::unique_ptr<Provider>(std::move(p));
  }
  std::function<void(FakeProvider&)> setup;  ///< called on every fake made
  std::map<std::string, FakeProvider*> made;  ///< owned by the ProviderSet that asked
};

/// Every event, as text lines ("error: ...", "op finished ADDRESS ok").
class Recorder : public run::Events {
 public:
  void diagnostics(const Diagnostics& ds) override {
    for (const auto& d : ds) add("diagnostic " + d.code + ": " + d.message);
  }
  void error(const std::string& m) override { add("error: " + m); }
  void warning(const std::string& m) override { add("warning: " + m); }
  void note(const std::string& m) override { add("note: " + m); }
  void drift(const std::vector<apply::Drift>& changed, const std::vector<apply::Drift>& gone) override {
    for (const auto& d : changed) add("drift " + d.address);
    for (const auto& d : gone) add("gone " + d.address);
  }
  void policy_checked(const run::PolicyChecked& c) override {
    add("policies " + std::to_string(c.evaluation->policies.size()) + (c.blocked ? " blocked" : " passed"));
  }
  void planned(const plan::Plan& p) override { add("planned " + std::to_string(p.summary().changes())); }
  void operation(const run::Operation& op) override {
    static const char* phases[] = {"started", "retrying", "running", "finished"};
    add(std::string("op ") + phases[static_cast<int>(op.phase)] + " " + op.address +
        (op.phase == run::Operation::Phase::Finished ? (op.ok ? " ok" : " failed") : ""));
  }
  void applied(const run::Applied& a) override {
    report = *a.report;
    add("applied " + std::to_string(a.report->count(apply::OutcomeStatus::Succeeded)) + "/" +
        std::to_string(a.total));
  }
  size_t count(const std::string& prefix) {
    std::lock_guard<std::mutex> l(mu_);
    size_t n = 0;
    for (const auto& line : lines)
      if (line.rfind(prefix, 0) == 0) ++n;
    return n;
  }
  std::string text() {
    std::lock_guard<std::mutex> l(mu_);
    std::string out;
    for (const auto& line : lines) out += line + "\n";
    return out;
  }
  std::vector<std::string> lines;
  apply::Report report;

 private:
  void add(std::string line) {
    std::lock_guard<std::mutex> l(mu_);
    lines.push_back(std::move(line));
  }
  std::mutex mu_;
};

std::string blueprint(int nodes, const std::string& driver = "550.54.15") {
  std::string endpoints;
  for (int i = 0; i < nodes; ++i) endpoints += (i ? ", " : "") + std::string("\"https://10.0.0.") + std::to_string(10 + i) + "\"";
  return "apiVersion: plinth/v1\n"
         "kind: Blueprint\n"
         "metadata: {name: run-test, owner: ml-platform}\n"
         "stacks:\n"
         "  train:\n"
         "    driver: \"" + driver + "\"\n"
         "    cuda: \"12.4\"\n"
         "    cudnn: \"9.1.0\"\n"
         "    frameworks: {pytorch: \"2.3.1\"}\n"
         "    images: [\"nvcr.io/nvidia/pytorch@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58\"]\n"
         "networks:\n"
         "  vlans: [{name: ml-fabric, id: 100, cidr: 10.100.0.0/16, vrf: ml, purpose: training, mtu: 9000}]\n"
         "storage:\n"
         "  tiers:\n"
         "    - {name: hot, kind: nvme, capacity_tb: 100, classification: internal, encryption: {at_rest: aes-256-xts}}\n"
         "node_pools:\n"
         "  - name: train-a\n"
         "    provider: baremetal\n"
         "    count: " + std::to_string(nodes) + "\n"
         "    role: training\n"
         "    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 2048}\n"
         "    stack: train\n"
         "    boot: {method: pxe, image: \"http://pxe.example/ubuntu-24.04/\"}\n"
         "    networks: [ml-fabric]\n"
         "    storage: [hot]\n"
         "    bmc:\n"
         "      endpoints: [" + endpoints + "]\n"
         "      credentials: env:BMC_CREDENTIALS\n"
         "    mig: {profile: none}\n";
}

/// One blueprint directory and its state file.
struct Fixture {
  TempDir dir;
  std::string bp;
  run::PlanOptions options;
  explicit Fixture(int nodes) {
    bp = dir.write("bp.yaml", blueprint(nodes));
    options.paths = {bp};
    options.state.location = dir.path() + "/state.json";
  }
  run::ApplyOptions apply_options() const {
    run::ApplyOptions a;
    a.state = options.state;
    a.policies.blueprint_dir = dir.path();
    return a;
  }
};

/// plan + apply, the way `plinth apply --auto-approve` runs them.
bool plan_and_apply(Fixture& f, FakeFactory& factory, Recorder& events, run::ApplyOptions a) {
  run::ProviderSet providers(factory, {});
  auto planned = run::plan(f.options, providers, events);
  REQUIRE(planned);
  return run::apply(a, *planned, providers, events);
}

size_t resources_in_state(const Fixture& f) {
  run::StateOptions so = f.options.state;
  so.lock = false;
  auto s = run::open_state(so, {}, "test");
  REQUIRE(s);
  return s->doc.resources.size();
}

}  // namespace

TEST_CASE("run::plan: a blueprint against no state plans a create for every resource, and nothing is written",
          "[run]") {
  Fixture f(3);
  FakeFactory factory;
  Recorder events;
  run::ProviderSet providers(factory, {});
  auto planned = run::plan(f.options, providers, events);
  INFO(events.text());
  REQUIRE(planned);
  CHECK_FALSE(planned->state.existed);
  const plan::Summary s = planned->plan.summary();
  CHECK(s.create >= 3);
  CHECK(s.update + s.replace + s.remove == 0);
  CHECK(events.count("error") == 0);
  CHECK(planned->inventory.size() == 3);  // bare-metal nodes are checked against their pool after the gate
}

TEST_CASE("run::plan: an invalid blueprint is reported as diagnostics and no plan", "[run]") {
  Fixture f(1);
  f.dir.write("bp.yaml", blueprint(1, "999.0.0"));
  FakeFactory factory;
  Recorder events;
  run::ProviderSet providers(factory, {});
  bool invalid_called = false;
  auto planned = run::plan(f.options, providers, events, [&](const run::Checked&) { invalid_called = true; });
  CHECK_FALSE(planned);
  CHECK(invalid_called);
  CHECK(events.count("diagnostic") > 0);
  CHECK(factory.made.empty());  // no provider was started for an invalid blueprint
}

TEST_CASE("run::apply: every change goes through its provider and is recorded, events bracket each operation",
          "[run]") {
  Fixture f(3);
  FakeFactory factory;
  Recorder events;
  REQUIRE(plan_and_apply(f, factory, events, f.apply_options()));
  INFO(events.text());
  const size_t ops = events.report.outcomes.size();
  CHECK(ops >= 3);
  CHECK(events.count("op started") == ops);
  CHECK(events.count("op finished") == ops);
  CHECK(events.count("applied " + std::to_string(ops) + "/" + std::to_string(ops)) == 1);
  CHECK(events.count("policies") == 1);
  CHECK(resources_in_state(f) == ops);

  // A second plan against the recorded state has nothing to do.
  Recorder again;
  run::ProviderSet providers(factory, {});
  auto replanned = run::plan(f.options, providers, again);
  REQUIRE(replanned);
  CHECK_FALSE(replanned->plan.has_changes());
}

TEST_CASE("run::plan with share_state: the plan's befores are the state's resources, not copies of them",
          "[run]") {
  Fixture f(3);
  FakeFactory factory;
  Recorder events;
  REQUIRE(plan_and_apply(f, factory, events, f.apply_options()));

  run::ProviderSet copying_providers(factory, {});
  Recorder copying_events;
  auto copying = run::plan(f.options, copying_providers, copying_events);
  REQUIRE(copying);
  CHECK_FALSE(copying->prior);
  const std::vector<Resource> recorded = copying->state.doc.resources;
  REQUIRE(recorded.size() >= 3);
  CHECK(copying->state_resources() == recorded);
  copying.reset();  // its state lock

  run::PlanOptions options = f.options;
  options.share_state = true;
  run::ProviderSet providers(factory, {});
  Recorder again;
  auto shared = run::plan(options, providers, again);
  REQUIRE(shared);
  REQUIRE(shared->prior);
  CHECK(shared->state.doc.resources.empty());  // moved, not copied
  CHECK(*shared->prior == recorded);
  CHECK(shared->state_resources() == recorded);
  CHECK(shared->state_document().resources == recorded);
  CHECK_FALSE(shared->plan.has_changes());
  size_t pointing_in = 0;
  for (const auto& c : shared->plan.changes) {
    REQUIRE(c.before);
    const Resource* b = &*c.before;
    pointing_in += b >= shared->prior->data() && b < shared->prior->data() + shared->prior->size();
  }
  CHECK(pointing_in == recorded.size());
}

TEST_CASE("run::apply: a failed operation fails the apply, the others are recorded", "[run]") {
  Fixture f(3);
  FakeFactory factory;
  factory.setup = [](FakeProvider& p) {
    // The inventory check reads it, then its create fails.
    p.on_call = [&p](const std::string& address) {
      if (address == "baremetal.node.train-a[1]") p.fail(address, {Error::fatal("BMC said no")});
    };
  };
  Recorder events;
  CHECK_FALSE(plan_and_apply(f, factory, events, f.apply_options()));
  INFO(events.text());
  CHECK(events.count("op finished baremetal.node.train-a[1] failed") == 1);
  CHECK(events.report.count(apply::OutcomeStatus::Failed) == 1);
  CHECK(resources_in_state(f) == events.report.count(apply::OutcomeStatus::Succeeded));
}

TEST_CASE("run::check_inventory: a server that cannot be read stops the plan, naming it and the cause", "[run]") {
  Fixture f(3);
  FakeFactory factory;
  factory.setup = [](FakeProvider& p) { p.fail("baremetal.node.train-a[1]", {Error::fatal("HTTP 401 Unauthorized")}); };
  Recorder events;
  run::ProviderSet providers(factory, {});
  auto planned = run::plan(f.options, providers, events);
  REQUIRE(planned);
  CHECK_FALSE(run::check_inventory(planned->inventory, providers, events, "plan"));
  INFO(events.text());
  CHECK(events.count("error: cannot read 1 server(s) the plan creates or keeps: baremetal.node.train-a[1]: HTTP 401 "
                     "Unauthorized. Nothing was saved: fix the access (credentials, network, CA bundle), or plan with "
                     "--refresh=false") == 1);
}

TEST_CASE("run::apply: a cancel stops it, state holds exactly what completed", "[run]") {
  Fixture f(6);
  FakeFactory factory;
  std::atomic<int> cancel{0};
  std::atomic<int> calls{0};
  factory.setup = [&](FakeProvider& p) {
    p.set_latency(std::chrono::milliseconds(20));
    p.on_call = [&](const std::string&) {
      if (++calls == 2) cancel.store(static_cast<int>(apply::Cancel::Stop));
    };
  };
  Recorder events;
  run::ApplyOptions a = f.apply_options();
  a.parallelism = 1;
  a.cancel = &cancel;
  CHECK_FALSE(plan_and_apply(f, factory, events, a));
  INFO(events.text());
  CHECK(events.report.cancelled);
  CHECK(events.report.count(apply::OutcomeStatus::NotStarted) > 0);
  CHECK(events.count("note: plinth apply: interrupted: starting no new operations") == 1);
  CHECK(resources_in_state(f) == events.report.count(apply::OutcomeStatus::Succeeded));
}

TEST_CASE("run::apply: a cancel raised before the question changes nothing", "[run]") {
  Fixture f(2);
  FakeFactory factory;
  std::atomic<int> cancel{1};
  Recorder events;
  run::ApplyOptions a = f.apply_options();
  a.cancel = &cancel;
  bool asked = false;
  a.confirm = [&] { return asked = true; };
  CHECK_FALSE(plan_and_apply(f, factory, events, a));
  CHECK_FALSE(asked);
  CHECK(events.count("error: interrupted before any change") == 1);
  CHECK(events.count("op started") == 0);
}

TEST_CASE("run::apply: a 'no' changes nothing", "[run]") {
  Fixture f(2);
  FakeFactory factory;
  Recorder events;
  run::ApplyOptions a = f.apply_options();
  a.confirm = [] { return false; };
  CHECK_FALSE(plan_and_apply(f, factory, events, a));
  CHECK(events.count("error: cancelled; nothing was changed") == 1);
  CHECK(events.count("op started") == 0);
}

TEST_CASE("run::apply: an operation in flight longer than the interval is reported as still running", "[run]") {
  Fixture f(1);
  FakeFactory factory;
  factory.setup = [](FakeProvider& p) { p.set_latency(std::chrono::milliseconds(300)); };
  Recorder events;
  run::ApplyOptions a = f.apply_options();
  a.progress_interval = std::chrono::milliseconds(50);
  REQUIRE(plan_and_apply(f, factory, events, a));
  INFO(events.text());
  CHECK(events.count("op running baremetal.node.train-a[0]") >= 2);
}

TEST_CASE("run::refresh: drift is reported and recorded as a new serial, nothing is changed", "[run]") {
  Fixture f(2);
  FakeFactory factory;
  Recorder events;
  REQUIRE(plan_and_apply(f, factory, events, f.apply_options()));

  factory.setup = [](FakeProvider& p) { p.set_observed("baremetal.node.train-a[1]", "power", "Off"); };
  Recorder seen;
  run::ProviderSet providers(factory, {});
  auto r = run::refresh(f.options, providers, seen);
  INFO(seen.text());
  REQUIRE(r);
  CHECK(r->existed);
  CHECK(r->drifted == 1);
  CHECK(r->serial > 0);
  CHECK(seen.count("drift baremetal.node.train-a[1]") == 1);
  CHECK(factory.made.at("baremetal")->calls().empty());  // read only
}

TEST_CASE("run::refresh: a resource that cannot be read is an error and the state stays as it was", "[run]") {
  Fixture f(2);
  FakeFactory factory;
  Recorder events;
  REQUIRE(plan_and_apply(f, factory, events, f.apply_options()));
  factory.setup = [](FakeProvider& p) { p.fail("baremetal.node.train-a[0]", {Error::fatal("401 Unauthorized")}); };
  Recorder seen;
  run::ProviderSet providers(factory, {});
  CHECK_FALSE(run::refresh(f.options, providers, seen));
  CHECK(seen.count("error: refresh baremetal.node.train-a[0]: 401 Unauthorized") == 1);
  CHECK(seen.count("error: refresh failed for 1 resource(s)") == 1);
}

TEST_CASE("run::refresh: a provider whose search for unrecorded objects fails is named as a provider, not counted as a "
          "resource",
          "[run]") {
  Fixture f(2);
  FakeFactory factory;
  Recorder events;
  REQUIRE(plan_and_apply(f, factory, events, f.apply_options()));
  factory.setup = [](FakeProvider& p) {
    if (p.schema().name == "baremetal") p.discover_error = Error::fatal("401 invalid_client");
  };
  Recorder seen;
  run::ProviderSet providers(factory, {});
  CHECK_FALSE(run::refresh(f.options, providers, seen));
  INFO(seen.text());
  CHECK(seen.count("error: refresh provider baremetal: 401 invalid_client") == 1);
  CHECK(seen.count("error: refresh failed for provider baremetal;") == 1);
  CHECK(seen.text().find("resource(s)") == std::string::npos);
}

TEST_CASE("run::import_resource: a declared node is read by its identity and recorded", "[run]") {
  Fixture f(2);
  FakeFactory factory;
  Recorder events;
  run::ProviderSet providers(factory, {});
  auto imported =
      run::import_resource({"baremetal.node.train-a[1]", "https://10.0.0.11"}, f.options, providers, events);
  INFO(events.text());
  REQUIRE(imported);
  CHECK(imported->import_id == "bmc_endpoint");
  CHECK(imported->serial == 1);
  CHECK(resources_in_state(f) == 1);

  Recorder again;
  run::ProviderSet more(factory, {});
  CHECK_FALSE(run::import_resource({"baremetal.node.train-a[1]", "https://10.0.0.11"}, f.options, more, again));
  CHECK(again.count("error: baremetal.node.train-a[1] is already in state") == 1);
  CHECK_FALSE(run::import_resource({"baremetal.node.train-b[0]", "https://10.0.0.11"}, f.options, more, again));
  CHECK(again.count("error: the blueprint declares no 'baremetal.node.train-b[0]'") == 1);
}

TEST_CASE("plan::diff: objects left deposed by a create-before-destroy replace are planned for deletion", "[run]") {
  Resource old;
  old.address = "aws.instance.burst[0]";
  old.type = "aws.instance";
  old.provider = "aws";
  plan::Plan p = plan::diff({}, {}, {old});
  REQUIRE(p.changes.size() == 1);
  CHECK(p.changes[0].address == "aws.instance.burst[0] (deposed)");
  CHECK(p.changes[0].action == plan::Action::Delete);
  CHECK(p.changes[0].deposed);
  CHECK(p.changes[0].before->address == "aws.instance.burst[0]");
}
