#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

#include "engine/blueprint/loader.h"
#include "engine/catalog/catalog.h"
#include "engine/validate/validate.h"

using namespace plinth;

namespace Catch {
template <>
struct StringMaker<SourceLoc> {
  static std::string convert(const SourceLoc& l) { return l.str(); }
};
}  // namespace Catch

namespace {

const catalog::Catalog& cat() {
  static const catalog::Catalog c = catalog::Catalog::load_embedded().value();
  return c;
}

// A clean blueprint; each test changes single lines of it, so line numbers stay.
const std::string kBase = R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: t, owner: ml}
stacks:
  train:
    driver: "550.54.15"
    cuda: "12.4"
    images: ["r.example/t@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58", "r.example/u@sha256:69f97546c05d33cb2e92b8224e9071cd9114725f1a6361996d439e65ae9bf2b4"]
networks:
  vlans:
    - {name: fab, id: 100, cidr: 10.100.0.0/16, vrf: ml}
    - {name: sto, id: 110, cidr: 10.110.0.0/16, vrf: ml}
  fabrics:
    - {name: ib, kind: infiniband, oversubscription: "1:1"}
    - {name: roce, kind: roce-v2, oversubscription: "1:1", pfc: true, ecn: true}
storage:
  tiers:
    - {name: hot, kind: nvme}
    - {name: home, kind: nfs}
node_pools:
  - name: train-a
    count: 4
    role: training
    hardware: {gpu: H100-80GB, gpus_per_node: 8, memory_gb: 2048}
    largest_model_gb: 140
    stack: train
    fabric: ib
    networks: [fab, sto]
    storage: [hot, home]
    mig: {profile: none}
burst_pools:
  - {name: aws-p5, provider: aws, region: us-east-1, instance_type: p5.48xlarge, desired: 0, max: 2, spot: true, stack: train, checkpointing: {interval_minutes: 30, target: hot}}
)";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) lines.push_back(l);
  return lines;
}

// kBase with line `n` (1-based) replaced; `from` must occur in it.
struct Doc {
  std::vector<std::string> lines = lines_of(kBase);

  Doc& set(int n, const std::string& from, const std::string& to) {
    std::string& l = lines.at(static_cast<size_t>(n - 1));
    auto pos = l.find(from);
    REQUIRE(pos != std::string::npos);
    l.replace(pos, from.size(), to);
    return *this;
  }
  std::string text() const {
    std::string t;
    for (const auto& l : lines) t += l + "\n";
    return t;
  }
  // The position of `needle` on line `n`.
  SourceLoc at(int n, const std::string& needle) const {
    auto pos = lines.at(static_cast<size_t>(n - 1)).find(needle);
    REQUIRE(pos != std::string::npos);
    return {"t.yaml", n, static_cast<int>(pos) + 1};
  }
  // The position just after `prefix` on line `n` (where its value starts).
  SourceLoc after(int n, const std::string& prefix) const {
    SourceLoc l = at(n, prefix);
    l.column += static_cast<int>(prefix.size());
    return l;
  }
  Diagnostics check() const {
    auto loaded = bp::load_string(text(), "t.yaml");
    INFO(text());
    for (const auto& d : loaded.diagnostics) INFO(format_diagnostic(d));
    REQUIRE(loaded.ok());
    return validate::validate(loaded.blueprint, cat());
  }
};

std::vector<Diagnostic> with_code(const Diagnostics& ds, const std::string& code) {
  std::vector<Diagnostic> out;
  std::copy_if(ds.begin(), ds.end(), std::back_inserter(out), [&](const Diagnostic& d) { return d.code == code; });
  return out;
}

// The one diagnostic `code` produced; fails when there is not exactly one.
Diagnostic one(const Diagnostics& ds, const std::string& code) {
  auto found = with_code(ds, code);
  for (const auto& d : ds) INFO(format_diagnostic(d));
  REQUIRE(found.size() == 1);
  return found[0];
}

void check_diag(const Diagnostic& d, Severity sev, const SourceLoc& loc, const std::string& address, const std::string& message,
                const std::string& hint) {
  CHECK(d.severity == sev);
  CHECK(d.loc == loc);
  CHECK(d.address == address);
  CHECK(d.message == message);
  CHECK(d.hint == hint);
}

}  // namespace

TEST_CASE("the base blueprint and the three examples have no findings") {
  CHECK(Doc().check().empty());
  for (const char* f : {"blueprints/examples/lab.yaml", "blueprints/examples/cluster.yaml", "blueprints/examples/regulated.yaml"}) {
    INFO(f);
    auto loaded = bp::load_files({f});
    for (const auto& d : loaded.diagnostics) INFO(format_diagnostic(d));
    REQUIRE(loaded.ok());
    auto ds = validate::validate(loaded.blueprint, cat());
    for (const auto& d : ds) INFO(format_diagnostic(d));
    CHECK(ds.empty());
  }
}

TEST_CASE("rules() lists every rule once, sorted, with a rationale") {
  const auto& rs = validate::rules();
  REQUIRE(rs.size() == 24);
  for (size_t i = 0; i < rs.size(); ++i) {
    CHECK_FALSE(rs[i].title.empty());
    CHECK_FALSE(rs[i].rationale.empty());
    if (i) CHECK(rs[i - 1].id < rs[i].id);
  }
}

TEST_CASE("CUDA001: driver older than the CUDA minimum") {
  Doc doc;
  doc.set(6, "550.54.15", "550.54.13");
  check_diag(one(doc.check(), "CUDA001"), Severity::Error, doc.at(6, "\"550"), "",
             "driver 550.54.13 in stack 'train' is older than 550.54.14, the minimum for CUDA 12.4",
             "pin driver \"550.54.14\" or newer, or an older CUDA");
  // The exact minimum is fine; "12.4.1" needs the Update 1 driver.
  CHECK(with_code(Doc().set(6, "550.54.15", "550.54.14").check(), "CUDA001").empty());
  Doc update;
  update.set(6, "550.54.15", "550.54.14").set(7, "\"12.4\"", "\"12.4.1\"");
  CHECK(one(update.check(), "CUDA001").message ==
        "driver 550.54.14 in stack 'train' is older than 550.54.15, the minimum for CUDA 12.4.1");
  // Numeric, not text, comparison: 550.100 is newer than 550.54.14.
  CHECK(with_code(Doc().set(6, "550.54.15", "550.100.01").check(), "CUDA001").empty());
}

TEST_CASE("CUDA002: unknown CUDA version names the closest known ones") {
  Doc doc;
  doc.set(7, "12.4", "12.7");
  check_diag(one(doc.check(), "CUDA002"), Severity::Error, doc.at(7, "\"12.7"), "", "unknown CUDA version '12.7' in stack 'train'",
             "use a released toolkit from docs/catalog.md, e.g. 12.6.3 or 12.8.0");
  CHECK(with_code(Doc().check(), "CUDA002").empty());
}

TEST_CASE("CUDA003: node pool GPU newer than the stack's CUDA") {
  Doc doc;
  doc.set(6, "550.54.15", "470.82.01").set(7, "12.4", "11.4.4");
  check_diag(one(doc.check(), "CUDA003"), Severity::Error, doc.at(24, "H100-80GB"), "baremetal.node.train-a",
             "node pool 'train-a' runs H100-80GB (Hopper, compute capability 9.0), which needs CUDA 11.8 or newer, but stack "
             "'train' pins CUDA 11.4.4",
             "pin CUDA 11.8 or newer (with its minimum driver) in stack 'train'");
  // The same stack is fine for an Ampere GPU.
  Doc ampere = doc;
  ampere.set(24, "H100-80GB", "A100-80GB");
  CHECK(with_code(ampere.check(), "CUDA003").empty());
}

TEST_CASE("CUDA004: burst instance type's GPU newer than the stack's CUDA") {
  Doc doc;
  doc.set(6, "550.54.15", "470.82.01").set(7, "12.4", "11.4.4").set(24, "H100-80GB", "A100-80GB");
  check_diag(one(doc.check(), "CUDA004"), Severity::Error, doc.at(32, "p5.48xlarge"), "aws.instance.aws-p5",
             "burst pool 'aws-p5' (p5.48xlarge) runs H100-80GB (Hopper, compute capability 9.0), which needs CUDA 11.8 or "
             "newer, but stack 'train' pins CUDA 11.4.4",
             "pin CUDA 11.8 or newer (with its minimum driver) in stack 'train'");
  Doc ampere = doc;
  ampere.set(32, "p5.48xlarge", "p4de.24xlarge");
  CHECK(ampere.check().empty());
}

TEST_CASE("GPU001: unknown GPU model with the closest names") {
  Doc doc;
  doc.set(24, "H100-80GB", "H100-80G");
  check_diag(one(doc.check(), "GPU001"), Severity::Error, doc.at(24, "H100-80G"), "baremetal.node.train-a",
             "unknown GPU model 'H100-80G' in node pool 'train-a'",
             "did you mean 'H100-80GB'? (the models are listed in docs/catalog.md)");
  Doc far;
  far.set(24, "H100-80GB", "Gaudi3");
  CHECK(one(far.check(), "GPU001").hint == "closest known: 'A10G', 'B200', 'L4' (the models are listed in docs/catalog.md)");
  // Aliases and nvidia-smi product names are known models.
  CHECK(Doc().set(24, "H100-80GB", "\"NVIDIA H100 80GB HBM3\"").check().empty());
}

TEST_CASE("GPU002: unknown instance type with the closest names") {
  Doc typo;
  typo.set(32, "p5.48xlarge", "p5.48xlarg");
  CHECK(one(typo.check(), "GPU002").hint == "did you mean 'p5.48xlarge'? (the types are listed in docs/catalog.md)");
  // Equally distant names: the one sharing the longer prefix wins.
  CHECK(one(Doc().set(32, "p5.48xlarge", "p5.96xlarge").check(), "GPU002").hint ==
        "did you mean 'p5.48xlarge'? (the types are listed in docs/catalog.md)");
  Doc doc;
  doc.set(32, "p5.48xlarge", "p5.48xl");
  check_diag(one(doc.check(), "GPU002"), Severity::Error, doc.at(32, "p5.48xl"), "aws.instance.aws-p5",
             "unknown aws instance type 'p5.48xl' in burst pool 'aws-p5'",
             "closest known: 'p5.48xlarge', 'p5.4xlarge', 'g5.48xlarge' (the types are listed in docs/catalog.md)");
  // Instance types belong to their provider.
  Doc gcp;
  gcp.set(32, "provider: aws, region: us-east-1", "provider: gcp, region: us-central1");
  CHECK(one(gcp.check(), "GPU002").message == "unknown gcp instance type 'p5.48xlarge' in burst pool 'aws-p5'");
  CHECK(with_code(Doc().set(32, "p5.48xlarge", "p4d.24xlarge").check(), "GPU002").empty());
}

TEST_CASE("GPU003: MIG on a GPU without MIG") {
  Doc doc;
  doc.set(23, "training", "inference").set(24, "H100-80GB, gpus_per_node: 8", "L40S, gpus_per_node: 8").set(25, "140", "40");
  doc.set(30, "{profile: none}", "{profile: \"3g.40gb\", instances: 2}");
  check_diag(one(doc.check(), "GPU003"), Severity::Error, doc.at(30, "\"3g"), "baremetal.node.train-a",
             "node pool 'train-a' asks for MIG profile '3g.40gb', but L40S does not support MIG",
             "set mig: {profile: none}, or use a MIG-capable GPU (A30, A100, H100, H200, B200)");
  CHECK(with_code(Doc().set(24, "H100-80GB", "L40S").set(25, "140", "40").check(), "GPU003").empty());
}

TEST_CASE("GPU004: MIG profile the GPU does not offer") {
  Doc doc;
  doc.set(30, "{profile: none}", "{profile: \"3g.20gb\", instances: 2}").set(25, "140", "20");
  check_diag(one(doc.check(), "GPU004"), Severity::Error, doc.at(30, "\"3g"), "baremetal.node.train-a",
             "MIG profile '3g.20gb' of node pool 'train-a' does not exist on H100-80GB",
             "did you mean '3g.40gb'? H100-80GB offers 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb");
  // The same profile exists on an A100-40GB.
  Doc a100 = doc;
  a100.set(24, "H100-80GB", "A100-40GB");
  CHECK(a100.check().empty());
}

TEST_CASE("GPU005: MIG layout beyond compute slices, memory slices or max count") {
  Doc compute;
  compute.set(30, "{profile: none}", "{profile: \"3g.40gb\", instances: 3}").set(25, "140", "40");
  check_diag(one(compute.check(), "GPU005"), Severity::Error, compute.at(30, "3}"), "baremetal.node.train-a",
             "MIG layout 3 x 3g.40gb of node pool 'train-a' needs 9 compute slices; H100-80GB has 7",
             "use at most 2 instance(s) of 3g.40gb per GPU");
  Doc memory;
  memory.set(30, "{profile: none}", "{profile: \"1g.20gb\", instances: 5}").set(25, "140", "20");
  CHECK(one(memory.check(), "GPU005").message == "MIG layout 5 x 1g.20gb of node pool 'train-a' needs 10 memory slices; H100-80GB has 8");
  Doc count;
  count.set(30, "{profile: none}", "{profile: \"1g.10gb+me\", instances: 2}").set(25, "140", "10");
  CHECK(one(count.check(), "GPU005").message ==
        "MIG layout 2 x 1g.10gb+me of node pool 'train-a' exceeds the 1 instance(s) of 1g.10gb+me that H100-80GB allows");
  Doc a30;
  a30.set(24, "H100-80GB", "A30-24GB").set(25, "140", "6").set(30, "{profile: none}", "{profile: \"2g.12gb\", instances: 3}");
  CHECK(one(a30.check(), "GPU005").message == "MIG layout 3 x 2g.12gb of node pool 'train-a' needs 6 compute slices; A30-24GB has 4");
  Doc zero;
  zero.set(30, "{profile: none}", "{profile: \"1g.10gb\"}").set(25, "140", "10");
  check_diag(one(zero.check(), "GPU005"), Severity::Error, zero.at(30, "\"1g"), "baremetal.node.train-a",
             "node pool 'train-a' sets MIG profile 1g.10gb with 0 instances", "set mig.instances from 1 to 7");
  // Full layouts are fine: 7 x 1g.10gb, 2 x 3g.40gb, 4 x 1g.20gb.
  CHECK(Doc().set(30, "{profile: none}", "{profile: \"1g.10gb\", instances: 7}").set(25, "140", "10").check().empty());
  CHECK(Doc().set(30, "{profile: none}", "{profile: \"3g.40gb\", instances: 2}").set(25, "140", "40").check().empty());
  CHECK(Doc().set(30, "{profile: none}", "{profile: \"1g.20gb\", instances: 4}").set(25, "140", "20").check().empty());
}

TEST_CASE("GPU006: GPU memory per node below the largest model") {
  Doc doc;
  doc.set(24, "gpus_per_node: 8", "gpus_per_node: 1").set(24, "memory_gb: 2048", "memory_gb: 512");
  check_diag(one(doc.check(), "GPU006"), Severity::Error, doc.at(25, "140"), "baremetal.node.train-a",
             "node pool 'train-a' declares a 140 GB model, but a node has only 80 GB of GPU memory (1 x H100-80GB)",
             "use GPUs with more memory, more GPUs per node, or a smaller (sharded or quantized) model");
  CHECK(with_code(Doc().set(24, "gpus_per_node: 8", "gpus_per_node: 2").check(), "GPU006").empty());  // 160 GB
  CHECK(with_code(Doc().set(24, "H100-80GB, gpus_per_node: 8", "H200-141GB, gpus_per_node: 1").check(), "GPU006").size() == 0);
}

TEST_CASE("GPU007: multi-node training on GPUs without ECC or NVLink") {
  Doc doc;
  doc.set(24, "H100-80GB", "RTX-4090").set(25, "140", "70");
  check_diag(one(doc.check(), "GPU007"), Severity::Warning, doc.at(24, "RTX-4090"), "baremetal.node.train-a",
             "multi-node training pool 'train-a' uses RTX-4090, which has no ECC memory and NVLink",
             "train across nodes on data-center GPUs with ECC and NVLink (e.g. H100-80GB), or keep this pool to one node");
  Doc l40s;
  l40s.set(24, "H100-80GB", "L40S");
  CHECK(one(l40s.check(), "GPU007").message == "multi-node training pool 'train-a' uses L40S, which has no NVLink");
  // One node, or inference, is fine.
  CHECK(doc.set(22, "4", "1").check().empty());
  CHECK(Doc().set(24, "H100-80GB", "RTX-4090").set(25, "140", "70").set(23, "training", "inference").check().empty());
}

TEST_CASE("GPU008: largest model larger than one MIG instance") {
  Doc doc;
  doc.set(23, "training", "inference").set(30, "{profile: none}", "{profile: \"3g.40gb\", instances: 2}").set(25, "140", "70");
  check_diag(one(doc.check(), "GPU008"), Severity::Error, doc.at(25, "70"), "baremetal.node.train-a",
             "node pool 'train-a' declares a 70 GB model, larger than one 3g.40gb MIG instance (40 GB)",
             "use a larger MIG profile, or mig: {profile: none} to give the model whole GPUs");
  CHECK(doc.set(30, "3g.40gb\", instances: 2", "7g.80gb\", instances: 1").check().empty());
}

TEST_CASE("GPU009: host memory below GPU memory") {
  Doc doc;
  doc.set(24, "memory_gb: 2048", "memory_gb: 512");
  check_diag(one(doc.check(), "GPU009"), Severity::Warning, doc.at(24, "512"), "baremetal.node.train-a",
             "node pool 'train-a' has 512 GB of host memory, less than its 640 GB of GPU memory",
             "give each node at least as much host memory as GPU memory (640 GB); twice is common");
  CHECK(Doc().set(24, "memory_gb: 2048", "memory_gb: 640").check().empty());
}

TEST_CASE("IMG001: image not pinned by digest") {
  Doc doc;
  doc.set(8, "r.example/u@sha256:69f97546c05d33cb2e92b8224e9071cd9114725f1a6361996d439e65ae9bf2b4", "r.example/u:24.08");
  check_diag(one(doc.check(), "IMG001"), Severity::Warning, doc.at(8, "\"r.example/u"), "",
             "image 'r.example/u:24.08' in stack 'train' is not pinned by digest",
             "reference it as name@sha256:<64 hex digits> (docker buildx imagetools inspect NAME shows the digest)");
  // A short or upper-case digest is not a pin either.
  CHECK(one(Doc().set(8, "ae58\"", "ae5\"").check(), "IMG001").message.find("is not pinned") != std::string::npos);
  CHECK(one(Doc().set(8, "116f54c4", "116F54C4").check(), "IMG001").loc.column == 14);
}

TEST_CASE("NET001: VLAN id outside 1-4094") {
  for (const char* bad : {"0", "4095", "-3"}) {
    Doc doc;
    doc.set(11, "id: 100", std::string("id: ") + bad);
    check_diag(one(doc.check(), "NET001"), Severity::Error, doc.after(11, "id: "), "net.vlan.fab",
               std::string("VLAN 'fab' has id ") + bad + ", outside 1-4094",
               "use an 802.1Q id from 1 to 4094 (0 and 4095 are reserved)");
  }
  CHECK(Doc().set(11, "id: 100", "id: 4094").check().empty());
  CHECK(Doc().set(11, "id: 100", "id: 1").check().empty());
}

TEST_CASE("NET002: duplicate VLAN id") {
  Doc doc;
  doc.set(12, "id: 110", "id: 100");
  check_diag(one(doc.check(), "NET002"), Severity::Error, doc.at(12, "100"), "net.vlan.sto",
             "VLAN 'sto' reuses id 100 of VLAN 'fab' (" + doc.after(11, "id: ").str() + ")", "give each VLAN its own id");
  CHECK(with_code(Doc().check(), "NET002").empty());
}

TEST_CASE("NET003: invalid CIDR") {
  for (const char* bad : {"10.100.0.0", "10.100.0.256/16", "10.100.0.0/33", "10.100/16", "fab"}) {
    Doc doc;
    doc.set(11, "10.100.0.0/16", bad);
    check_diag(one(doc.check(), "NET003"), Severity::Error, doc.after(11, "cidr: "), "net.vlan.fab",
               std::string("VLAN 'fab' has invalid CIDR '") + bad + "'", "write an IPv4 network as address/prefix, e.g. 10.100.0.0/16");
  }
  Doc host;
  host.set(11, "10.100.0.0/16", "10.100.3.1/16");
  check_diag(one(host.check(), "NET003"), Severity::Error, host.at(11, "10.100.3.1"), "net.vlan.fab",
             "VLAN 'fab' has CIDR '10.100.3.1/16' with host bits set", "write the network address: 10.100.0.0/16");
  CHECK(Doc().set(11, "10.100.0.0/16", "0.0.0.0/0").set(11, "vrf: ml", "vrf: other").check().empty());
}

TEST_CASE("NET004: overlapping CIDRs in one VRF") {
  Doc doc;
  doc.set(12, "10.110.0.0/16", "10.100.128.0/17");
  check_diag(one(doc.check(), "NET004"), Severity::Error, doc.at(12, "10.100.128"), "net.vlan.sto",
             "CIDR 10.100.128.0/17 of VLAN 'sto' overlaps 10.100.0.0/16 of VLAN 'fab' in VRF 'ml'",
             "give the VLANs disjoint subnets, or put them in different VRFs");
  // The later-written VLAN is reported even when its network starts first.
  Doc reversed;
  reversed.set(12, "10.110.0.0/16", "10.0.0.0/8");
  auto d = one(reversed.check(), "NET004");
  CHECK(d.address == "net.vlan.sto");
  CHECK(d.message == "CIDR 10.0.0.0/8 of VLAN 'sto' overlaps 10.100.0.0/16 of VLAN 'fab' in VRF 'ml'");
  // Different VRFs may reuse addresses; adjacent networks do not overlap.
  CHECK(Doc().set(12, "10.110.0.0/16", "10.100.0.0/16").set(12, "vrf: ml", "vrf: storage").check().empty());
  CHECK(Doc().set(12, "10.110.0.0/16", "10.101.0.0/16").check().empty());
}

TEST_CASE("NET005: RoCE fabric without PFC or ECN") {
  Doc doc;
  doc.set(15, "pfc: true", "pfc: false");
  check_diag(one(doc.check(), "NET005"), Severity::Warning, doc.at(15, "false"), "net.fabric.roce",
             "RoCE fabric 'roce' does not enable PFC",
             "set pfc: true and ecn: true, and configure them on the switches (lossless priority for RoCE traffic)");
  Doc neither;
  neither.set(15, ", pfc: true, ecn: true}", "}");
  auto d = one(neither.check(), "NET005");
  CHECK(d.message == "RoCE fabric 'roce' does not enable PFC and ECN");
  CHECK(d.loc == neither.at(15, "roce-v2"));
  CHECK(one(Doc().set(15, "ecn: true", "ecn: false").check(), "NET005").message == "RoCE fabric 'roce' does not enable ECN");
  // InfiniBand needs neither.
  CHECK(Doc().set(14, "oversubscription: \"1:1\"", "oversubscription: \"1:1\", pfc: false").check().empty());
}

TEST_CASE("NET006: oversubscribed fabric carrying a training pool") {
  Doc doc;
  doc.set(14, "\"1:1\"", "\"2:1\"");
  check_diag(one(doc.check(), "NET006"), Severity::Warning, doc.at(14, "\"2:1"), "net.fabric.ib",
             "fabric 'ib' is oversubscribed 2:1 but carries training pool 'train-a'",
             "make the fabric non-blocking (oversubscription: \"1:1\") or move training to a 1:1 fabric");
  // Inference pools may share an oversubscribed fabric.
  CHECK(Doc().set(15, "\"1:1\"", "\"3:1\"").check().empty());
  CHECK(Doc().set(14, "\"1:1\"", "\"2:1\"").set(23, "training", "inference").check().empty());
}

TEST_CASE("NET007: multi-node training without an RDMA fabric") {
  Doc doc;
  doc.set(27, "fabric: ib", "fabric: eth").set(14, "{name: ib, kind: infiniband", "{name: eth, kind: ethernet");
  check_diag(one(doc.check(), "NET007"), Severity::Warning, doc.at(27, "eth"), "baremetal.node.train-a",
             "multi-node training pool 'train-a' (4 nodes) has only the ethernet fabric 'eth'",
             "attach an infiniband or roce-v2 fabric with 'fabric:' so NCCL can use GPUDirect RDMA");
  Doc none;
  none.set(27, "fabric: ib", "bios: {SriovEnable: Enabled}");
  check_diag(one(none.check(), "NET007"), Severity::Warning, none.at(21, "name"), "baremetal.node.train-a",
             "multi-node training pool 'train-a' (4 nodes) has no fabric",
             "attach an infiniband or roce-v2 fabric with 'fabric:' so NCCL can use GPUDirect RDMA");
  CHECK(Doc().set(27, "fabric: ib", "fabric: roce").check().empty());
  CHECK(Doc().set(27, "fabric: ib", "bios: {SriovEnable: Enabled}").set(22, "4", "1").check().empty());
}

TEST_CASE("STO001: NFS tier serving more than 20 training nodes") {
  Doc doc;
  doc.set(22, "4", "21");
  check_diag(one(doc.check(), "STO001"), Severity::Warning, doc.at(19, "nfs"), "storage.tier.home",
             "NFS tier 'home' serves 21 training nodes (more than 20)",
             "serve training data and checkpoints from a parallel-fs or nvme tier; keep NFS for home directories");
  CHECK(Doc().set(22, "4", "20").check().empty());
}

TEST_CASE("STO001 adds up the training nodes of every pool using the tier") {
  // Two files merge into one blueprint: 12 + 9 training nodes use tier "home".
  auto loaded = bp::load_strings({{"t.yaml", Doc().set(22, "4", "12").text()},
                                  {"u.yaml", "apiVersion: plinth/v1\nkind: Blueprint\nnode_pools:\n  - name: train-b\n    count: 9\n"
                                             "    hardware: {gpu: H100-80GB, gpus_per_node: 8}\n    stack: train\n    fabric: ib\n"
                                             "    storage: [hot, home]\n"}});
  for (const auto& d : loaded.diagnostics) INFO(format_diagnostic(d));
  REQUIRE(loaded.ok());
  auto ds = validate::validate(loaded.blueprint, cat());
  CHECK(one(ds, "STO001").message == "NFS tier 'home' serves 21 training nodes (more than 20)");
}

TEST_CASE("STO002: training pool without nvme or parallel-fs storage") {
  Doc doc;
  doc.set(29, "[hot, home]", "[home]");
  check_diag(one(doc.check(), "STO002"), Severity::Warning, doc.at(29, "[home]"), "baremetal.node.train-a",
             "training pool 'train-a' has no nvme or parallel-fs storage tier",
             "add an nvme or parallel-fs tier to its 'storage:' for datasets and checkpoints");
  CHECK(Doc().set(29, "[hot, home]", "[hot]").check().empty());
  CHECK(Doc().set(29, "[hot, home]", "[home]").set(23, "training", "inference").check().empty());
}

TEST_CASE("BURST001: spot burst pool without checkpointing") {
  Doc doc;
  doc.set(32, ", checkpointing: {interval_minutes: 30, target: hot}", "");
  check_diag(one(doc.check(), "BURST001"), Severity::Error, doc.at(32, "true"), "aws.instance.aws-p5",
             "spot burst pool 'aws-p5' has no checkpointing",
             "add checkpointing: {interval_minutes: 30, target: TIER}, or set spot: false");
  CHECK(doc.set(32, "spot: true", "spot: false").check().empty());
  Doc azure;
  azure.set(32, "provider: aws, region: us-east-1, instance_type: p5.48xlarge",
            "provider: azure, region: eastus, instance_type: Standard_ND96isr_H100_v5")
      .set(32, ", checkpointing: {interval_minutes: 30, target: hot}", "");
  CHECK(one(azure.check(), "BURST001").address == "azure.vm.aws-p5");
}

TEST_CASE("the rules aggregate across 10,000 nodes in 500 pools") {
  bp::Blueprint b;
  b.stacks.push_back({"s", "550.54.15", "12.4", "", {}, {}, {}});
  b.fabrics.push_back({"ib", "infiniband", 400, "", "2:1", std::nullopt, std::nullopt, {}});
  b.tiers.push_back({"nfs", "nfs", 1, "", "", "", std::nullopt, std::nullopt, {}});
  for (int i = 0; i < 500; ++i) {
    bp::NodePool p;
    p.name = "pool-" + std::to_string(i);
    p.count = 20;
    p.hardware = {"H100-80GB", 8, 96, 2048};
    p.stack = "s";
    p.fabric = "ib";
    p.storage = {"nfs"};
    b.node_pools.push_back(p);
    b.vlans.push_back({"v" + std::to_string(i), 1 + i, "10." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ".0/24",
                       "", "", 1500, {}});
  }
  auto ds = validate::validate(b, cat());
  CHECK(with_code(ds, "STO002").size() == 500);
  CHECK(one(ds, "STO001").message == "NFS tier 'nfs' serves 10000 training nodes (more than 20)");
  CHECK(one(ds, "NET006").address == "net.fabric.ib");
  CHECK(with_code(ds, "NET004").empty());
}
