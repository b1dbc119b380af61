// The strict plinth/v1 loader: exact messages, positions and hints for each
// error class, merging of several files, and the Origin of every field.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "engine/blueprint/loader.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::blueprint_loader {

namespace {

const char* kHeader = "apiVersion: plinth/v1\nkind: Blueprint\n";

// Loads `body` after the two header lines (so body line 1 is file line 3).
bp::LoadResult load(const std::string& body) { return bp::load_string(kHeader + body, "t.yaml"); }

// The only diagnostic, checked field by field.
void require_one(const bp::LoadResult& r, const std::string& code, int line, int col, const std::string& message,
                 const std::string& hint) {
  INFO(diagnostics_text(r.diagnostics));
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  CHECK(d.code == code);
  CHECK(d.severity == Severity::Error);
  CHECK(d.loc == SourceLoc{"t.yaml", line, col});
  CHECK(d.message == message);
  CHECK(d.hint == hint);
}

const std::string kStack = "stacks:\n  train: {driver: \"550.54.15\", cuda: \"12.4\"}\n";  // lines 3-4

}  // namespace

TEST_CASE("a minimal blueprint loads with defaults and field origins", "[blueprint][loader]") {
  auto r = load(kStack + R"(storage:
  tiers:
    - {name: hot, kind: nvme, encryption: {at_rest: aes-256-xts}}
node_pools:
  - name: a
    count: 2
    hardware: {gpu: H100-80GB, gpus_per_node: 8}
    stack: train
    storage: [hot]
    mig: {profile: "3g.40gb", instances: 2}
)");
  INFO(diagnostics_text(r.diagnostics));
  REQUIRE(r.ok());
  REQUIRE(r.diagnostics.empty());
  const bp::NodePool& p = r.blueprint.node_pools.at(0);
  CHECK(p.provider == "baremetal");
  CHECK(p.role == "training");
  CHECK(p.count == 2);
  CHECK(p.hardware.gpus_per_node == 8);
  CHECK(p.mig.profile == "3g.40gb");
  CHECK(p.mig.instances == 2);
  CHECK(p.origin.loc == SourceLoc{"t.yaml", 9, 5});
  CHECK(p.origin.at("name") == SourceLoc{"t.yaml", 9, 11});
  CHECK(p.origin.at("hardware") == SourceLoc{"t.yaml", 11, 15});
  CHECK(p.origin.at("hardware.gpu") == SourceLoc{"t.yaml", 11, 21});
  CHECK(p.origin.at("storage.0") == SourceLoc{"t.yaml", 13, 15});
  CHECK(p.origin.at("mig.profile") == SourceLoc{"t.yaml", 14, 20});
  CHECK(p.origin.at("bios") == p.origin.loc);  // unset fields fall back to the entity
  const bp::Stack& s = r.blueprint.stacks.at(0);
  CHECK(s.name == "train");
  CHECK(s.origin.loc == SourceLoc{"t.yaml", 4, 3});
  CHECK(s.origin.at("driver") == SourceLoc{"t.yaml", 4, 19});
  const bp::StorageTier& t = r.blueprint.tiers.at(0);
  REQUIRE(t.encryption);
  CHECK(t.encryption->at_rest == "aes-256-xts");
  CHECK(t.origin.at("encryption.at_rest") == SourceLoc{"t.yaml", 7, 53});
  CHECK(r.blueprint.find_tier("hot") == &t);
  REQUIRE(r.blueprint.files.size() == 1);
  CHECK(r.blueprint.files[0].path == "t.yaml");
  CHECK(r.blueprint.files[0].sha256.size() == 64);
}

TEST_CASE("BP000: a missing file or directory", "[blueprint][loader]") {
  Diagnostics d;
  auto files = bp::collect_blueprint_files({"no/such/dir"}, d);
  CHECK(files.empty());
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "BP000");
  CHECK(d[0].message == "no such file or directory: no/such/dir");

  auto r = bp::load_files({"no/such/file.yaml"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "BP000");
  CHECK(r.diagnostics[0].loc.file == "no/such/file.yaml");
  CHECK_FALSE(r.ok());
}

TEST_CASE("collect_blueprint_files takes a directory's YAML files, sorted, skipping waivers", "[blueprint][loader]") {
  test::TempDir dir;
  dir.write("b.yaml", "x");
  dir.write("a.yml", "x");
  dir.write("waivers.yaml", "x");
  dir.write("plinth.state.yaml", "x");
  dir.write("notes.txt", "x");
  dir.write("sub/c.yaml", "x");
  Diagnostics d;
  auto files = bp::collect_blueprint_files({dir.path(), "blueprints/examples/lab.yaml"}, d);
  CHECK(d.empty());
  REQUIRE(files.size() == 3);
  CHECK(files[0] == dir.path() + "/a.yml");
  CHECK(files[1] == dir.path() + "/b.yaml");
  CHECK(files[2] == "blueprints/examples/lab.yaml");

  test::TempDir empty;
  bp::collect_blueprint_files({empty.path()}, d);
  REQUIRE(d.size() == 1);
  CHECK(d[0].message == "no blueprint files (*.yaml, *.yml) in directory " + empty.path());
}

TEST_CASE("BP001: YAML syntax errors are diagnostics with a position", "[blueprint][loader]") {
  auto r = load("metadata: {name: x\nstacks: {}\n");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "BP001");
  CHECK(r.diagnostics[0].message == "YAML syntax error: end of map flow not found");
  CHECK(r.diagnostics[0].loc.line == 4);
  CHECK(r.diagnostics[0].loc.column == 7);

  auto tab = bp::load_string("apiVersion: plinth/v1\n\tkind: Blueprint\n", "t.yaml");
  REQUIRE(tab.diagnostics.size() == 1);
  CHECK(tab.diagnostics[0].code == "BP001");
}

TEST_CASE("BP001: a value or key that is not valid UTF-8 stops the load at its first bad byte", "[blueprint][loader]") {
  // Found by fuzz_blueprint (tests/fuzz/regressions/fuzz_blueprint): such a
  // value used to load and then fail every plan with json type_error.316.
  const std::string hint = "save the file as UTF-8 (e.g. iconv -f LATIN1 -t UTF-8), or remove the stray bytes";
  require_one(load("metadata: {name: caf\xe9, owner: x}\n"), "BP001", 3, 21,
              "the file is not valid UTF-8: byte 0xe9 is not part of a valid UTF-8 sequence", hint);
  require_one(load("metadata:\n  \xff\xfe: x\n"), "BP001", 4, 3,
              "the file is not valid UTF-8: byte 0xff is not part of a valid UTF-8 sequence", hint);
  auto escaped = load("metadata: {name: \"caf\\u00e9\", owner: x}\n");  // a valid escape is fine
  for (const auto& d : escaped.diagnostics) CHECK(d.code != "BP001");
}

TEST_CASE("BP001: text yaml-cpp reads as endless empty documents stops at the first repeat", "[blueprint][loader]") {
  // Found by fuzz_blueprint (regressions/fuzz_blueprint/endless-documents.yaml): the
  // loader asked yaml-cpp for the next document forever, holding 1.5 GB after 10 s.
  auto r = bp::load_string(", cidr# x\nnetworks:\n  vlans: []\n", "t.yaml");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "BP001");
  CHECK(r.diagnostics[0].message == "YAML syntax error: the parser cannot read past this point");
  CHECK(r.diagnostics[0].loc == SourceLoc{"t.yaml", 1, 1});
}

TEST_CASE("BP002: unknown keys with did-you-mean", "[blueprint][loader]") {
  require_one(load("stacks:\n  train:\n    driver: \"550.54.15\"\n    cuda_version: \"12.4\"\n"), "BP002", 6, 5,
              "unknown key 'cuda_version' in stack 'train'", "did you mean 'cuda'?");
  require_one(load("metadata: {name: x, ownr: me}\n"), "BP002", 3, 21, "unknown key 'ownr' in metadata",
              "did you mean 'owner'?");
  require_one(load("networks:\n  vlan: []\n"), "BP002", 4, 3, "unknown key 'networks.vlan' in the blueprint",
              "did you mean 'vlans'?");
  require_one(load(kStack + "node_pools:\n  - {name: a, count: 1, stack: train, hardware: {gpu: L4, gpus_per_node: 1, "
                            "ram_gb: 64}}\n"),
              "BP002", 6, 77, "unknown key 'hardware.ram_gb' in node pool 'a'",
              "expected one of: gpu, gpus_per_node, cpu_cores, memory_gb, rdma_nics");
  require_one(load("nodepools: []\n"), "BP002", 3, 1, "unknown key 'nodepools' in the blueprint",
              "did you mean 'node_pools'?");
}

TEST_CASE("BP003: wrong types name the expected type", "[blueprint][loader]") {
  const std::string pool = kStack + "node_pools:\n  - name: a\n    hardware: {gpu: L4, gpus_per_node: 1}\n    stack: train\n";
  require_one(load(pool + "    count: \"two\"\n"), "BP003", 9, 12,
              "'count' in node pool 'a' must be an integer, not \"two\"",
              "write a whole number without quotes, e.g. 4");
  require_one(load(pool + "    count: \"2\"\n"), "BP003", 9, 12,
              "'count' in node pool 'a' must be an integer, not \"2\"", "write a whole number without quotes, e.g. 4");
  require_one(load(pool + "    count: 1\n    networks: {ml: true}\n"), "BP003", 10, 15,
              "'networks' in node pool 'a' must be a list, not a map",
              "write a YAML list: [a, b] or one '- item' per line");
  require_one(load(pool + "    count: 1\n    largest_model_gb: big\n"), "BP003", 10, 23,
              "'largest_model_gb' in node pool 'a' must be a number, not \"big\"",
              "write a number without quotes, e.g. 12.5");
  require_one(load("monitoring: {dcgm: yes please}\n"), "BP003", 3, 20,
              "'dcgm' in monitoring must be a boolean, not \"yes please\"", "write true or false without quotes");
  require_one(load("node_pools: {a: 1}\n"), "BP003", 3, 13, "'node_pools' in the blueprint must be a list, not a map",
              "write a YAML list: [a, b] or one '- item' per line");
  require_one(load("stacks:\n  train: [a]\n"), "BP003", 4, 3, "stack 'train' must be a map, not a list",
              "write a YAML map of 'key: value' pairs");
  require_one(load(kStack + "node_pools:\n  - name: a\n    count: 1\n    stack: train\n    hardware: 8\n"), "BP003",
              9, 15, "'hardware' in node pool 'a' must be a map, not \"8\"", "write a YAML map of 'key: value' pairs");
  require_one(load("metadata: {name: x, compliance: [soc2, [hipaa]]}\n"), "BP003", 3, 40,
              "'compliance[1]' in metadata must be a string, not a list",
              "write a single value; quote it if it contains ':' or '#'");
}

TEST_CASE("BP004: missing required fields point at the entity", "[blueprint][loader]") {
  require_one(load(kStack + "node_pools:\n  - name: a\n    count: 1\n    hardware: {gpu: L4, gpus_per_node: 1}\n"),
              "BP004", 6, 5, "missing required field 'stack' in node pool 'a'", "add 'stack:' (see docs/blueprint.md)");
  require_one(load(kStack + "node_pools:\n  - {name: a, count: 1, stack: train, hardware: {gpus_per_node: 1}}\n"),
              "BP004", 6, 49, "missing required field 'hardware.gpu' in node pool 'a'",
              "add 'gpu:' (see docs/blueprint.md)");
  require_one(load("networks:\n  vlans:\n    - {id: 10, cidr: 10.0.0.0/24}\n"), "BP004", 5, 7,
              "missing required field 'name' in VLAN #1", "add 'name:' (see docs/blueprint.md)");
  auto r = bp::load_string("metadata: {name: x}\n", "t.yaml");
  REQUIRE(r.diagnostics.size() == 2);
  CHECK(r.diagnostics[0].message == "missing required field 'apiVersion' in the blueprint");
  CHECK(r.diagnostics[1].message == "missing required field 'kind' in the blueprint");
  CHECK(r.diagnostics[0].loc == SourceLoc{"t.yaml", 1, 1});
  auto empty = bp::load_string("# nothing here\n", "t.yaml");
  REQUIRE(empty.diagnostics.size() == 1);
  CHECK(empty.diagnostics[0].code == "BP004");
  CHECK(empty.diagnostics[0].message == "the file is empty: missing required fields 'apiVersion' and 'kind'");
}

TEST_CASE("BP005: invalid values and enumerations with hints", "[blueprint][loader]") {
  const std::string pool = kStack + "node_pools:\n  - {name: a, count: 1, stack: train, hardware: {gpu: L4, gpus_per_node: 1}, ";
  require_one(load(pool + "role: trainign}\n"), "BP005", 6, 84,
              "invalid role 'trainign' in node pool 'a' (expected one of: training, inference, preprocessing)",
              "did you mean 'training'?");
  require_one(load(pool + "boot: {method: usb}}\n"), "BP005", 6, 93,
              "invalid boot.method 'usb' in node pool 'a' (expected one of: pxe, uefi-http, virtual-media)",
              "expected one of: pxe, uefi-http, virtual-media");
  require_one(load(pool + "provider: aws}\n"), "BP005", 6, 88,
              "provider 'aws' does not serve node_pools (node pool 'a')",
              "provider aws serves burst_pools: move the pool there");
  require_one(load(kStack + "node_pools:\n  - {name: a, count: -1, stack: train, hardware: {gpu: L4, gpus_per_node: 1}}\n"),
              "BP005", 6, 22, "'count' in node pool 'a' must be at least 0, not -1",
              "use a value of 0 or more");
  require_one(load("storage:\n  tiers: [{name: t, kind: nvme, classification: secret}]\n"), "BP005", 4, 49,
              "invalid classification 'secret' in storage tier 't' (expected one of: public, internal, confidential, "
              "pii, phi)",
              "expected one of: public, internal, confidential, pii, phi");
  require_one(load("networks:\n  fabrics: [{name: f, kind: infiniband, oversubscription: fast}]\n"), "BP005", 4, 59,
              "invalid oversubscription 'fast' in fabric 'f' (expected a ratio such as \"1:1\")",
              "write it quoted as downlink:uplink, e.g. oversubscription: \"2:1\"");
  require_one(load("networks:\n  fabrics: [{name: f, kind: roce}]\n"), "BP005", 4, 29,
              "invalid kind 'roce' in fabric 'f' (expected one of: infiniband, roce-v2, ethernet)",
              "did you mean 'roce-v2'?");
  require_one(load("networks:\n  vlans: [{name: \"ml fabric\", id: 1, cidr: 10.0.0.0/24}]\n"), "BP005", 4, 18,
              "invalid name 'ml fabric' for VLAN #1",
              "use letters, digits, '-', '_' and '.', starting with a letter or digit (at most 63 characters)");
  require_one(load(kStack + "burst_pools:\n  - {name: b, provider: gcp, region: r, instance_type: a3-highgpu-8g, stack: "
                            "train, desired: 5, max: 2}\n"),
              "BP005", 6, 94, "'desired' (5) exceeds 'max' (2) in burst pool 'b'", "lower desired or raise max");
  require_one(load("storage:\n  tiers: [{name: t, kind: nvme}, {name: u, kind: object}]\n  backups: [{name: b, "
                   "source: t, target: u, schedule: daily, retention_days: 7}]\n"),
              "BP005", 5, 55, "invalid schedule 'daily' in backup 'b' (expected a cron expression with 5 fields)",
              "write minute hour day-of-month month day-of-week, e.g. \"0 */6 * * *\", or @daily");
}

TEST_CASE("BP006: duplicate names say where the first one is", "[blueprint][loader]") {
  require_one(load("networks:\n  vlans:\n    - {name: v, id: 1, cidr: 10.0.0.0/24}\n    - {name: v, id: 2, cidr: "
                   "10.0.1.0/24}\n"),
              "BP006", 6, 14, "duplicate VLAN 'v': the first is at t.yaml:5:14",
              "names must be unique within networks.vlans; rename one of them");
  require_one(load("stacks:\n  s: {driver: \"1\", cuda: \"1\"}\n  s: {driver: \"1\", cuda: \"1\"}\n"), "BP006", 5, 3,
              "duplicate stack 's': the first is at t.yaml:4:3", "names must be unique within stacks; rename one of them");
  // Node pools and burst pools share one namespace (render --pool NAME, checkpoints).
  require_one(load(kStack + "node_pools:\n  - {name: p, count: 1, stack: train, hardware: {gpu: L4, gpus_per_node: 1}}\n"
                            "burst_pools:\n  - {name: p, provider: aws, region: us-east-1, instance_type: g6.xlarge, "
                            "stack: train}\n"),
              "BP006", 8, 12, "duplicate burst pool 'p': the first is at t.yaml:6:12 (a node pool)",
              "names must be unique within node_pools and burst_pools together; rename one of them");
}

TEST_CASE("BP007: dangling references with did-you-mean", "[blueprint][loader]") {
  const std::string base = kStack + R"(networks:
  vlans: [{name: ml-fabric, id: 100, cidr: 10.100.0.0/16}]
  fabrics: [{name: ib, kind: infiniband}]
storage:
  tiers: [{name: hot, kind: nvme}, {name: cold, kind: object, lifecycle: {transition_from: hto, after_days: 3}}]
  backups: [{name: b, source: hot, target: colt, schedule: "0 * * * *", retention_days: 7}]
access:
  namespaces: [{name: team-vision}]
  roles: [{name: r, subjects: ["group:g"], namespaces: [team-visoin], verbs: [get], resources: [pods]}]
node_pools:
  - name: a
    count: 1
    hardware: {gpu: L4, gpus_per_node: 1}
    stack: trian
    fabric: ibb
    networks: [ml-fabric, ml-fabirc]
    storage: [hott]
burst_pools:
  - {name: b, provider: aws, region: eu-west-1, instance_type: p5.48xlarge, stack: train,
     checkpointing: {interval_minutes: 30, target: gold}}
)";
  auto r = load(base);
  INFO(diagnostics_text(r.diagnostics));
  REQUIRE(r.diagnostics.size() == 8);
  auto check = [&](size_t i, int line, int col, const std::string& message, const std::string& hint) {
    const Diagnostic& d = r.diagnostics[i];
    CHECK(d.code == "BP007");
    CHECK(d.loc == SourceLoc{"t.yaml", line, col});
    CHECK(d.message == message);
    CHECK(d.hint == hint);
  };
  check(0, 9, 92, "storage tier 'cold' references unknown storage tier 'hto'", "did you mean 'hot'?");
  check(1, 10, 44, "backup 'b' references unknown storage tier 'colt'", "did you mean 'cold'?");
  check(2, 13, 57, "role 'r' references unknown namespace 'team-visoin'", "did you mean 'team-vision'?");
  check(3, 18, 12, "node pool 'a' references unknown stack 'trian'", "did you mean 'train'?");
  check(4, 19, 13, "node pool 'a' references unknown fabric 'ibb'", "did you mean 'ib'?");
  check(5, 20, 27, "node pool 'a' references unknown VLAN 'ml-fabirc'", "did you mean 'ml-fabric'?");
  check(6, 21, 15, "node pool 'a' references unknown storage tier 'hott'", "did you mean 'hot'?");
  check(7, 24, 52, "burst pool 'b' references unknown storage tier 'gold'", "did you mean 'cold'?");

  // Nothing of that kind defined at all: say where to define it.
  require_one(load("node_pools:\n  - {name: a, count: 1, stack: train, hardware: {gpu: L4, gpus_per_node: 1}}\n"),
              "BP007", 4, 32, "node pool 'a' references unknown stack 'train'", "define it under stacks:");
}

TEST_CASE("BP008: BMC credentials must be env:NAME or file:PATH, never inline", "[blueprint][loader]") {
  const std::string pool = kStack + "node_pools:\n  - {name: a, count: 2, stack: train, hardware: {gpu: L4, "
                                    "gpus_per_node: 1},\n     bmc: {endpoints: \"https://bmc-{index}\", credentials: ";
  auto r = load(pool + "\"root:calvin\"}}\n");
  require_one(r, "BP008", 7, 59,
              "'bmc.credentials' in node pool 'a' looks like an inline user:password; blueprints must not hold secrets",
              "move the secret to an environment variable and write credentials: env:BMC_CREDENTIALS (or keep it in a "
              "file and write credentials: file:/path/to/secret)");
  CHECK(r.diagnostics[0].message.find("calvin") == std::string::npos);  // never echo a secret
  CHECK(r.blueprint.node_pools.at(0).bmc->credentials.empty());
  require_one(load(pool + "\"env:1BAD\"}}\n"), "BP008", 7, 59,
              "'bmc.credentials' in node pool 'a' names an invalid environment variable '1BAD'",
              "write env:NAME with letters, digits and '_', e.g. env:BMC_CREDENTIALS");
  require_one(load(pool + "\"file:\"}}\n"), "BP008", 7, 59, "'bmc.credentials' in node pool 'a' has an empty file path",
              "write file:PATH naming a file that holds \"user:password\"");
  auto ok = load(pool + "env:BMC_CREDS}}\n");
  CHECK(ok.diagnostics.empty());
  CHECK(ok.blueprint.node_pools.at(0).bmc->endpoints == std::vector<std::string>{"https://bmc-{index}"});
  auto list = load(kStack + "node_pools:\n  - {name: a, count: 2, stack: train, hardware: {gpu: L4, gpus_per_node: 1},"
                            "\n     bmc: {endpoints: [\"https://10.0.0.1\"], credentials: file:/etc/bmc}}\n");
  require_one(list, "BP005", 7, 23, "'bmc.endpoints' in node pool 'a' lists 1 endpoint(s) for 2 node(s)",
              "list exactly one endpoint per node, or use a template with {index}");
}

TEST_CASE("BP009: apiVersion and kind", "[blueprint][loader]") {
  auto r = bp::load_string("apiVersion: plinth/v2\nkind: blueprint\n", "t.yaml");
  REQUIRE(r.diagnostics.size() == 2);
  CHECK(r.diagnostics[0].code == "BP009");
  CHECK(r.diagnostics[0].loc == SourceLoc{"t.yaml", 1, 13});
  CHECK(r.diagnostics[0].message == "unsupported apiVersion 'plinth/v2'");
  CHECK(r.diagnostics[0].hint == "this version of plinth reads 'apiVersion: plinth/v1'");
  CHECK(r.diagnostics[1].loc == SourceLoc{"t.yaml", 2, 7});
  CHECK(r.diagnostics[1].message == "unsupported kind 'blueprint'");
  CHECK(r.diagnostics[1].hint == "did you mean 'Blueprint'?");
}

TEST_CASE("BP010: a key repeated in one map", "[blueprint][loader]") {
  require_one(load("monitoring:\n  dcgm: true\n  dcgm: false\n"), "BP010", 5, 3,
              "duplicate key 'dcgm' in monitoring: the first is at t.yaml:4:3",
              "remove one of them; YAML keeps only one value per key");
}

TEST_CASE("every error of every file is reported in one run, sorted by position", "[blueprint][loader]") {
  auto r = load(R"(metadata: {name: x, ownr: y}
stacks:
  s: {driver: 1}
node_pools:
  - {name: a, count: many, hardware: {gpu: L4, gpus_per_node: 1}, stack: t}
  - {name: a, count: 1, hardware: {gpu: L4, gpus_per_node: 1}, stack: s, role: batch}
)");
  std::vector<std::string> codes;
  for (const auto& d : r.diagnostics) codes.push_back(d.code + "@" + std::to_string(d.loc.line));
  CHECK(codes == std::vector<std::string>{"BP002@3", "BP004@5", "BP003@7", "BP007@7", "BP006@8", "BP005@8"});
}

TEST_CASE("several files merge into one blueprint, duplicates across files name the first file",
          "[blueprint][loader]") {
  const std::string h = kHeader;
  auto r = bp::load_strings({
      {"base.yaml", h + "metadata: {name: m}\n" + kStack + "storage:\n  tiers: [{name: hot, kind: nvme}]\n"},
      {"pools.yaml", h + "node_pools:\n  - {name: a, count: 1, stack: train, storage: [hot], hardware: {gpu: L4, "
                         "gpus_per_node: 1}}\n"},
  });
  INFO(diagnostics_text(r.diagnostics));
  CHECK(r.diagnostics.empty());  // references resolve across files
  CHECK(r.blueprint.metadata.name == "m");
  CHECK(r.blueprint.node_pools.size() == 1);
  REQUIRE(r.blueprint.files.size() == 2);
  CHECK(r.blueprint.files[1].path == "pools.yaml");
  CHECK(r.blueprint.node_pools[0].origin.loc.file == "pools.yaml");

  auto dup = bp::load_strings({
      {"a.yaml", h + "metadata: {name: m}\n" + kStack},
      {"b.yaml", h + "metadata: {name: n}\nstacks:\n  train: {driver: \"550.54.15\", cuda: \"12.4\"}\n"},
  });
  INFO(diagnostics_text(dup.diagnostics));
  REQUIRE(dup.diagnostics.size() == 2);
  CHECK(dup.diagnostics[0].code == "BP006");
  CHECK(dup.diagnostics[0].loc == SourceLoc{"b.yaml", 3, 1});
  CHECK(dup.diagnostics[0].message == "metadata is defined twice: the first is at a.yaml:3:1");
  CHECK(dup.diagnostics[1].loc == SourceLoc{"b.yaml", 5, 3});
  CHECK(dup.diagnostics[1].message == "duplicate stack 'train': the first is at a.yaml:5:3");
  CHECK(dup.blueprint.metadata.name == "m");
  CHECK(dup.blueprint.stacks.size() == 1);
}

TEST_CASE("load_files merges the example directory", "[blueprint][loader]") {
  Diagnostics d;
  auto files = bp::collect_blueprint_files({"blueprints/examples"}, d);
  REQUIRE(d.empty());
  REQUIRE(files.size() == 3);
  auto r = bp::load_files(files);
  // The three examples are separate blueprints: merged, their metadata clashes.
  REQUIRE_FALSE(r.ok());
  for (const auto& x : r.diagnostics) CHECK(x.code == "BP006");
}

// One file per loader error class in blueprints/invalid/bp-*.yaml; the first
// diagnostic of each is pinned here, and every such file must be listed.
TEST_CASE("each blueprints/invalid/bp-*.yaml fails with its error class first", "[blueprint][loader][invalid]") {
  struct Case {
    const char* file;
    const char* code;
    int line, col;
    const char* message;
  };
  const std::vector<Case> cases{
      {"bp-yaml-syntax.yaml", "BP001", 5, 7, "YAML syntax error: end of map flow not found"},
      {"bp-unknown-key.yaml", "BP002", 8, 5, "unknown key 'cuda_version' in stack 'train'"},
      {"bp-wrong-type.yaml", "BP003", 9, 12, "'count' in node pool 'train-a' must be an integer, not \"two\""},
      {"bp-missing-field.yaml", "BP004", 6, 5, "missing required field 'stack' in node pool 'train-a'"},
      {"bp-invalid-value.yaml", "BP005", 8, 13,
       "invalid kind 'nvm' in storage tier 'hot' (expected one of: nvme, parallel-fs, nfs, object)"},
      {"bp-duplicate-name.yaml", "BP006", 8, 14,
       "duplicate VLAN 'ml-fabric': the first is at blueprints/invalid/bp-duplicate-name.yaml:7:14"},
      {"bp-dangling-reference.yaml", "BP007", 11, 12, "node pool 'train-a' references unknown stack 'trian'"},
      {"bp-inline-credentials.yaml", "BP008", 14, 20,
       "'bmc.credentials' in node pool 'train-a' looks like an inline user:password; blueprints must not hold secrets"},
      {"bp-api-version.yaml", "BP009", 2, 13, "unsupported apiVersion 'plinth/v2'"},
      {"bp-duplicate-key.yaml", "BP010", 12, 5,
       "duplicate key 'count' in node pool 'train-a': the first is at blueprints/invalid/bp-duplicate-key.yaml:9:5"},
      {"bp-bmc-endpoint.yaml", "BP011", 13, 18,
       "BMC endpoint 'http://bmc-{index}.dc1.example' in node pool 'train-a' uses plain http: the BMC user and "
       "password would be sent in clear text"},
  };
  std::set<std::string> listed;
  for (const Case& c : cases) {
    std::string path = std::string("blueprints/invalid/") + c.file;
    INFO(path);
    listed.insert(c.file);
    auto r = bp::load_files({path});
    INFO(diagnostics_text(r.diagnostics));
    REQUIRE_FALSE(r.diagnostics.empty());
    const Diagnostic& d = r.diagnostics[0];
    CHECK(d.code == c.code);
    CHECK(d.loc == SourceLoc{path, c.line, c.col});
    CHECK(d.message == c.message);
  }
  for (const auto& e : std::filesystem::directory_iterator("blueprints/invalid")) {
    std::string name = e.path().filename().string();
    if (name.rfind("bp-", 0) == 0) CHECK(listed.count(name) == 1);
  }
}

TEST_CASE("the GPU-domain fields load with their origins", "[blueprint][loader]") {
  auto r = load(R"(stacks:
  train: {driver: "570.133.20", cuda: "12.8", kernel_modules: open, container_toolkit: "1.17.8", cuda_compat: true, precision: bf16}
networks:
  fabrics:
    - {name: ib, kind: infiniband, rdma_stack: inbox}
storage:
  tiers:
    - {name: shared, kind: parallel-fs, backend: lustre, export: "10.0.0.1@o2ib:/fs", mount_point: /lustre}
    - {name: eu, kind: object, backend: s3, region: us-east-1, classification: pii, transfer: {basis: scc, reference: "DPA 7"}}
node_pools:
  - name: a
    count: 2
    hardware: {gpu: B200, gpus_per_node: 8, rdma_nics: 8}
    largest_model: {params_b: 70, precision: bf16, training: lora}
    interfaces: {bond: [eno1, eno2], rdma: ["ibp*"]}
    os: rocky-9
    stack: train
    fabric: ib
    storage: [shared]
    mig: {profiles: {"3g.90gb": 1, "1g.23gb": 2}}
burst_pools:
  - {name: c, provider: aws, region: us-east-1, instance_type: p6-b200.48xlarge, stack: train, os: ubuntu-24.04,
     transfer: {basis: adequacy}}
)");
  INFO(diagnostics_text(r.diagnostics));
  REQUIRE(r.ok());
  REQUIRE(r.diagnostics.empty());
  const auto& s = r.blueprint.stacks.at(0);
  CHECK(s.kernel_modules == "open");
  CHECK(s.container_toolkit == "1.17.8");
  CHECK(s.cuda_compat);
  CHECK(s.precision == "bf16");
  CHECK(r.blueprint.fabrics.at(0).rdma_stack == "inbox");
  const auto& t = r.blueprint.tiers.at(0);
  CHECK(t.remote == "10.0.0.1@o2ib:/fs");
  CHECK(t.mount_point == "/lustre");
  CHECK(r.blueprint.tiers.at(1).transfer == bp::Transfer{"scc", "DPA 7"});
  const auto& p = r.blueprint.node_pools.at(0);
  CHECK(p.hardware.rdma_nics == 8);
  REQUIRE(p.largest_model);
  CHECK(*p.largest_model == bp::ModelSize{70, "bf16", "lora"});
  REQUIRE(p.interfaces);
  CHECK(p.interfaces->bond == std::vector<std::string>{"eno1", "eno2"});
  CHECK(p.interfaces->rdma == std::vector<std::string>{"ibp*"});
  CHECK(p.os == "rocky-9");
  CHECK(p.mig.enabled());
  CHECK(p.mig.profiles == std::vector<std::pair<std::string, int>>{{"3g.90gb", 1}, {"1g.23gb", 2}});
  CHECK(p.origin.at("mig.profiles.1g.23gb").line == 22);
  CHECK(p.origin.at("largest_model").line == 16);
  CHECK(r.blueprint.burst_pools.at(0).os == "ubuntu-24.04");
  CHECK(r.blueprint.burst_pools.at(0).transfer == bp::Transfer{"adequacy", ""});
  CHECK(bp::operating_system(p) == "rocky-9");
  CHECK(bp::rdma_stack(r.blueprint.fabrics.at(0), "ubuntu-22.04") == "inbox");
}

TEST_CASE("the OS comes from os:, else the boot image's name, else Ubuntu 22.04", "[blueprint][loader]") {
  CHECK(bp::os_from_image("http://pxe.example/rocky-9.4-ml.iso") == "rocky-9");
  CHECK(bp::os_from_image("https://img.example/RHEL-8.10-x86_64.qcow2") == "rhel-8");
  CHECK(bp::os_from_image("http://pxe/ubuntu-24.04/") == "ubuntu-24.04");
  CHECK(bp::os_from_image("noble-server-cloudimg-amd64.img") == "ubuntu-24.04");
  CHECK(bp::os_from_image("http://pxe/jammy/") == "ubuntu-22.04");
  CHECK(bp::os_from_image("http://pxe/") == "");
  CHECK(bp::os_from_image("http://pxe.example/rocky-9.4/vmlinuz") == "rocky-9");
  CHECK(bp::os_from_image("http://rhel9-mirror.example/ubuntu-22.04/") == "ubuntu-22.04");  // the host is not the image
  bp::NodePool p;
  CHECK(bp::operating_system(p) == "ubuntu-22.04");
  p.boot = bp::Boot{"pxe", "http://pxe.example/rocky-9.4/"};
  CHECK(bp::operating_system(p) == "rocky-9");
  p.os = "ubuntu-24.04";
  CHECK(bp::operating_system(p) == "ubuntu-24.04");
  bp::Fabric ib;
  ib.kind = "infiniband";
  CHECK(bp::rdma_stack(ib, "ubuntu-22.04") == "doca-ofed");
  CHECK(bp::rdma_stack(ib, "rhel-9") == "inbox");
}

TEST_CASE("the GPU-domain fields reject what cannot work", "[blueprint][loader]") {
  auto msg = [](const bp::LoadResult& r) {
    INFO(diagnostics_text(r.diagnostics));
    REQUIRE(r.diagnostics.size() == 1);
    return r.diagnostics[0].message;
  };
  CHECK(msg(load("storage:\n  tiers:\n    - {name: hot, kind: nvme, export: \"x:/y\"}\n")) ==
        "'export' in storage tier 'hot' applies to nfs and parallel-fs tiers, not nvme");
  CHECK(msg(load("storage:\n  tiers:\n    - {name: n, kind: nfs, export: \"x:/y\", mount_point: mnt/n}\n")) ==
        "'mount_point' in storage tier 'n' must be an absolute path, not 'mnt/n'");
  CHECK(msg(load("networks:\n  fabrics:\n    - {name: e, kind: ethernet, rdma_stack: inbox}\n")) ==
        "'rdma_stack' in fabric 'e' applies to infiniband and roce-v2 fabrics");
  const std::string pool = kStack + "node_pools:\n  - name: a\n    count: 1\n    hardware: {gpu: H100-80GB, gpus_per_node: 8}\n"
                                    "    stack: train\n";
  CHECK(msg(load(pool + "    largest_model: {params_b: 70, precision: bf16}\n    largest_model_gb: 140\n")) ==
        "node pool 'a' sets both largest_model and largest_model_gb");
  CHECK(msg(load(pool + "    largest_model: {params_b: 0, precision: bf16}\n")) ==
        "'largest_model.params_b' in node pool 'a' must be above 0");
  CHECK(msg(load(pool + "    interfaces: {bond: [eno1], rdma: [eno1]}\n")) ==
        "interface 'eno1' of node pool 'a' is both bonded and an RDMA rail");
  CHECK(msg(load(pool + "    interfaces: {bond: [\"eno1; reboot\"]}\n")) ==
        "interface 'eno1; reboot' in node pool 'a' is not an interface name or glob");
  CHECK(msg(load(pool + "    mig: {profile: \"3g.40gb\", layout: all-balanced}\n")) ==
        "'mig' in node pool 'a' sets more than one of profile, layout and profiles");
  CHECK(msg(load(pool + "    mig: {profiles: {\"3g.40gb\": 0}}\n")) ==
        "'mig.profiles.3g.40gb' in node pool 'a' must be a count of instances per GPU, not \"0\"");
  CHECK(msg(load(pool + "    os: debian-12\n")) ==
        "invalid os 'debian-12' in node pool 'a' (expected one of: ubuntu-22.04, ubuntu-24.04, rhel-8, rhel-9, rocky-8, rocky-9)");
  CHECK(msg(load(pool + "    imex: {nodes: [10.100.1.11, \"10.100.1.12; reboot\"]}\n")) ==
        "IMEX node '10.100.1.12; reboot' in node pool 'a' is not an IPv4 address");
  CHECK(msg(load(pool + "    imex: {nodes: [10.100.1.11, 10.100.1.11]}\n")) == "IMEX node 10.100.1.11 is listed twice in node pool 'a'");
  auto ok = load(pool + "    imex: {nodes: [10.100.1.11, 10.100.1.12]}\n");
  REQUIRE(ok.ok());
  REQUIRE(ok.blueprint.node_pools[0].imex);
  CHECK(ok.blueprint.node_pools[0].imex->nodes == std::vector<std::string>{"10.100.1.11", "10.100.1.12"});
}

TEST_CASE("YAML merge keys merge the named maps under the map's own keys", "[blueprint][loader][merge]") {
  auto r = bp::load_string(R"(apiVersion: plinth/v1
kind: Blueprint
x-base: &base {driver: "550.54.15", cuda: "12.4"}
x-more: &more {cuda: "12.2", cudnn: "9.1.0"}
stacks:
  a: {<<: *base}
  b:
    <<: [*base, *more]
    driver: "560.35.03"
)", "m.yaml");
  INFO(diagnostics_text(r.diagnostics));
  REQUIRE(r.ok());
  REQUIRE(r.blueprint.stacks.size() == 2);
  CHECK(r.blueprint.stacks[0].cuda == "12.4");
  CHECK(r.blueprint.stacks[1].driver == "560.35.03");  // its own key wins
  CHECK(r.blueprint.stacks[1].cuda == "12.4");         // the first merged map wins over the second
  CHECK(r.blueprint.stacks[1].cudnn == "9.1.0");
  // A merged field keeps the position where it was written (the anchor's map).
  CHECK(r.blueprint.stacks[0].origin.at("cuda") == SourceLoc{"m.yaml", 3, 43});
}

TEST_CASE("a quoted '<<' is a key like any other, and unknown", "[blueprint][loader][merge]") {
  auto r = bp::load_string("apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: x, \"<<\": y}\n", "q.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.diagnostics[0].code == "BP002");
}

TEST_CASE("integers above their limit name the limit, huge ones too", "[blueprint][loader][limits]") {
  for (const char* n : {"100001", "2147483648", "99999999999999999999999"}) {
    auto r = bp::load_string(std::string("apiVersion: plinth/v1\nkind: Blueprint\nburst_pools:\n"
                                         "  - {name: b, provider: aws, region: r, instance_type: t, stack: s, desired: ") +
                                 n + "}\n",
                             "l.yaml");
    INFO(n << "\n" << diagnostics_text(r.diagnostics));
    REQUIRE_FALSE(r.ok());
    bool found = false;
    for (const auto& d : r.diagnostics)
      if (d.code == "BP005" && d.message == std::string("'desired' in burst pool 'b' is ") + n +
                                                ", more than the limit of 100000")
        found = true;
    CHECK(found);
  }
}

TEST_CASE("a file that is not UTF-8 is refused at the first bad byte", "[blueprint][loader][utf8]") {
  auto r = bp::load_string("apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: ok, owner: \"ab\xc3\x28\"}\n", "u.yaml");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "BP001");
  CHECK(r.diagnostics[0].loc == SourceLoc{"u.yaml", 3, 32});
  // UTF-8 itself is fine, of course.
  CHECK(bp::load_string("apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: ok, owner: \"équipe ☃\"}\n", "u.yaml").ok());
}

TEST_CASE("outputs: one attribute or several of some pools, each mistake at its place", "[blueprint][loader][outputs]") {
  auto r = load(kStack + R"(node_pools:
  - name: a
    count: 1
    hardware: {gpu: L40S, gpus_per_node: 4}
    stack: train
    bmc: {endpoints: "https://b{index}", credentials: env:B}
outputs:
  ok: {attribute: bmc_endpoint, pools: [a], description: d, sensitive: true}
  many: {attributes: [gpu, serial_number]}
  both: {attribute: x, attributes: [y]}
  none: {description: nothing}
  typo: {attribute: x, pools: [b]}
  empty: {attributes: []}
  bad: {attribute: x, colour: red}
)");
  std::vector<std::string> got;
  for (const auto& d : r.diagnostics)
    got.push_back(d.code + " " + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.column) + " " + d.message +
                  " | " + d.hint);
  CHECK(got == std::vector<std::string>{
                   "BP005 14:36 output 'both' sets both attribute and attributes | write attribute: NAME for one "
                   "value per node, or attributes: [A, B] for an object per node",
                   "BP004 15:3 output 'none' names no attribute | add attribute: NAME (e.g. bmc_endpoint, "
                   "private_ip) or attributes: [A, B]",
                   "BP007 16:32 output 'typo' references unknown pool 'b' | did you mean 'a'?",
                   "BP005 17:23 output 'empty' lists no attributes | name at least one, e.g. [private_ip]",
                   "BP002 18:23 unknown key 'colour' in output 'bad' | expected one of: description, pools, "
                   "attribute, attributes, sensitive"});
  REQUIRE(r.blueprint.outputs.size() >= 2);
  const bp::Output& ok = r.blueprint.outputs[0];
  CHECK(ok.name == "ok");
  CHECK(ok.single);
  CHECK(ok.attributes == std::vector<std::string>{"bmc_endpoint"});
  CHECK(ok.pools == std::vector<std::string>{"a"});
  CHECK(ok.sensitive);
  CHECK(ok.origin.at("pools.0") == SourceLoc{"t.yaml", 12, 41});
  CHECK_FALSE(r.blueprint.outputs[1].single);
}

TEST_CASE("rollout.max_unavailable: nodes or a percentage of the pool, at least 1", "[blueprint][loader][rollout]") {
  auto pool = [](const std::string& rollout) {
    return load(kStack + "node_pools:\n  - name: a\n    count: 8\n    hardware: {gpu: L40S, gpus_per_node: 4}\n"
                         "    stack: train\n    bmc: {endpoints: \"https://b{index}\", credentials: env:B}\n" +
                rollout);
  };
  auto none = pool("");
  REQUIRE(none.ok());
  CHECK_FALSE(none.blueprint.node_pools[0].rollout);
  CHECK(bp::max_unavailable(none.blueprint.node_pools[0]) == 1);
  auto two = pool("    rollout: {max_unavailable: 2}\n");
  REQUIRE(two.ok());
  CHECK(bp::max_unavailable(two.blueprint.node_pools[0]) == 2);
  auto quarter = pool("    rollout: {max_unavailable: \"25%\"}\n");
  REQUIRE(quarter.ok());
  CHECK(bp::max_unavailable(quarter.blueprint.node_pools[0]) == 2);  // 25 % of 8
  auto tiny = pool("    rollout: {max_unavailable: \"5%\"}\n");
  REQUIRE(tiny.ok());
  CHECK(bp::max_unavailable(tiny.blueprint.node_pools[0]) == 1);  // rounded down, at least 1
  require_one(pool("    rollout: {max_unavailable: \"150%\"}\n"), "BP005", 11, 32,
              "'rollout.max_unavailable' in node pool 'a' is '150%', not a percentage from 1% to 100%",
              "write a number of nodes (2) or a percentage of the pool (\"25%\")");
  require_one(pool("    rollout: {max_unavailable: 0}\n"), "BP005", 11, 32,
              "'rollout.max_unavailable' in node pool 'a' must be at least 1, not 0", "use a value of 1 or more");
}

TEST_CASE("bmc_endpoint_problem refuses what would leak the BMC password", "[blueprint][loader][bmc]") {
  CHECK(bp::bmc_endpoint_problem("https://bmc-3.dc1.example") == "");
  CHECK(bp::bmc_endpoint_problem("HTTPS://10.0.0.1:8443/redfish") == "");
  CHECK(bp::bmc_endpoint_problem("http://10.0.0.1").find("uses plain http") != std::string::npos);
  CHECK(bp::bmc_endpoint_problem("10.0.0.1").find("has no scheme") != std::string::npos);
  CHECK(bp::bmc_endpoint_problem("https://:443").find("has no host") != std::string::npos);
  std::string secret = bp::bmc_endpoint_problem("https://root:s3cret@10.0.0.1");
  CHECK(secret.find("holds a user name or password") != std::string::npos);
  CHECK(secret.find("s3cret") == std::string::npos);
}

}  // namespace plinth::test::blueprint_loader

namespace plinth::test::blueprint_loader {

TEST_CASE("metadata records agreements with providers and the DPIA, and says what a bad entry lacks",
          "[blueprint][loader]") {
  auto r = load(R"(metadata:
  name: clinical
  agreements:
    - {provider: aws, kind: baa, reference: "AWS BAA via AWS Artifact"}
    - {provider: gcp, kind: dpa, reference: "Google Cloud DPA"}
  dpia: "DPIA-2026-014"
)");
  INFO(diagnostics_text(r.diagnostics));
  REQUIRE(r.ok());
  REQUIRE(r.blueprint.metadata.agreements.size() == 2);
  CHECK(r.blueprint.metadata.agreements[0] == bp::Agreement{"aws", "baa", "AWS BAA via AWS Artifact"});
  CHECK(r.blueprint.metadata.agreements[1].kind == "dpa");
  CHECK(r.blueprint.metadata.dpia == "DPIA-2026-014");
  CHECK(r.blueprint.metadata.origin.at("agreements.1.reference") == SourceLoc{"t.yaml", 7, 45});

  require_one(load("metadata:\n  name: x\n  agreements:\n    - {provider: aws, kind: nda, reference: r}\n"), "BP005", 6,
              29, "invalid agreements.0.kind 'nda' in agreement #1 (expected one of: baa, dpa)",
              "baa (a HIPAA business associate agreement) or dpa (a GDPR Art. 28 processing agreement)");
  require_one(load("metadata:\n  name: x\n  agreements:\n    - {provider: aws, kind: baa, reference: \"\"}\n"), "BP005",
              6, 45, "empty 'reference' in agreement #1",
              "say where the signed agreement is, e.g. reference: \"AWS BAA via AWS Artifact, accepted 2026-02-10\"");
  auto missing = load("metadata:\n  name: x\n  agreements:\n    - {kind: baa, reference: r}\n");
  REQUIRE(missing.diagnostics.size() == 1);
  CHECK(missing.diagnostics[0].message == "missing required field 'agreements.0.provider' in agreement #1");
  CHECK(missing.blueprint.metadata.agreements.empty());
}

}  // namespace plinth::test::blueprint_loader
