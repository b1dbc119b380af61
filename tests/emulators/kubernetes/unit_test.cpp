// Pure parts of the Kubernetes emulator: selectors, field ownership and
// server-side apply, printing. The kubectl tests drive the whole server.
#include <catch2/catch.hpp>

#include "tests/emulators/kubernetes/managed_fields.h"
#include "tests/emulators/kubernetes/resources.h"
#include "tests/emulators/kubernetes/selector.h"

using namespace plinth::kube_emulator;

namespace {
bool selects(const std::string& selector, const std::map<std::string, std::string>& labels) {
  LabelSelector s;
  REQUIRE(parse_label_selector(selector, s) == "");
  return s.matches(labels);
}
const Tracking kSpecOnly{true};
}  // namespace

TEST_CASE("label selectors: =, ==, !=, in, notin, exists, !exists, gt/lt as Kubernetes reads them") {
  std::map<std::string, std::string> gpu = {{"pool", "h100"}, {"nvidia.com/gpu.count", "8"}};
  std::map<std::string, std::string> cpu = {{"pool", "cpu"}};
  CHECK(selects("", gpu));
  CHECK(selects("pool=h100", gpu));
  CHECK(selects("pool==h100", gpu));
  CHECK_FALSE(selects("pool=h100", cpu));
  CHECK(selects("pool!=h100", cpu));
  CHECK(selects("zone!=a", cpu));  // a missing key satisfies !=
  CHECK(selects("pool in (a100, h100)", gpu));
  CHECK_FALSE(selects("pool notin (a100,h100)", gpu));
  CHECK(selects("zone notin (a)", gpu));
  CHECK(selects("nvidia.com/gpu.count", gpu));
  CHECK(selects("!nvidia.com/gpu.count", cpu));
  CHECK(selects("nvidia.com/gpu.count>4,pool=h100", gpu));
  CHECK_FALSE(selects("nvidia.com/gpu.count<4", gpu));

  LabelSelector s;
  CHECK(parse_label_selector("pool in h100", s) == "unable to parse requirement: found 'h100', expected: '('");
  CHECK(parse_label_selector("pool=h100,", s) == "unable to parse requirement: found '', expected: '!' or identifier");
  CHECK(parse_label_selector("count>x", s) ==
        "unable to parse requirement: for 'gt', 'lt' operators, the value must be an integer");
  CHECK(parse_label_selector("-bad=1", s).find("key: Invalid value: \"-bad\"") != std::string::npos);
}

TEST_CASE("field selectors: metadata.name and metadata.namespace, and a Pod's spec.nodeName and status.phase") {
  auto object = [](const std::string& name, const std::string& ns) {
    return nlohmann::json{{"metadata", {{"name", name}, {"namespace", ns}}}};
  };
  FieldSelector f;
  REQUIRE(parse_field_selector("metadata.name=node-1", f) == "");
  CHECK(f.matches(object("node-1", "")));
  CHECK_FALSE(f.matches(object("node-2", "")));
  REQUIRE(parse_field_selector("metadata.namespace==team-a,metadata.name!=default", f) == "");
  CHECK(f.matches(object("trainer", "team-a")));
  CHECK_FALSE(f.matches(object("default", "team-a")));
  CHECK(parse_field_selector("spec.nodeName=x", f) == "field label not supported: spec.nodeName");
  REQUIRE(parse_field_selector("spec.nodeName=gpu-0,status.phase!=Succeeded", f, "Pod") == "");
  nlohmann::json pod = object("trainer-7f", "team-a");
  pod["spec"]["nodeName"] = "gpu-0";
  pod["status"]["phase"] = "Running";
  CHECK(f.matches(pod));
  pod["spec"]["nodeName"] = "gpu-1";
  CHECK_FALSE(f.matches(pod));
}

TEST_CASE("FieldsV1 round trip: owned objects with owned children get a \".\" entry") {
  FieldSet set = {{"metadata", "labels"}, {"metadata", "labels", "app"}, {"spec", "hard", "requests.nvidia.com/gpu"}};
  json f = to_fields_v1(set);
  CHECK(f == json::parse(R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}},
                             "f:spec":{"f:hard":{"f:requests.nvidia.com/gpu":{}}}})"));
  CHECK(from_fields_v1(f) == set);
  CHECK(path_string({"spec", "hard", "requests.nvidia.com/gpu"}) == ".spec.hard.requests.nvidia.com/gpu");
}

TEST_CASE("server-side apply: conflicts name the other manager and the field, force moves ownership") {
  json quota = json::parse(R"({"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"a"},
                               "spec":{"hard":{"requests.nvidia.com/gpu":"8","cpu":"64"}}})");
  ApplyOutcome first = server_side_apply(nullptr, {}, quota, "plinth", "v1", false, "t1", kSpecOnly);
  REQUIRE(first.conflicts.empty());
  REQUIRE(first.managers.size() == 1);
  CHECK(first.managers[0].fields == FieldSet{{"spec", "hard", "requests.nvidia.com/gpu"}, {"spec", "hard", "cpu"}});

  json other = json::parse(R"({"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"a"},
                               "spec":{"hard":{"requests.nvidia.com/gpu":"2"}}})");
  ApplyOutcome refused = server_side_apply(first.object, first.managers, other, "other", "v1", false, "t2", kSpecOnly);
  REQUIRE(refused.conflicts.size() == 1);
  CHECK(conflict_message(refused.conflicts) ==
        "Apply failed with 1 conflict: conflict with \"plinth\": .spec.hard.requests.nvidia.com/gpu");

  // Same value: shared ownership, no conflict.
  json same = other;
  same["spec"]["hard"]["requests.nvidia.com/gpu"] = "8";
  ApplyOutcome shared = server_side_apply(first.object, first.managers, same, "other", "v1", false, "t2", kSpecOnly);
  CHECK(shared.conflicts.empty());
  CHECK(shared.managers.size() == 2);

  ApplyOutcome forced = server_side_apply(first.object, first.managers, other, "other", "v1", true, "t3", kSpecOnly);
  REQUIRE(forced.conflicts.empty());
  CHECK(forced.object["spec"]["hard"]["requests.nvidia.com/gpu"] == "2");
  CHECK(forced.managers[0].fields == FieldSet{{"spec", "hard", "cpu"}});
  CHECK(forced.managers[1].manager == "other");
  CHECK(forced.managers[1].fields == FieldSet{{"spec", "hard", "requests.nvidia.com/gpu"}});

  // plinth drops cpu from its configuration: nobody else owns it, so it goes.
  json less = quota;
  less["spec"]["hard"].erase("cpu");
  less["spec"]["hard"]["requests.nvidia.com/gpu"] = "2";
  ApplyOutcome dropped =
      server_side_apply(forced.object, forced.managers, less, "plinth", "v1", false, "t4", kSpecOnly);
  REQUIRE(dropped.conflicts.empty());
  CHECK_FALSE(dropped.object["spec"]["hard"].contains("cpu"));
  CHECK(dropped.object["spec"]["hard"]["requests.nvidia.com/gpu"] == "2");
}

TEST_CASE("an Update manager owns what it changed and shows as \"name\" using apiVersion in conflicts") {
  json before = json::parse(R"({"metadata":{"name":"n"},"spec":{"hard":{"cpu":"1"}}})");
  std::vector<ManagedEntry> managers;
  record_update(managers, json::object(), before, "kubectl-create", "v1", "t0", kSpecOnly);
  REQUIRE(managers.size() == 1);
  CHECK(managers[0].fields == FieldSet{{"spec", "hard"}, {"spec", "hard", "cpu"}});
  json after = before;
  after["metadata"]["labels"]["pool"] = "h100";
  after["spec"]["hard"]["cpu"] = "2";
  record_update(managers, before, after, "kubectl-edit", "v1", "t1", kSpecOnly);
  REQUIRE(managers.size() == 2);
  CHECK(managers[0].fields == FieldSet{{"spec", "hard"}});
  CHECK(managers[1].fields ==
        FieldSet{{"metadata", "labels"}, {"metadata", "labels", "pool"}, {"spec", "hard", "cpu"}});

  json config = json::parse(R"({"spec":{"hard":{"cpu":"3"}},"metadata":{"labels":{"pool":"a100"}}})");
  ApplyOutcome out = server_side_apply(after, managers, config, "plinth", "v1", false, "t2", kSpecOnly);
  CHECK(conflict_message(out.conflicts) ==
        "Apply failed with 2 conflicts: conflicts with \"kubectl-edit\" using v1:\n"
        "- .metadata.labels.pool\n"
        "- .spec.hard.cpu");
}

TEST_CASE("ages print like kubectl's") {
  using std::chrono::seconds;
  CHECK(human_duration(seconds(5)) == "5s");
  CHECK(human_duration(seconds(119)) == "119s");
  CHECK(human_duration(seconds(200)) == "3m20s");
  CHECK(human_duration(seconds(3600 * 5)) == "5h");
  CHECK(human_duration(seconds(86400 * 3 + 3600)) == "3d1h");
}

TEST_CASE("strict field validation finds unknown fields of built-in kinds, custom resources keep theirs") {
  ResourceType quota, role, policy;
  for (const auto& t : builtin_types()) {
    if (t.kind == "ResourceQuota") quota = t;
    if (t.kind == "Role") role = t;
  }
  auto cp = type_from_crd(clusterpolicy_crd());
  REQUIRE(cp);
  policy = *cp;
  CHECK(policy.plural == "clusterpolicies");
  CHECK_FALSE(policy.namespaced);
  CHECK(unknown_fields(quota, json::parse(R"({"spec":{"hardd":{}},"metadata":{"name":"q"}})")) ==
        std::vector<std::string>{"spec.hardd"});
  CHECK(unknown_fields(role, json::parse(R"({"rules":[{"verbs":["get"]},{"verbz":["x"]}]})")) ==
        std::vector<std::string>{"rules[1].verbz"});
  CHECK(unknown_fields(policy, json::parse(R"({"spec":{"anything":{"goes":1}}})")).empty());
}
