#include <catch2/catch.hpp>

#include <algorithm>

#include "engine/plan/format.h"
#include "tests/support/workspace.h"

namespace plinth::test::plan_format {

namespace {

Resource res(const std::string& type, const std::string& name, int index, Json attrs) {
  return make_resource(type, name, index, "plinth", std::move(attrs));
}

plan::Plan sample() {
  Json node = {{"bios", {{"SriovEnable", "Enabled"}}}, {"bmc_credentials", "env:A"}, {"gpu", "L40S"}};
  Json node_new = {{"bios", {{"SriovEnable", "Disabled"}}}, {"bmc_credentials", "env:B"}, {"gpu", "L40S"}};
  Json inst = {{"instance_type", "p5.48xlarge"}, {"spot", true}};
  Json inst_new = {{"instance_type", "p4d.24xlarge"}, {"spot", true}};
  return plan::diff(
      {res("aws.instance", "burst", 0, inst_new), res("baremetal.node", "n", 0, node_new),
       res("net.vlan", "new", -1, {{"id", 7}, {"cidr", "10.0.0.0/24"}}), res("net.vlan", "same", -1, {{"id", 1}})},
      {res("aws.instance", "burst", 0, inst), res("baremetal.node", "n", 0, node), res("net.vlan", "same", -1, {{"id", 1}}),
       res("storage.tier", "old", -1, {{"kind", "nfs"}})});
}

}  // namespace

TEST_CASE("the text plan lists each changed resource with before -> after and a summary") {
  CHECK(plan::to_text(sample()) == R"txt(Plinth will perform the following actions:

  -/+ aws.instance.burst[0] (replace, forced by: instance_type)
      instance_type: "p5.48xlarge" -> "p4d.24xlarge"  # forces replacement
  ~ baremetal.node.n[0] (update in place)
      bios.SriovEnable: "Enabled" -> "Disabled"
      bmc_credentials: (sensitive) -> (sensitive)
  + net.vlan.new (create)
      cidr: "10.0.0.0/24"
      id: 7
  - storage.tier.old (destroy)

Plan: 1 to create, 1 to update, 1 to replace, 1 to destroy.
)txt");
}

TEST_CASE("colour appears only when asked for") {
  std::string plain = plan::to_text(sample());
  CHECK(plain.find('\x1b') == std::string::npos);
  std::string color = plan::to_text(sample(), {true});
  CHECK(color.find("  \x1b[32m+\x1b[0m net.vlan.new (create)\n") != std::string::npos);
  CHECK(color.find("  \x1b[31m-\x1b[0m storage.tier.old (destroy)\n") != std::string::npos);
}

TEST_CASE("a plan without changes says so in one line") {
  auto p = plan::diff({res("net.vlan", "same", -1, {{"id", 1}})}, {res("net.vlan", "same", -1, {{"id", 1}})});
  CHECK(plan::to_text(p) == "No changes. Infrastructure matches the blueprint.\n");
  CHECK(plan::summary_line(plan::Plan{}) == "No changes. Infrastructure matches the blueprint.");
}

TEST_CASE("the JSON plan carries the version, the summary and every resource change") {
  Json j = plan::to_json(sample());
  CHECK(j["format_version"] == "1.2");
  CHECK(j["summary"] == Json{{"create", 1}, {"update", 1}, {"replace", 1}, {"delete", 1}, {"no_op", 1},
                             {"has_changes", true}});
  REQUIRE(j["resource_changes"].size() == 5);
  const Json& replace = j["resource_changes"][0];
  CHECK(replace == Json::parse(R"({"address": "aws.instance.burst[0]", "type": "aws.instance", "name": "burst",
    "index": 0, "provider": "plinth", "action": "replace", "forced_by": ["instance_type"],
    "changes": [{"path": "instance_type", "before": "p5.48xlarge", "after": "p4d.24xlarge",
                 "forces_replacement": true, "sensitive": false}]})"));
  const Json& update = j["resource_changes"][1];
  CHECK(update["changes"][1] == Json{{"path", "bmc_credentials"}, {"before", "(sensitive)"}, {"after", "(sensitive)"},
                                     {"forces_replacement", false}, {"sensitive", true}});
  CHECK(j["resource_changes"][2]["action"] == "create");
  CHECK(j["resource_changes"][2]["index"] == nullptr);
  CHECK(j["resource_changes"][2]["changes"][0]["before"] == nullptr);
  CHECK(j["resource_changes"][3]["action"] == "no-op");
  CHECK(j["resource_changes"][3]["changes"] == Json::array());
  CHECK(j["resource_changes"][4]["action"] == "delete");
  CHECK(j["resource_changes"][4]["changes"][0]["after"] == nullptr);
  CHECK(j.dump().find("env:") == std::string::npos);  // sensitive values never leak
}

TEST_CASE("printing ten thousand creates builds one string") {
  std::vector<Resource> desired;
  for (int i = 0; i < 10000; ++i) desired.push_back(res("baremetal.node", "big", i, {{"gpu", "H100-80GB"}}));
  auto p = plan::diff(desired, {});
  std::string text = plan::to_text(p, {.grouped = false});
  CHECK(text.find("  + baremetal.node.big[9999] (create)\n      gpu: \"H100-80GB\"\n") != std::string::npos);
  const std::string tail = "\n\nPlan: 10000 to create, 0 to update, 0 to replace, 0 to destroy.\n";
  CHECK(text.substr(text.size() - tail.size()) == tail);
}

TEST_CASE("grouped: a pool's members taking one action are one entry, with shared and per-node values") {
  std::vector<Resource> desired, prior;
  for (int i = 0; i < 20; ++i) {
    const std::string bmc = "https://bmc-" + std::to_string(i) + ".example";
    desired.push_back(res("baremetal.node", "gpu", i, {{"gpu", "H100-80GB"}, {"bmc_endpoint", bmc}}));
  }
  for (int i = 0; i < 10; ++i) {
    Json a = {{"bios", {{"SriovEnable", "Enabled"}}}, {"gpu", "L40S"}};
    prior.push_back(res("baremetal.node", "prep", i, a));
    if (i == 1 || i == 5 || i == 9) a["bios"]["SriovEnable"] = "Disabled";
    if (i == 9) a["gpu"] = "L40";
    desired.push_back(res("baremetal.node", "prep", i, a));
  }
  desired.push_back(res("net.vlan", "v", -1, {{"id", 7}}));
  prior.push_back(res("baremetal.node", "old", 0, {{"gpu", "A100"}}));
  prior.push_back(res("baremetal.node", "old", 1, {{"gpu", "A100"}}));
  prior.push_back(res("baremetal.node", "lone", 4, {{"gpu", "A100"}}));
  auto p = plan::diff(desired, prior);
  CHECK(plan::to_text(p) == R"txt(Plinth will perform the following actions:

  + baremetal.node.gpu[0..19]  20 to create
      bmc_endpoint: "https://bmc-0.example" ... "https://bmc-19.example"  (per node)
      gpu: "H100-80GB"
  - baremetal.node.lone[4] (destroy)
  - baremetal.node.old[0, 1]  2 to destroy
  ~ baremetal.node.prep[1, 5, 9]  3 to update in place
      bios.SriovEnable: "Enabled" -> "Disabled"
      gpu: "L40S" -> "L40"  (1 of 3)
  + net.vlan.v (create)
      id: 7

Plan: 21 to create, 3 to update, 0 to replace, 3 to destroy.
)txt");
  // --no-group: today's form, one block per resource.
  const std::string full = plan::to_text(p, {.grouped = false});
  CHECK(full.find("  + baremetal.node.gpu[19] (create)\n      bmc_endpoint: \"https://bmc-19.example\"\n") !=
        std::string::npos);
  CHECK(full.find("  ~ baremetal.node.prep[9] (update in place)\n") != std::string::npos);
}

TEST_CASE("grouped: a pool whose lines repeat an earlier pool's names it and prints only what differs") {
  std::vector<Resource> desired;
  for (const std::string pool : {"a", "b", "c"})
    for (int i = 0; i < 3; ++i)
      desired.push_back(res("baremetal.node", pool, i,
                            {{"bmc_endpoint", "https://" + pool + std::to_string(i)},
                             {"gpu", pool == "c" ? "L40S" : "H100-80GB"},
                             {"memory_gb", 2048},
                             {"cpu_cores", 96},
                             {"role", "training"},
                             {"stack", "train"}}));
  CHECK(plan::to_text(plan::diff(desired, {})) == R"txt(Plinth will perform the following actions:

  + baremetal.node.a[0..2]  3 to create
      bmc_endpoint: "https://a0" ... "https://a2"  (per node)
      cpu_cores: 96
      gpu: "H100-80GB"
      memory_gb: 2048
      role: "training"
      stack: "train"
  + baremetal.node.b[0..2]  3 to create, attributes as baremetal.node.a except:
      bmc_endpoint: "https://b0" ... "https://b2"  (per node)
  + baremetal.node.c[0..2]  3 to create, attributes as baremetal.node.a except:
      bmc_endpoint: "https://c0" ... "https://c2"  (per node)
      gpu: "L40S"

Plan: 9 to create, 0 to update, 0 to replace, 0 to destroy.
)txt");
}

TEST_CASE("the streamed JSON text parses to the same document, one change per line") {
  auto p = sample();
  Json extra = {{"state", {{"serial", 3}}}};
  std::string text = plan::to_json_text(p, extra);
  Json want = plan::to_json(p);
  want["state"] = {{"serial", 3}};
  CHECK(Json::parse(text) == want);
  CHECK(text.rfind("{\n  \"format_version\": \"1.2\",\n", 0) == 0);
  CHECK(text.find("\n    {\"action\":\"replace\",\"address\":\"aws.instance.burst[0]\",") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 4 + 5 + 3);
  CHECK(Json::parse(plan::to_json_text(plan::Plan{})) == plan::to_json(plan::Plan{}));
}

}  // namespace plinth::test::plan_format
