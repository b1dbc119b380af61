// fuzz_seeds OUT_DIR: seed inputs for the fuzzers whose formats no checked-in
// file has, made from the example blueprints (blueprints/examples): for each
// one a state document of its resources (OUT_DIR/fuzz_state/) and plan files
// creating, updating and deleting them, unsigned and HMAC-signed
// (OUT_DIR/fuzz_planfile/), and a waivers.yaml naming them
// (OUT_DIR/fuzz_waivers/); EC2 answers written by the aws provider's own
// protocol code, paged DescribeInstances, RunInstances, error XML
// (OUT_DIR/fuzz_aws/), and Compute Engine answers, operations, pages,
// errors and tokens (OUT_DIR/fuzz_gcp/). Run by .ci/fuzz from the
// repository root.
#include <filesystem>
#include <tuple>

#include "engine/blueprint/loader.h"
#include "engine/core/files.h"
#include "engine/graph/expand.h"
#include "engine/plan/planfile.h"
#include "engine/state/state.h"

#include "providers/aws/ec2_model.h"
#include "providers/registry/registry.h"

using namespace plinth;
namespace fs = std::filesystem;

namespace {

/// Answers of EC2 (serialized by the provider's protocol code from its model)
/// and of Compute Engine (in the discovery document's shapes) that reach the
/// providers' deeper paths: the instance of fuzz_aws / fuzz_gcp found, paged,
/// pending, refused for capacity, throttled.
template <typename Write>
void write_cloud_seeds(const fs::path& out, Write& write) {
  fs::create_directories(out / "fuzz_aws");
  fs::create_directories(out / "fuzz_gcp");
  const auto& model = aws::client_model();
  auto ec2_instance = [](const std::string& state) {
    return Json{{"InstanceId", "i-4382922a"},
                {"ImageId", "ami-0123456789abcdef0"},
                {"InstanceType", "p5.48xlarge"},
                {"InstanceLifecycle", "spot"},
                {"Placement", {{"AvailabilityZone", "us-east-1b"}, {"GroupName", "plinth-fuzz-us-east-1b-fuzz-lin"}}},
                {"State", {{"Code", 16}, {"Name", state}}},
                {"StateReason",
                 {{"Code", "Server.SpotInstanceTermination"},
                  {"Message",
                   "Server.SpotInstanceTermination: "
                   "Spot instance termination"}}},
                {"SubnetId", "subnet-1"},
                {"PrivateIpAddress", "10.0.0.7"},
                {"LaunchTime", "2026-12-03T10:00:00.000Z"},
                {"Tags",
                 {{{"Key", "plinth:address"}, {"Value", "aws.instance.fuzz[1]"}},
                  {{"Key", "plinth:lineage"}, {"Value", "fuzz-lineage"}},
                  {{"Key", "plinth:attributes"}, {"Value", "0123456789abcdef"}}}}};
  };
  // The first byte picks the fake's status, the whitespace at the end its flags (fuzz_aws.cpp, fuzz_gcp.cpp).
  auto ec2 = [&](const std::string& name, const std::string& operation, const Json& value,
                 const std::string& end = "") {
    auto xml = aws::ec2::serialize_response(model, operation, value, "fuzz-request-id", false);
    if (!xml) {
      std::fprintf(stderr, "seed %s: %s\n", name.c_str(), xml.error().message.c_str());
      std::exit(1);
    }
    write(out / "fuzz_aws" / (name + ".xml"), *xml + end);
  };
  for (const std::string state : {"running", "pending", "terminated", "shutting-down"}) {
    Json page = {{"Reservations", {{{"Instances", {ec2_instance(state)}}}}}};
    if (state == "pending") page["NextToken"] = "page-2";  // a DescribeInstances page with more to come
    ec2("describe-" + state, "DescribeInstances", page);
  }
  ec2("describe-pending-patient", "DescribeInstances", {{"Reservations", {{{"Instances", {ec2_instance("pending")}}}}}},
      "\t");
  ec2("run-instances", "RunInstances", {{"Instances", {ec2_instance("pending")}}});
  ec2("terminate-instances", "TerminateInstances",
      {{"TerminatingInstances",
        {{{"InstanceId", "i-4382922a"},
          {"CurrentState", {{"Code", 32}, {"Name", "shutting-down"}}},
          {"PreviousState", {{"Code", 16}, {"Name", "running"}}}}}}});
  ec2("create-placement-group", "CreatePlacementGroup",
      {{"PlacementGroup",
        {{"GroupName", "plinth-fuzz-us-east-1b-fuzz-lin"}, {"Strategy", "cluster"}, {"State", "available"}}}});
  struct Failure {
    const char *code, *message, *status;  // status: the first byte, '\n' 500, '\t' 503, '\r' 401, ' ' 400
  };
  for (const Failure& f : {Failure{"InsufficientInstanceCapacity",
                                   "We currently do not have sufficient p5.48xlarge capacity in the Availability "
                                   "Zone you requested.",
                                   "\n"},
                           Failure{"RequestLimitExceeded", "Request limit exceeded.", "\t"},
                           Failure{"IdempotentInstanceTerminated", "The client token has been used.", " "},
                           Failure{"InvalidInstanceID.NotFound", "The instance ID 'i-4382922a' does not exist", " "},
                           Failure{"InvalidPlacementGroup.Duplicate", "The placement group already exists.", " "},
                           Failure{"InvalidPlacementGroup.InUse", "The placement group is in use.", " "},
                           Failure{"UnauthorizedOperation", "You are not authorized to perform this operation.", "\r"}})
    write(out / "fuzz_aws" / (std::string("error-") + f.code + ".xml"),
          f.status + aws::ec2::error_xml(f.code, f.message, "fuzz-request-id"));

  // Compute Engine.
  const std::string zone = "https://www.googleapis.com/compute/v1/projects/fuzz-project/zones/us-central1-b";
  auto gce_instance = [&](const std::string& status) {
    return Json{{"kind", "compute#instance"},
                {"id", "1234567890"},
                {"name", "fuzz-1-abcdef01"},
                {"zone", zone},
                {"machineType", zone + "/machineTypes/a3-highgpu-8g"},
                {"status", status},
                {"selfLink", zone + "/instances/fuzz-1-abcdef01"},
                {"creationTimestamp", "2026-12-03T02:00:00.000-08:00"},
                {"labelFingerprint", "42WmSpB8rSM="},
                {"labels", {{"plinth-lineage", "fuzz-lineage"}, {"plinth-attributes", "0123456789abcdef"}}},
                {"metadata", {{"items", {{{"key", "plinth-address"}, {"value", "gcp.instance.fuzz[1]"}}}}}},
                {"scheduling", {{"provisioningModel", "SPOT"}, {"instanceTerminationAction", "STOP"}}},
                {"networkInterfaces", {{{"networkIP", "10.128.0.7"}}}}};
  };
  auto operation = [&](const std::string& status) {
    return Json{{"kind", "compute#operation"},
                {"id", "555"},
                {"name", "operation-1733220000000-fuzz"},
                {"zone", zone},
                {"operationType", "insert"},
                {"targetLink", zone + "/instances/fuzz-1-abcdef01"},
                {"targetId", "1234567890"},
                {"status", status},
                {"progress", status == "DONE" ? 100 : 0}};
  };
  auto gce = [&](const std::string& name, const Json& doc, const std::string& first = "", const std::string& end = "") {
    write(out / "fuzz_gcp" / (name + ".json"), first + doc.dump(1) + end);
  };
  for (const char* status : {"RUNNING", "TERMINATED"}) {
    gce(std::string("instance-") + status, gce_instance(status));
    Json page = {{"kind", "compute#instanceAggregatedList"},
                 {"items",
                  {{"zones/us-central1-b", {{"instances", {gce_instance(status)}}}},
                   {"zones/us-central1-a", {{"warning", {{"code", "NO_RESULTS_ON_PAGE"}}}}}}}};
    if (std::string(status) == "RUNNING") page["nextPageToken"] = "page-2";
    gce(std::string("aggregated-list-") + status, page);
  }
  for (const char* status : {"PENDING", "RUNNING", "DONE"}) gce(std::string("operation-") + status, operation(status));
  gce("operation-RUNNING-patient", operation("RUNNING"), "", "\t");
  Json stockout = operation("DONE");
  stockout["httpErrorStatusCode"] = 503;
  stockout["httpErrorMessage"] = "SERVICE UNAVAILABLE";
  stockout["error"] = {{"errors",
                        {{{"code", "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"},
                          {"message",
                           "The zone 'projects/fuzz-project/zones/us-central1-b' does not have enough "
                           "resources available to fulfill the request."},
                          {"errorDetails",
                           {{{"errorInfo",
                              {{"reason", "resource_availability"},
                               {"metadatas", {{"zonesAvailable", "us-central1-a,us-central1-c"}}}}}}}}}}}};
  gce("operation-stockout", stockout);
  Json quota = operation("DONE");
  quota["httpErrorStatusCode"] = 403;
  quota["error"] = {
      {"errors",
       {{{"code", "QUOTA_EXCEEDED"},
         {"message", "Quota 'NVIDIA_H100_GPUS' exceeded.  Limit: 8.0 in region us-central1."},
         {"errorDetails", {{{"quotaInfo", {{"metricName", "compute.googleapis.com/nvidia_h100_gpus"}}}}}}}}}};
  gce("operation-quota", quota);
  gce("preempted-operations", {{"kind", "compute#operationList"},
                               {"items",
                                {{{"operationType", "compute.instances.preempted"},
                                  {"targetId", "1234567890"},
                                  {"targetLink", zone + "/instances/fuzz-1-abcdef01"},
                                  {"insertTime", "2026-12-03T03:00:00.000-08:00"},
                                  {"statusMessage", "Instance was preempted."}}}}});
  // The first byte picks the status: ' ' 409, '\t' 404, '\n' 429, '\r' 412.
  for (auto [status, reason, first] : {std::tuple<int, const char*, const char*>{409, "alreadyExists", " "},
                                       {404, "notFound", "\t"},
                                       {412, "conditionNotMet", "\r"},
                                       {429, "rateLimitExceeded", "\n"},
                                       {400, "resourceNotReady", ""}})
    gce(std::string("error-") + reason,
        {{"error",
          {{"code", status},
           {"message", std::string("The resource is ") + reason},
           {"errors", {{{"message", "fuzz"}, {"domain", "global"}, {"reason", reason}}}}}}},
        first);
  // Ending in '\r': a key file whose token endpoint answers with the document.
  gce("token", {{"access_token", "ya29.fuzz"}, {"token_type", "Bearer"}, {"expires_in", 3599}}, "", "\r");
  gce("oauth-error", {{"error", "invalid_grant"}, {"error_description", "Invalid JWT Signature."}}, " ", "\r");
}

}  // namespace

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
    auto bindings = plan::make_bindings(files, {}, {"plinth.state.json", true, doc},
                                        "0123456789abcdef0123456789abcdef01234567", false);
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
  write_cloud_seeds(out, write);
  std::printf("wrote %d seed files under %s\n", written, out.c_str());
  return written > 0 ? 0 : 1;
}
