// The instance types the built-in clouds declare (providers/NAME/instance_types.yaml,
// compiled into their schemas) and the reader of that format.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <set>

#include "engine/catalog/catalog.h"
#include "providers/aws/schema.h"
#include "providers/azure/schema.h"
#include "providers/common/instance_types.h"
#include "providers/gcp/schema.h"

namespace plinth::test::provider_instance_types {
namespace {

const ProviderSchema& schema_of(const std::string& provider) {
  if (provider == "aws") return aws::schema();
  if (provider == "gcp") return gcp::schema();
  return azure::schema();
}

std::string error_of(const std::string& text) {
  auto r = cloud::read_instance_types("types.yaml", text);
  return r ? std::string() : r.error().message;
}

}  // namespace

TEST_CASE("the clouds' instance types carry their GPU model and count, each a GPU of the catalog") {
  const auto cat = catalog::Catalog::load_embedded();
  REQUIRE(cat.ok());
  struct Want {
    const char* provider;
    const char* name;
    const char* gpu;
    int count;
  };
  for (const Want& w : {Want{"aws", "p4d.24xlarge", "A100-40GB", 8}, {"aws", "p4de.24xlarge", "A100-80GB", 8},
                        {"aws", "p5.48xlarge", "H100-80GB", 8}, {"aws", "g5.xlarge", "A10G", 1}, {"aws", "g5.12xlarge", "A10G", 4},
                        {"aws", "g5.48xlarge", "A10G", 8}, {"aws", "g6.24xlarge", "L4", 4}, {"gcp", "a2-highgpu-4g", "A100-40GB", 4},
                        {"gcp", "a2-ultragpu-8g", "A100-80GB", 8}, {"gcp", "a3-highgpu-8g", "H100-80GB", 8},
                        {"gcp", "g2-standard-24", "L4", 2}, {"gcp", "g2-standard-96", "L4", 8},
                        {"azure", "Standard_ND96asr_v4", "A100-40GB", 8}, {"azure", "Standard_ND96amsr_A100_v4", "A100-80GB", 8},
                        {"azure", "Standard_ND96isr_H100_v5", "H100-80GB", 8}, {"azure", "Standard_NC48ads_A100_v4", "A100-80GB-PCIe", 2},
                        {"aws", "p5e.48xlarge", "H200-141GB", 8}, {"aws", "p5en.48xlarge", "H200-141GB", 8},
                        {"aws", "p6-b200.48xlarge", "B200", 8}, {"aws", "g6e.12xlarge", "L40S", 4}, {"aws", "g4dn.metal", "T4", 8},
                        {"gcp", "a3-megagpu-8g", "H100-80GB", 8}, {"gcp", "a3-ultragpu-8g", "H200-141GB", 8},
                        {"gcp", "a4-highgpu-8g", "B200", 8}, {"gcp", "a2-megagpu-16g", "A100-40GB", 16},
                        {"azure", "Standard_ND96isr_H200_v5", "H200-141GB", 8}, {"azure", "Standard_NC40ads_H100_v5", "H100-94GB-NVL", 1},
                        {"azure", "Standard_NC80adis_H100_v5", "H100-94GB-NVL", 2},
                        {"azure", "Standard_ND128isr_NDR_GB200_v6", "GB200", 4}}) {
    INFO(w.provider << " " << w.name);
    const InstanceType* t = schema_of(w.provider).instance_type(w.name);
    REQUIRE(t != nullptr);
    CHECK(t->gpu == w.gpu);
    CHECK(t->gpu_count == w.count);
    CHECK_FALSE(t->sources.empty());
  }
  CHECK(gcp::schema().instance_type("p5.48xlarge") == nullptr);
  for (const char* provider : {"aws", "gcp", "azure"}) {
    const ProviderSchema& s = schema_of(provider);
    CHECK(check_schema(s).ok());
    for (const auto& t : s.instance_types) {
      INFO(provider << " " << t.name);
      CHECK(cat->gpu(t.gpu) != nullptr);
    }
  }
  CHECK(aws::schema().instance_types.size() == 38);
  CHECK(gcp::schema().instance_types.size() == 24);
  CHECK(azure::schema().instance_types.size() == 10);
}

TEST_CASE("every AWS instance type is in the EC2 API's InstanceType enum") {
  YAML::Node model = YAML::LoadFile(std::string(PLINTH_TESTDATA_DIR) + "/aws-ec2/botocore-model/service-2.json");
  std::set<std::string> known;
  for (const auto& e : model["shapes"]["InstanceType"]["enum"]) known.insert(e.as<std::string>());
  REQUIRE(known.size() > 100);
  for (const auto& t : aws::schema().instance_types) {
    INFO(t.name);
    CHECK(known.count(t.name) == 1);
  }
}

TEST_CASE("the clouds know which instances have NVSwitch, run Fabric Manager and how many EFA interfaces they take") {
  const ProviderSchema& aws = aws::schema();
  for (const char* t : {"p4d.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge"}) {
    INFO(t);
    CHECK(aws.instance_type(t)->nvswitch);
    CHECK(aws.instance_type(t)->fabric_manager);
  }
  CHECK(aws.instance_type("p5.48xlarge")->facts == Json{{"efa_interfaces", 32}});
  CHECK(aws.instance_type("p5e.48xlarge")->facts == Json{{"efa_interfaces", 32}});
  CHECK(aws.instance_type("p5en.48xlarge")->facts == Json{{"efa_interfaces", 16}});
  CHECK(aws.instance_type("p4d.24xlarge")->facts == Json{{"efa_interfaces", 4}});
  CHECK(aws.instance_type("p6-b200.48xlarge")->facts == Json{{"efa_interfaces", 8}});
  CHECK(aws.instance_type("g6e.xlarge")->facts.empty());
  CHECK_FALSE(aws.instance_type("p5.4xlarge")->nvswitch);
  CHECK_FALSE(azure::schema().instance_type("Standard_NC24ads_A100_v4")->fabric_manager);
  CHECK(azure::schema().instance_type("Standard_ND96isr_H200_v5")->fabric_manager);
  CHECK_FALSE(azure::schema().instance_type("Standard_ND128isr_NDR_GB200_v6")->fabric_manager);  // IMEX
  CHECK(gcp::schema().instance_type("a3-megagpu-8g")->fabric_manager);
  // Facts are the provider's own: only AWS has EFA.
  for (const ProviderSchema* s : {&gcp::schema(), &azure::schema()})
    for (const auto& t : s->instance_types) CHECK(t.facts.empty());
}

TEST_CASE("the instance-type reader names file:line:column for each bad row") {
  const std::string head = "sources:\n  notes: \"release notes, https://example.com\"\ninstance_types:\n";
  auto ok = cloud::read_instance_types(
      "types.yaml", head + "  - {name: big.8x, gpu: H100-80GB, gpu_count: 8, vcpus: 96, memory_gb: 1024, nvswitch: true, "
                           "fabric_manager: true, facts: {efa_interfaces: 4}, source: \"notes (8 cards)\"}\n");
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 1);
  CHECK(ok->front().sources == std::vector<std::string>{"release notes, https://example.com"});
  CHECK(ok->front().facts == Json{{"efa_interfaces", 4}});
  CHECK(error_of(head + "  - {name: a, gpu: L4, gpu_count: 1, vcpus: 4, memory_gb: 16, source: blog}\n") ==
        "types.yaml:4:71: instance type 'a' cites 'blog', which 'sources' does not list");
  CHECK(error_of(head + "  - {name: a, gpu: L4, gpu_count: 0, vcpus: 4, memory_gb: 16, source: notes}\n") ==
        "types.yaml:4:35: 'gpu_count' of instance type 'a' must be at least 1");
  CHECK(error_of(head + "  - {name: a, gpu: L4, gpu_cuont: 1, vcpus: 4, memory_gb: 16, source: notes}\n")
            .find("types.yaml:4:24: unknown key 'gpu_cuont'") == 0);
  CHECK(error_of(head + "  - {name: a, gpu: L4, gpu_count: 1, vcpus: 4, memory_gb: lots, source: notes}\n") ==
        "types.yaml:4:59: 'memory_gb' of instance type 'a' has the wrong type");
  CHECK(error_of(head + "  - {name: a, gpu: L4, gpu_count: 1, vcpus: 4, memory_gb: 1, fabric_manager: true, source: notes}\n") ==
        "types.yaml:4:5: instance type 'a' runs Fabric Manager but has no NVSwitch");
  CHECK(error_of(head + "  - {name: a, gpu: L4, gpu_count: 1, vcpus: 4, memory_gb: 1, source: notes}\n"
                        "  - {name: a, gpu: L4, gpu_count: 1, vcpus: 4, memory_gb: 1, source: notes}\n") ==
        "types.yaml:5:5: duplicate instance type 'a'");
  CHECK(error_of("instance_types: [\n").find("types.yaml:2:1: YAML syntax error") == 0);
}

TEST_CASE("a schema's instance types are checked: a burst_pools provider, known facts, sane counts") {
  ProviderSchema s = aws::schema();
  CHECK(check_schema(s).ok());
  s.instance_types.front().facts = {{"warp_drive", 1}};
  CHECK(check_schema(s).error().message ==
        "provider 'aws': instance type 'p4d.24xlarge' has the fact 'warp_drive', which is not an attribute of aws.instance");
  s = aws::schema();
  s.instance_types.push_back(s.instance_types.front());
  CHECK(check_schema(s).error().message == "provider 'aws': instance type 'p4d.24xlarge' is declared twice");
  s = aws::schema();
  s.sections.front().fallback_types = "sizes";
  CHECK(check_schema(s).error().message ==
        "provider 'aws': section 'burst_pools' takes fallback types from setting 'sizes', which it does not declare");
  s = aws::schema();
  s.sections.front().gpu_nic_setting = "subnets_for_gpus";
  CHECK(check_schema(s).error().message ==
        "provider 'aws': section 'burst_pools' lists GPU NICs in setting 'subnets_for_gpus', which it does not declare as "
        "a list of strings");
  s.sections.front().gpu_nic_setting = "placement_group";  // declared, but a boolean
  CHECK_FALSE(check_schema(s).ok());
  s = aws::schema();
  s.sections.clear();
  CHECK(check_schema(s).error().message == "provider 'aws': declares instance types but serves no burst_pools");
  // GCP's GPU NIC setting travels in the handshake like the rest of the section.
  const Json g = gcp::schema();
  CHECK(g.at("sections").at(0).at("gpu_nic_setting") == "gpu_subnetworks");
  CHECK(g.get<ProviderSchema>().sections == gcp::schema().sections);
  // The handshake's JSON round-trips them.
  const Json j = aws::schema();
  CHECK(j.at("instance_types").size() == 38);
  CHECK(j.get<ProviderSchema>().instance_types == aws::schema().instance_types);
}

TEST_CASE("Azure's ND and NC A100 v4 sizes carry Azure's NCCL topology (and graph), which the handshake carries and the schema check guards") {
  const ProviderSchema& az = azure::schema();
  std::map<std::string, std::string> path;
  for (const auto& t : az.instance_types)
    if (!t.nccl_topology_path.empty()) path[t.name] = t.nccl_topology_path;
  CHECK(path == std::map<std::string, std::string>{{"Standard_ND96amsr_A100_v4", "/opt/microsoft/ndv4-topo.xml"},
                                                   {"Standard_ND96asr_v4", "/opt/microsoft/ndv4-topo.xml"},
                                                   {"Standard_ND96isr_H100_v5", "/opt/microsoft/ndv5-topo.xml"},
                                                   {"Standard_ND96isr_H200_v5", "/opt/microsoft/ndv5-topo.xml"},
                                                   {"Standard_NC96ads_A100_v4", "/opt/microsoft/ncv4-topo.xml"}});
  std::map<std::string, std::string> graph;
  for (const auto& t : az.instance_types)
    if (!t.nccl_graph_path.empty()) graph[t.name] = t.nccl_graph_path;
  CHECK(graph == std::map<std::string, std::string>{{"Standard_NC96ads_A100_v4", "/opt/microsoft/ncv4-graph.xml"}});
  const Json j = az;
  CHECK(j.get<ProviderSchema>().instance_types == az.instance_types);
  ProviderSchema s = az;
  InstanceType& t = s.instance_types.front();
  REQUIRE_FALSE(t.nccl_topology_xml.empty());
  t.nccl_topology_path = "/opt/x\nruncmd: [evil]";
  CHECK(check_schema(s).error().message.find("must give nccl_topology_path (an absolute path of letters") !=
        std::string::npos);
  t.nccl_topology_path = "";
  CHECK_FALSE(check_schema(s).ok());  // the XML without a path
  // A graph: a safe path, with its XML, and only beside a topology.
  ProviderSchema g = az;
  InstanceType* nc = nullptr;
  for (auto& x : g.instance_types)
    if (x.name == "Standard_NC96ads_A100_v4") nc = &x;
  REQUIRE(nc);
  REQUIRE(check_schema(g).ok());
  nc->nccl_graph_path = "/opt/g.xml; rm -rf /";
  CHECK(check_schema(g).error().message.find("must give nccl_graph_path") != std::string::npos);
  nc->nccl_graph_path = "/opt/microsoft/ncv4-graph.xml";
  nc->nccl_topology_path = nc->nccl_topology_xml = "";
  CHECK(check_schema(g).error().message.find("only with a topology") != std::string::npos);
}

}  // namespace plinth::test::provider_instance_types
