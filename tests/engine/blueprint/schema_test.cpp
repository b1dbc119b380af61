// docs/plinth-v1.schema.json (for editors' YAML language servers) accepts the
// example blueprints and rejects invalid ones, checked with python3-jsonschema.
#include <catch2/catch.hpp>

#include "tests/support/run.h"

namespace plinth::test::blueprint_schema {

namespace {

// Prints one line per schema error: "FILE: PATH: MESSAGE"; exits 0 either way
// so the test can compare the output; exits 3 if the schema itself is invalid.
const char* kValidate = R"(import json, sys, yaml, jsonschema
schema = json.load(open('docs/plinth-v1.schema.json'))
try:
    jsonschema.Draft202012Validator.check_schema(schema)
except jsonschema.SchemaError as e:
    print('schema is invalid:', e.message); sys.exit(3)
v = jsonschema.Draft202012Validator(schema)
for f in sys.argv[1:]:
    for e in sorted(v.iter_errors(yaml.safe_load(open(f))), key=lambda e: list(map(str, e.path))):
        print(f + ': ' + '/'.join(map(str, e.path)) + ': ' + e.message)
)";

test::RunResult validate(const std::vector<std::string>& files) {
  std::vector<std::string> argv{"python3", "-c", kValidate};
  argv.insert(argv.end(), files.begin(), files.end());
  return test::run_program(argv, test::source_dir());
}

}  // namespace

TEST_CASE("the JSON Schema accepts every example blueprint", "[blueprint][schema]") {
  auto r = validate({"blueprints/examples/lab.yaml", "blueprints/examples/cluster.yaml",
                     "blueprints/examples/regulated.yaml", "blueprints/examples/multi-file/base.yaml",
                     "blueprints/examples/multi-file/pools.yaml"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "");
}

TEST_CASE("the JSON Schema rejects what the loader rejects by shape", "[blueprint][schema]") {
  auto r = validate({"blueprints/invalid/bp-unknown-key.yaml", "blueprints/invalid/bp-wrong-type.yaml",
                     "blueprints/invalid/bp-missing-field.yaml", "blueprints/invalid/bp-invalid-value.yaml",
                     "blueprints/invalid/bp-inline-credentials.yaml", "blueprints/invalid/bp-api-version.yaml"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out ==
        "blueprints/invalid/bp-unknown-key.yaml: stacks/train: Additional properties are not allowed "
        "('cuda_version' was unexpected)\n"
        "blueprints/invalid/bp-unknown-key.yaml: stacks/train: 'cuda' is a required property\n"
        "blueprints/invalid/bp-wrong-type.yaml: node_pools/0/count: 'two' is not of type 'integer'\n"
        "blueprints/invalid/bp-missing-field.yaml: node_pools/0: 'stack' is a required property\n"
        "blueprints/invalid/bp-invalid-value.yaml: storage/tiers/0/kind: 'nvm' is not one of ['nvme', "
        "'parallel-fs', 'nfs', 'object']\n"
        "blueprints/invalid/bp-inline-credentials.yaml: node_pools/0/bmc/credentials: 'admin:calvin' does not "
        "match '^(env:[A-Za-z_][A-Za-z0-9_]*|file:.+)$'\n"
        "blueprints/invalid/bp-api-version.yaml: apiVersion: 'plinth/v1' was expected\n");
}

TEST_CASE("the JSON Schema takes each cloud's burst-pool settings and rejects a misspelt one", "[blueprint][schema]") {
  TempDir dir;
  const std::string head = "apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: s}\n"
                           "stacks:\n  train: {driver: \"550.54.15\", cuda: \"12.4\"}\nburst_pools:\n";
  const std::string gcp = dir.write(
      "gcp.yaml", head +
                      "  - name: g\n    provider: gcp\n    region: us-central1\n    zone: us-central1-a\n"
                      "    instance_type: a3-highgpu-8g\n    stack: train\n    image: projects/x/global/images/y\n"
                      "    machine_types: [a3-highgpu-8g]\n    zones: [us-central1-a, us-central1-b]\n"
                      "    termination_action: STOP\n    network: default\n    subnetwork: ml\n"
                      "    boot_disk: {size_gb: 200, type: pd-ssd}\n"
                      "    service_account: {email: sa@p.iam.gserviceaccount.com, scopes: [cloud-platform]}\n"
                      "    labels: {team: ml}\n");
  const std::string aws = dir.write(
      "aws.yaml", head +
                      "  - {name: a, provider: aws, region: us-east-1, instance_type: p5.48xlarge, stack: train,\n"
                      "     placement_grup: true}\n");
  auto r = validate({gcp, aws});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == aws + ": burst_pools/0: Unevaluated properties are not allowed ('placement_grup' was unexpected)\n");
}

}  // namespace plinth::test::blueprint_schema
