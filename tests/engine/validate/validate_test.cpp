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
    driver: "580.126.20"
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
    - {name: home, kind: nfs, export: "nfs.example:/home"}
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
  - {name: aws-p5, provider: aws, region: us-east-1, instance_type: p5.48xlarge, desired: 0, max: 2, spot: true, stack: train, checkpointing: {interval_minutes: 30, target: home}}
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
  // Inserts `line` after line `n` (0: at the top); later lines move down by one.
  Doc& insert(int n, const std::string& line) {
    lines.insert(lines.begin() + n, line);
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

// The rule ids of `ds`, in order.
std::vector<std::string> codes(const Diagnostics& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.code);
  return out;
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
  REQUIRE(rs.size() == 52);
  for (size_t i = 0; i < rs.size(); ++i) {
    CHECK_FALSE(rs[i].title.empty());
    CHECK_FALSE(rs[i].checks.empty());
    CHECK_FALSE(rs[i].rationale.empty());
    CHECK_FALSE(rs[i].fix.empty());
    if (i) CHECK(rs[i - 1].id < rs[i].id);
  }
}

TEST_CASE("CUDA001: driver older than the toolkit's and than minor-version compatibility") {
  Doc doc;
  doc.set(6, "580.126.20", "520.61.05");
  check_diag(one(doc.check(), "CUDA001"), Severity::Error, doc.at(6, "\"520"), "",
             "driver 520.61.05 in stack 'train' is older than 550.54.15, the minimum for CUDA 12.4 (cuda-toolkit-12-4 "
             "installs the newest release, 12.4.1), and older than 525, the minimum for CUDA 12.x through minor-version "
             "compatibility",
             "pin driver \"550.54.15\" or newer, or an older CUDA; on data-center GPUs, cuda_compat: true with R470 >= "
             "470.57, R525 >= 525.85, R535 >= 535.86, R550 >= 550.54");
  // CUDA 11.x runs on 450.80.02 and newer through minor-version compatibility; below, it is an error.
  Doc old;
  old.set(6, "580.126.20", "450.51.06").set(7, "\"12.4\"", "\"11.8\"").set(24, "H100-80GB", "A100-40GB").set(25, "140", "40");
  CHECK(one(old.check(), "CUDA001").message ==
        "driver 450.51.06 in stack 'train' is older than 520.61.05, the minimum for CUDA 11.8 (cuda-toolkit-11-8 installs the "
        "newest release, 11.8.0), and older than 450.80.02, the minimum for CUDA 11.x through minor-version compatibility");
  // The toolkit's own driver, or newer, is clean; numeric, not text, comparison: 550.100 is newer than 550.54.15.
  CHECK(with_code(Doc().set(6, "580.126.20", "550.100.01").check(), "CUDA001").empty());
  CHECK(Doc().set(7, "\"12.4\"", "\"12.4.1\"").check().empty());
  // CUDA 13.0 on R550: no branch runs 13.x forward, so the hint offers no cuda_compat (it once ended "with none").
  Doc cuda13;
  cuda13.set(6, "580.126.20", "550.54.15").set(7, "\"12.4\"", "\"13.0\"");
  auto d13 = one(cuda13.check(), "CUDA001");
  CHECK(d13.hint == "pin driver \"580.95.05\" or newer, or an older CUDA");
  CHECK(d13.hint.find("none") == std::string::npos);
  auto compat13 = one(Doc(cuda13).insert(7, "    cuda_compat: true").check(), "CUDA007");
  CHECK(compat13.hint ==
        "no driver branch runs CUDA 13.x through cuda-compat (docs/catalog.md lists none); pin driver \"580.95.05\" or "
        "newer, or remove cuda_compat");
}

TEST_CASE("CUDA005: minor-version compatibility is a warning naming what is lost") {
  // The old CUDA001 rejected this supported setup: 550.54.14 is CUDA 12.4.0's driver, and "12.4" installs 12.4.1.
  Doc doc;
  doc.set(6, "580.126.20", "550.54.14");
  auto ds = doc.check();
  CHECK(with_code(ds, "CUDA001").empty());
  CHECK_FALSE(has_errors(ds));
  check_diag(one(ds, "CUDA005"), Severity::Warning, doc.at(6, "\"550"), "",
             "driver 550.54.14 in stack 'train' runs CUDA 12.4 (cuda-toolkit-12-4 installs the newest release, 12.4.1) only "
             "through CUDA minor-version compatibility (12.x on >= 525): PTX built for the newer toolkit fails to JIT-compile "
             "and APIs newer than the driver return cudaErrorCallRequiresNewerDriver",
             "pin driver \"550.54.15\" or newer, the driver CUDA 12.4.1 ships with");
  // R535 (an LTS branch) with CUDA 12.6: compatible, with the warning.
  Doc r535;
  r535.set(6, "580.126.20", "535.104.05").set(7, "\"12.4\"", "\"12.6\"");
  auto w = one(r535.check(), "CUDA005");
  CHECK(w.severity == Severity::Warning);
  CHECK(w.hint == "pin driver \"560.35.05\" or newer, the driver CUDA 12.6.3 ships with");
}

TEST_CASE("CUDA006: a CUDA release that dropped the GPU's architecture") {
  Doc doc;
  doc.set(6, "580.126.20", "580.95.05").set(7, "\"12.4\"", "\"13.0\"").set(24, "H100-80GB", "V100-32GB").set(25, "140", "40");
  check_diag(one(doc.check(), "CUDA006"), Severity::Error, doc.at(24, "V100-32GB"), "baremetal.node.train-a",
             "node pool 'train-a' runs V100-32GB (Volta), which CUDA 13.0 and later no longer support, but stack 'train' "
             "installs CUDA 13.0.2",
             "pin a CUDA release before 13.0 in the stack this pool uses, or move the pool to newer GPUs");
  // CUDA 12.x still supports Volta.
  Doc cuda12 = doc;
  cuda12.set(7, "\"13.0\"", "\"12.8\"");
  CHECK(cuda12.check().empty());
}

TEST_CASE("CUDA007: forward compatibility only on listed branches and data-center GPUs") {
  // R545 is not a forward-compatible branch for CUDA 12.x.
  Doc branch;
  branch.set(6, "580.126.20", "545.23.08").insert(7, "    cuda_compat: true");
  auto ds = branch.check();
  check_diag(one(ds, "CUDA007"), Severity::Error, branch.after(8, "cuda_compat: "), "",
             "stack 'train' asks for CUDA forward compatibility, but driver 545.23.08 is not on a branch that runs CUDA 12.x "
             "through cuda-compat",
             "forward compatibility for CUDA 12.x runs on R470 >= 470.57, R525 >= 525.85, R535 >= 535.86, R550 >= 550.54; pin "
             "one of them, or driver \"550.54.15\" or newer");
  CHECK(with_code(ds, "CUDA005").empty());  // CUDA007 already names the toolkit's driver
  // R535 runs CUDA 12.4 through cuda-compat on data-center GPUs: no finding but the branch's end of life.
  Doc r535;
  r535.set(6, "580.126.20", "535.104.05").insert(7, "    cuda_compat: true");
  CHECK(codes(r535.check()) == std::vector<std::string>{"DRV008"});
  // Not on a GeForce card.
  Doc geforce = r535;
  geforce.set(24, "role: training", "role: inference").set(25, "H100-80GB, gpus_per_node: 8", "RTX-4090, gpus_per_node: 1")
      .set(26, "140", "10");
  check_diag(one(geforce.check(), "CUDA007"), Severity::Error, geforce.at(25, "RTX-4090"), "baremetal.node.train-a",
             "node pool 'train-a' runs RTX-4090, which is not a data-center GPU, but stack 'train' relies on CUDA forward "
             "compatibility (cuda-compat) to run CUDA 12.4.1 on driver 535.104.05",
             "pin driver \"550.54.15\" or newer for this pool; forward compatibility works on data-center GPUs only");
}

TEST_CASE("DRV001: a driver branch after the GPU's last") {
  Doc doc;
  doc.set(6, "580.126.20", "590.44.01").set(7, "\"12.4\"", "\"12.8\"").set(24, "H100-80GB", "V100-32GB").set(25, "140", "40");
  check_diag(one(doc.check(), "DRV001"), Severity::Error, doc.at(6, "\"590"), "baremetal.node.train-a",
             "node pool 'train-a' runs V100-32GB (Volta), whose last supported driver branch is R580, but stack 'train' pins "
             "driver 590.44.01",
             "pin an R580 driver for this pool");
  CHECK(Doc().set(6, "580.126.20", "580.95.05").set(7, "\"12.4\"", "\"12.8\"").set(24, "H100-80GB", "V100-32GB")
            .set(25, "140", "40").check().empty());
}

TEST_CASE("DRV002: a driver older than the GPU's minimum") {
  Doc b200;
  b200.set(6, "580.126.20", "570.124.06").set(7, "\"12.4\"", "\"12.8\"").set(24, "H100-80GB", "B200");
  check_diag(one(b200.check(), "DRV002"), Severity::Error, b200.at(6, "\"570"), "baremetal.node.train-a",
             "node pool 'train-a' runs B200, which needs driver 570.133.20 or newer, but stack 'train' pins 570.124.06",
             "pin driver \"570.133.20\" or newer");
  CHECK(with_code(Doc(b200).set(6, "570.124.06", "570.133.20").check(), "DRV002").empty());
  // Minor-version compatibility does not teach an old kernel driver a new GPU: Hopper needs CUDA 11.8's driver.
  Doc hopper;
  hopper.set(6, "580.126.20", "515.105.01").set(7, "\"12.4\"", "\"11.8\"");
  auto both = with_code(hopper.check(), "DRV002");  // the H100 pool and the p5 burst pool
  REQUIRE(both.size() == 2);
  const auto& d = both[0];
  CHECK(d.message == "node pool 'train-a' runs H100-80GB, which needs driver 520.61.05 or newer (the driver of CUDA 11.8.0, "
                     "the first toolkit for compute capability 9.0), but stack 'train' pins 515.105.01");
}

TEST_CASE("DRV006: MIG needs the driver NVIDIA names for MIG on the GPU") {
  Doc h200;
  h200.set(6, "580.126.20", "550.54.15").set(24, "H100-80GB", "H200-141GB").set(30, "{profile: none}", "{profile: \"3g.71gb\", instances: 2}")
      .set(25, "140", "10").set(23, "training", "inference");
  check_diag(one(h200.check(), "DRV006"), Severity::Error, h200.at(6, "\"550"), "baremetal.node.train-a",
             "node pool 'train-a' partitions H200-141GB with MIG, which needs driver 550.90.07 or newer (NVIDIA MIG User "
             "Guide), but stack 'train' pins 550.54.15",
             "pin driver \"550.90.07\" or newer, or set mig: {profile: none}");
  CHECK(with_code(Doc(h200).set(6, "550.54.15", "550.90.07").check(), "DRV006").empty());
  // The same driver runs the H200 without MIG, and MIG on the H100 (R525 >= 525.85.12).
  CHECK(with_code(Doc().set(6, "580.126.20", "550.54.15").set(24, "H100-80GB", "H200-141GB").check(), "DRV006").empty());
  Doc h100 = h200;
  h100.set(24, "H200-141GB", "H100-80GB").set(30, "{profile: \"3g.71gb\", instances: 2}", "{profile: \"3g.40gb\", instances: 2}");
  CHECK(with_code(h100.check(), "DRV006").empty());
}

TEST_CASE("DRV008: a driver branch past NVIDIA's end of life, as of the catalog's month") {
  CHECK(with_code(Doc().check(), "DRV008").empty());  // R580, supported to 2028-06
  Doc r550;
  r550.set(6, "580.126.20", "550.54.15");
  check_diag(one(r550.check(), "DRV008"), Severity::Warning, r550.at(6, "\"550"), "",
             "driver 550.54.15 in stack 'train' is on R550 (production branch), which reached end of life in 2025-08, and "
             "gets no more security fixes",
             "pin a release of a supported branch: R580 (LTSB, to 2028-06; newest 580.178.04), R595 (production, to "
             "2027-03; newest 595.91.07)");
  // A new feature branch ends too; a production branch within its dates does not.
  CHECK(one(Doc().set(6, "580.126.20", "610.57.04").set(7, "\"12.4\"", "\"13.2\"").check(), "DRV008").message ==
        "driver 610.57.04 in stack 'train' is on R610 (new feature branch), which reached end of life in 2026-08, and "
        "gets no more security fixes");
  CHECK(with_code(Doc().set(6, "580.126.20", "595.91.07").check(), "DRV008").empty());
  // R535, the long-term support branch, ended in June 2026.
  CHECK(one(Doc().set(6, "580.126.20", "535.309.01").check(), "DRV008").message.find("R535 (long-term support branch)") !=
        std::string::npos);
  // A branch the support matrix never listed, before R580, is end of life; one after it is not judged.
  CHECK(one(Doc().set(6, "580.126.20", "545.23.08").check(), "DRV008").message ==
        "driver 545.23.08 in stack 'train' is on R545, a branch NVIDIA's data-center support matrix does not list (it "
        "calls every such branch before R580 end of life), and gets no more security fixes");
}

TEST_CASE("IMEX001: GB200 compute trays need their IMEX domain, and only they take one") {
  Doc gb;
  gb.set(7, "\"12.4\"", "\"12.8\"").set(24, "H100-80GB, gpus_per_node: 8", "GB200, gpus_per_node: 4");
  check_diag(one(gb.check(), "IMEX001"), Severity::Error, gb.at(24, "GB200"), "baremetal.node.train-a",
             "node pool 'train-a' runs GB200 compute trays, whose GPUs reach the other trays of their NVLink domain only "
             "through IMEX, but sets no imex.nodes",
             "list the rack's compute tray addresses: imex: {nodes: [10.100.1.11, 10.100.1.12, ...]} (one pool per rack)");
  // Every tray listed: clean.
  Doc ok = gb;
  ok.insert(30, "    imex: {nodes: [10.100.1.11, 10.100.1.12, 10.100.1.13, 10.100.1.14]}");
  CHECK(ok.check().empty());
  // Fewer addresses than nodes.
  Doc few = gb;
  few.insert(30, "    imex: {nodes: [10.100.1.11, 10.100.1.12]}");
  auto d = one(few.check(), "IMEX001");
  CHECK(d.loc == few.after(31, "    imex: "));
  CHECK(d.message == "node pool 'train-a' has 4 nodes but lists 2 IMEX node(s), so some trays are outside the domain");
  // More than one NVL72 rack: 19 trays of 4 GPUs.
  std::string many;
  for (int i = 1; i <= 19; ++i) many += std::string(i > 1 ? ", " : "") + "10.100.1." + std::to_string(i);
  Doc big = gb;
  big.insert(30, "    imex: {nodes: [" + many + "]}");
  CHECK(one(big.check(), "IMEX001").message ==
        "node pool 'train-a' lists 19 IMEX nodes of 4 GPUs, more than the 72 GPUs of one NVL72 NVLink domain");
  // An H100 pool does not take one.
  Doc h100;
  h100.insert(30, "    imex: {nodes: [10.100.1.11, 10.100.1.12, 10.100.1.13, 10.100.1.14]}");
  CHECK(one(h100.check(), "IMEX001").message == "node pool 'train-a' sets imex, but H100-80GB GPUs share no NVLink domain across nodes");
}

TEST_CASE("DRV007: Secure Boot where the render still builds modules with DKMS is a warning, whatever the attribute's "
          "spelling") {
  // Ubuntu with DOCA-OFED (Ubuntu's default RDMA stack): Canonical's signed NVIDIA modules, but DOCA-OFED's by DKMS.
  Doc on;
  on.insert(29, "    bios: {SecureBootEnable: \"On\", SriovEnable: Enabled}");
  auto d = one(on.check(), "DRV007");
  CHECK(d.severity == Severity::Warning);
  CHECK(d.loc == on.at(30, "{SecureBootEnable"));
  CHECK(d.message == "node pool 'train-a' enables Secure Boot (SecureBootEnable: On); the render installs Canonical's "
                     "signed NVIDIA modules, but DOCA-OFED's are built by DKMS on the node and signed with a key the "
                     "firmware does not know, so they do not load after the reboot");
  CHECK(d.hint.find("set rdma_stack: inbox on fabric") == 0);
  // The inbox stack on Ubuntu: nothing is built, nothing to warn about.
  Doc inbox = on;
  inbox.set(14, "oversubscription: \"1:1\"}", "oversubscription: \"1:1\", rdma_stack: inbox}");
  CHECK(with_code(inbox.check(), "DRV007").empty());
  // RHEL-family: the dnf module streams build the NVIDIA modules with DKMS.
  Doc rocky = inbox;
  rocky.insert(29, "    os: rocky-9");
  auto r = one(rocky.check(), "DRV007");
  CHECK(r.message == "node pool 'train-a' enables Secure Boot (SecureBootEnable: On) on rocky-9, where the render builds "
                     "the NVIDIA kernel modules with DKMS, signed with a key the firmware does not know, so they do not "
                     "load after the reboot");
  CHECK(r.hint.find("mokutil --import") != std::string::npos);
  Doc off;
  off.insert(29, "    bios: {SecureBoot: Disabled}");
  CHECK(with_code(off.check(), "DRV007").empty());
  CHECK(with_code(Doc().check(), "DRV007").empty());
}

TEST_CASE("DRV003: NVSwitch nodes need a driver with a published Fabric Manager") {
  Doc doc;
  doc.set(6, "580.126.20", "550.78");
  auto ds = with_code(doc.check(), "DRV003");
  REQUIRE(ds.size() == 2);  // the HGX pool and the p5 burst pool
  check_diag(ds[0], Severity::Error, doc.at(6, "\"550"), "baremetal.node.train-a",
             "node pool 'train-a' runs H100-80GB on NVSwitch, which needs NVIDIA Fabric Manager of exactly the driver's "
             "version, but no Fabric Manager 550.78 is published (stack 'train': not a data-center release of R550 the "
             "catalog knows)",
             "pin a data-center release of R550 with a Fabric Manager: the nearest listed are 550.54.15 or 550.90.07, the "
             "newest 550.163.01 (any later R550 data-center release has one too) (docs/catalog.md lists them)");
  CHECK(ds[1].address == "aws.instance.aws-p5");
  // Reasoned by branch (issue 31, item 8): the newest published security releases of R535 and R580 pass
  // (listed), and so does a later R580 data-center release the catalog cannot list yet; a desktop
  // build inside a data-center branch's range, or a branch without data-center releases, does not.
  for (const std::string ok : {"535.309.01", "580.126.20", "580.178.04", "580.199.02"}) {
    Doc d;
    d.set(6, "580.126.20", ok);
    INFO(ok);
    CHECK(with_code(d.check(), "DRV003").empty());
  }
  Doc desktop;
  desktop.set(6, "580.126.20", "550.107.02");
  auto dd = with_code(desktop.check(), "DRV003");
  REQUIRE(dd.size() == 2);
  CHECK(dd[0].message.find("no Fabric Manager 550.107.02 is published (stack 'train': not a data-center release of "
                           "R550 the catalog knows)") != std::string::npos);
  Doc nodc;
  nodc.set(6, "580.126.20", "530.41.03");
  auto nd = with_code(nodc.check(), "DRV003");
  REQUIRE_FALSE(nd.empty());
  CHECK(nd[0].message.find("(stack 'train': R530 has no data-center releases)") != std::string::npos);
  CHECK(nd[0].hint.rfind("pin a data-center driver of a supported branch, e.g. 530.30.02 or 535.54.03", 0) == 0);
  // Four H100s per node have no NVSwitch, and neither does a PCIe card.
  Doc four = doc;
  four.set(24, "gpus_per_node: 8", "gpus_per_node: 4").set(32, "p5.48xlarge", "g6e.48xlarge");
  CHECK(with_code(four.check(), "DRV003").empty());
}

TEST_CASE("DRV004: kernel module flavours the GPU cannot run") {
  Doc blackwell;
  blackwell.set(6, "580.126.20", "570.133.20").set(7, "\"12.4\"", "\"12.8\"").set(24, "H100-80GB", "B200")
      .insert(7, "    kernel_modules: proprietary");
  check_diag(one(blackwell.check(), "DRV004"), Severity::Error, blackwell.after(8, "kernel_modules: "), "baremetal.node.train-a",
             "node pool 'train-a' runs B200 (Blackwell), which runs only the open NVIDIA kernel modules, but stack 'train' "
             "sets kernel_modules: proprietary",
             "set kernel_modules: open, or leave it out for NVIDIA's default");
  Doc volta;
  volta.set(24, "H100-80GB", "V100-32GB").set(25, "140", "40").insert(7, "    kernel_modules: open");
  CHECK(one(volta.check(), "DRV004").message ==
        "node pool 'train-a' runs V100-32GB (Volta), which runs only the proprietary NVIDIA kernel modules, but stack 'train' "
        "sets kernel_modules: open");
  CHECK(Doc().insert(7, "    kernel_modules: open").check().empty());
  CHECK(Doc().insert(7, "    kernel_modules: proprietary").check().empty());
}

TEST_CASE("DRV005: container toolkit releases with container escapes") {
  Doc doc;
  doc.insert(7, "    container_toolkit: \"1.16.1\"");
  auto d = one(doc.check(), "DRV005");
  CHECK(d.severity == Severity::Error);
  CHECK(d.loc == doc.at(8, "\"1.16.1\""));
  CHECK(d.message.rfind("stack 'train' pins NVIDIA Container Toolkit 1.16.1, affected by CVE-2024-0132 (", 0) == 0);
  CHECK(d.message.find("CVE-2025-23266") != std::string::npos);
  CHECK(d.hint == "pin container_toolkit \"1.17.8\" or newer, or leave it out for Plinth's default (1.17.8)");
  CHECK(Doc().insert(7, "    container_toolkit: \"1.17.8\"").check().empty());
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
  doc.set(6, "580.126.20", "470.82.01").set(7, "12.4", "11.4.4");
  check_diag(one(doc.check(), "CUDA003"), Severity::Error, doc.at(24, "H100-80GB"), "baremetal.node.train-a",
             "node pool 'train-a' runs H100-80GB (Hopper, compute capability 9.0), which needs CUDA 11.8 or newer, but stack "
             "'train' pins CUDA 11.4.4",
             "pin CUDA 11.8 or newer (with its minimum driver) in stack 'train'");
  // The same stack is fine for an Ampere GPU.
  Doc ampere = doc;
  ampere.set(24, "H100-80GB", "A100-80GB");
  CHECK(with_code(ampere.check(), "CUDA003").empty());
}

TEST_CASE("BURST004: a pool that trains across instances on a GPU network Plinth does not set up") {
  const std::string aws = "  - {name: aws-p5, provider: aws, region: us-east-1, instance_type: p5.48xlarge, desired: 0, max: 2, spot: true,";
  Doc gcp;
  gcp.set(32, aws, "  - {name: gcp-a3, provider: gcp, region: us-central1, instance_type: a3-highgpu-8g, desired: 0, max: 4, spot: true,");
  check_diag(one(gcp.check(), "BURST004"), Severity::Warning, gcp.at(32, "a3-highgpu-8g"), "gcp.instance.gcp-a3",
             "burst pool 'gcp-a3' (a3-highgpu-8g) may run 4 instances, whose GPUs reach each other through gpudirect-tcpx "
             "on 4 extra NICs, but the pool lists no gpu_subnetworks: NCCL between instances runs over TCP on the "
             "instance's one NIC",
             "list 4 subnetworks in gpu_subnetworks (one per GPU NIC, docs/providers/gcp.md), or set multi_node: false if "
             "each job fits one instance");
  // Subnetworks for the GPU NICs: the provider attaches them.
  CHECK(with_code(Doc(gcp).set(32, "max: 4,", "max: 4, gpu_subnetworks: [g1, g2, g3, g4],").check(), "BURST004").empty());
  // One instance at most, or one job per instance: nothing to say.
  CHECK(with_code(Doc(gcp).set(32, "max: 4", "max: 1").check(), "BURST004").empty());
  CHECK(with_code(Doc(gcp).set(32, "max: 4,", "max: 4, multi_node: false,").check(), "BURST004").empty());
  // A fallback type that needs it is flagged too, at its setting.
  Doc fallback = gcp;
  fallback.set(32, "instance_type: a3-highgpu-8g,", "instance_type: a2-highgpu-8g, machine_types: [a2-highgpu-8g, a3-megagpu-8g],");
  CHECK(one(fallback.check(), "BURST004").message.find("(a3-megagpu-8g) may run 4 instances") != std::string::npos);
  // EFA (AWS) and InfiniBand (Azure ND): the render sets them up.
  CHECK(with_code(Doc().check(), "BURST004").empty());
  CHECK(with_code(Doc().set(32, aws, "  - {name: nd, provider: azure, region: eastus, resource_group: rg, instance_type: "
                                     "Standard_ND96isr_H100_v5, desired: 0, max: 4, spot: true,").check(),
                  "BURST004").empty());
}

TEST_CASE("BURST005: GPU NIC subnetworks fewer than the machine type's GPU NICs, or for two kinds of NIC") {
  const std::string aws = "  - {name: aws-p5, provider: aws, region: us-east-1, instance_type: p5.48xlarge, desired: 0, max: 2, spot: true,";
  Doc mega;
  mega.set(32, aws, "  - {name: gcp-a3, provider: gcp, region: us-central1, instance_type: a3-megagpu-8g, desired: 0, max: 4, "
                    "gpu_subnetworks: [g1, g2, g3, g4], spot: true,");
  auto d = one(mega.check(), "BURST005");
  check_diag(d, Severity::Error, mega.at(32, "[g1"), "gcp.instance.gcp-a3",
             "burst pool 'gcp-a3' (a3-megagpu-8g) has 8 GPU NICs (gpudirect-tcpxo), but gpu_subnetworks lists 4 "
             "subnetworks",
             "list 8 subnetworks in gpu_subnetworks, one per GPU NIC");
  CHECK(with_code(mega.check(), "BURST004").empty());  // one finding, not two
  // Enough for A3 High, too few for its A3 Mega fallback.
  Doc high = mega;
  high.set(32, "instance_type: a3-megagpu-8g,", "instance_type: a3-highgpu-8g, machine_types: [a3-megagpu-8g],");
  CHECK(one(high.check(), "BURST005").message.find("(a3-megagpu-8g) has 8 GPU NICs") != std::string::npos);
  // Eight: A3 High takes the first four, A3 Mega all.
  Doc eight = high;
  eight.set(32, "[g1, g2, g3, g4]", "[g1, g2, g3, g4, g5, g6, g7, g8]");
  CHECK(with_code(eight.check(), "BURST005").empty());
  // A TCPXO type with an RDMA fallback: gVNIC and MRDMA NICs cannot share subnetworks.
  Doc mixed = eight;
  mixed.set(32, "machine_types: [a3-megagpu-8g]", "machine_types: [a3-ultragpu-8g]");
  CHECK(one(mixed.check(), "BURST005").message ==
        "burst pool 'gcp-a3' may launch a3-highgpu-8g and a3-ultragpu-8g, whose GPU NICs are of different kinds (gVNIC "
        "for GPUDirect-TCPX/TCPXO, MRDMA for GPUDirect RDMA), but lists one set of gpu_subnetworks");
}

TEST_CASE("CUDA004: burst instance type's GPU newer than the stack's CUDA") {
  Doc doc;
  doc.set(6, "580.126.20", "535.104.05").set(7, "12.4", "11.4.4").set(24, "H100-80GB", "A100-80GB");
  check_diag(one(doc.check(), "CUDA004"), Severity::Error, doc.at(32, "p5.48xlarge"), "aws.instance.aws-p5",
             "burst pool 'aws-p5' (p5.48xlarge) runs H100-80GB (Hopper, compute capability 9.0), which needs CUDA 11.8 or "
             "newer, but stack 'train' pins CUDA 11.4.4",
             "pin CUDA 11.8 or newer (with its minimum driver) in stack 'train'");
  Doc ampere = doc;
  ampere.set(32, "p5.48xlarge", "p4de.24xlarge");
  CHECK(codes(ampere.check()) == std::vector<std::string>{"DRV008"});  // R535's end of life, nothing else
}

TEST_CASE("GPU001: unknown GPU model with the closest names") {
  Doc doc;
  doc.set(24, "H100-80GB", "H100-80G");
  check_diag(one(doc.check(), "GPU001"), Severity::Error, doc.at(24, "H100-80G"), "baremetal.node.train-a",
             "unknown GPU model 'H100-80G' in node pool 'train-a'",
             "did you mean 'H100-80GB'? (the models are listed in docs/catalog.md)");
  Doc far;
  far.set(24, "H100-80GB", "Gaudi3");
  CHECK(one(far.check(), "GPU001").hint == "closest known: 'GB200', 'GB300', 'A10' (the models are listed in docs/catalog.md)");
  // Aliases and nvidia-smi product names are known models.
  CHECK(Doc().set(24, "H100-80GB", "\"NVIDIA H100 80GB HBM3\"").check().empty());
}

TEST_CASE("GPU002: unknown instance type with the closest names") {
  Doc typo;
  typo.set(32, "p5.48xlarge", "p5.48xlarg");
  CHECK(one(typo.check(), "GPU002").hint == "did you mean 'p5.48xlarge'? (the types are listed by plinth providers --json and in docs/providers/aws.md)");
  // Equally distant names: the one sharing the longer prefix wins.
  CHECK(one(Doc().set(32, "p5.48xlarge", "p5.96xlarge").check(), "GPU002").hint ==
        "did you mean 'p5.48xlarge'? (the types are listed by plinth providers --json and in docs/providers/aws.md)");
  Doc doc;
  doc.set(32, "p5.48xlarge", "p5.48xl");
  check_diag(one(doc.check(), "GPU002"), Severity::Error, doc.at(32, "p5.48xl"), "aws.instance.aws-p5",
             "unknown aws instance type 'p5.48xl' in burst pool 'aws-p5'",
             "closest known: 'p5.48xlarge', 'p5.4xlarge', 'p5e.48xlarge' (the types are listed by plinth providers --json and in docs/providers/aws.md)");
  // Instance types belong to their provider.
  Doc gcp;
  gcp.set(32, "provider: aws, region: us-east-1", "provider: gcp, region: us-central1");
  CHECK(one(gcp.check(), "GPU002").message == "unknown gcp instance type 'p5.48xlarge' in burst pool 'aws-p5'");
  // ... and the hint names the provider that sells it, not a look-alike of gcp's.
  CHECK(one(gcp.check(), "GPU002").hint ==
        "'p5.48xlarge' is an instance type of provider aws, not gcp: set provider: aws or use a gcp type");
  CHECK(with_code(Doc().set(32, "p5.48xlarge", "p4d.24xlarge").check(), "GPU002").empty());
}

TEST_CASE("GPU003: MIG on a GPU without MIG") {
  Doc doc;
  doc.set(23, "training", "inference").set(24, "H100-80GB, gpus_per_node: 8", "L40S, gpus_per_node: 8").set(25, "140", "10");
  doc.set(30, "{profile: none}", "{profile: \"3g.40gb\", instances: 2}");
  check_diag(one(doc.check(), "GPU003"), Severity::Error, doc.at(30, "\"3g"), "baremetal.node.train-a",
             "node pool 'train-a' asks for MIG (3g.40gb), but L40S does not support MIG",
             "set mig: {profile: none}, or use a MIG-capable GPU (A30, A100, H100, H200, GH200, B200)");
  CHECK(with_code(Doc().set(24, "H100-80GB", "L40S").set(25, "140", "10").check(), "GPU003").empty());
  // A named layout on a GPU without MIG is the same error.
  Doc layout = doc;
  layout.set(30, "{profile: \"3g.40gb\", instances: 2}", "{layout: all-balanced}");
  CHECK(one(layout.check(), "GPU003").message == "node pool 'train-a' asks for MIG (all-balanced), but L40S does not support MIG");
}

TEST_CASE("GPU004: MIG profile the GPU does not offer") {
  Doc doc;
  doc.set(30, "{profile: none}", "{profile: \"3g.20gb\", instances: 2}").set(25, "140", "10").set(23, "training", "inference");
  check_diag(one(doc.check(), "GPU004"), Severity::Error, doc.at(30, "\"3g"), "baremetal.node.train-a",
             "MIG profile '3g.20gb' of node pool 'train-a' does not exist on H100-80GB",
             "did you mean '3g.40gb'? H100-80GB offers 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb");
  // The same profile exists on an A100-40GB.
  Doc a100 = doc;
  a100.set(24, "H100-80GB", "A100-40GB");
  CHECK(a100.check().empty());
  // The H200 NVL is its own row: it has no 1g.35gb, which the SXM H200 has.
  Doc nvl;
  nvl.set(23, "training", "inference").set(24, "H100-80GB, gpus_per_node: 8", "H200-NVL, gpus_per_node: 4").set(25, "140", "10")
      .set(30, "{profile: none}", "{profile: \"1g.35gb\", instances: 4}");
  CHECK(one(nvl.check(), "GPU004").message == "MIG profile '1g.35gb' of node pool 'train-a' does not exist on H200-NVL");
  CHECK(with_code(Doc(nvl).set(24, "H200-NVL", "H200-141GB").check(), "GPU004").empty());
  // Each profile of a mixed layout is checked, at its own position.
  Doc mixed;
  mixed.set(23, "training", "inference").set(25, "140", "10")
      .set(30, "{profile: none}", "{profiles: {\"3g.40gb\": 1, \"2g.10gb\": 1}}");
  auto d = one(mixed.check(), "GPU004");
  CHECK(d.message == "MIG profile '2g.10gb' of node pool 'train-a' does not exist on H100-80GB");
  CHECK(d.loc == mixed.at(30, "1}}"));
}

TEST_CASE("GPU005: MIG layouts are checked with the GPU's placement rules") {
  Doc count;
  count.set(30, "{profile: none}", "{profile: \"3g.40gb\", instances: 3}").set(25, "140", "10").set(23, "training", "inference");
  check_diag(one(count.check(), "GPU005"), Severity::Error, count.at(30, "3}"), "baremetal.node.train-a",
             "MIG layout 3 x 3g.40gb of node pool 'train-a' does not fit H100-80GB: 3 x 3g.40gb exceeds the 2 instance(s) of "
             "3g.40gb that H100-80GB allows",
             "use at most 2 instance(s) of 3g.40gb per GPU");
  Doc zero;
  zero.set(30, "{profile: none}", "{profile: \"1g.10gb\"}").set(25, "140", "10").set(23, "training", "inference");
  check_diag(one(zero.check(), "GPU005"), Severity::Error, zero.at(30, "\"1g"), "baremetal.node.train-a",
             "node pool 'train-a' sets MIG profile 1g.10gb with 0 instances", "set mig.instances from 1 to 7");
  // Mixed layouts: the slice sums are not enough.
  auto mixed = [](const std::string& gpu, const std::string& profiles) {
    Doc d;
    d.set(23, "training", "inference").set(25, "140", "2").set(24, "H100-80GB", gpu)
        .set(30, "{profile: none}", "{profiles: {" + profiles + "}}");
    return d;
  };
  CHECK(one(mixed("H100-80GB", "\"3g.40gb\": 2, \"1g.10gb\": 1").check(), "GPU005").message ==
        "MIG layout 2 x 3g.40gb + 1 x 1g.10gb of node pool 'train-a' does not fit H100-80GB: needs 9 memory slices; "
        "H100-80GB has 8");
  // The A30 has one set of media engines: two '+me' instances never fit, though 3 of its 4 slices would.
  CHECK(one(mixed("A30-24GB", "\"1g.6gb+me\": 1, \"2g.12gb+me\": 1").check(), "GPU005").message ==
        "MIG layout 1 x 1g.6gb+me + 1 x 2g.12gb+me of node pool 'train-a' does not fit A30-24GB: a GPU has one set of media "
        "engines: at most one '+me' instance");
  // NVIDIA's documented mixed layouts, and mig-parted's all-balanced, fit.
  CHECK(mixed("H100-80GB", "\"4g.40gb\": 1, \"2g.20gb\": 1, \"1g.10gb\": 1").check().empty());
  CHECK(mixed("H100-80GB", "\"3g.40gb\": 1, \"2g.20gb\": 1, \"1g.10gb\": 2").check().empty());
  CHECK(Doc().set(23, "training", "inference").set(25, "140", "2").set(30, "{profile: none}", "{layout: all-balanced}")
            .check().empty());
  // Full single-profile layouts: 7 x 1g.10gb, 2 x 3g.40gb, 4 x 1g.20gb.
  for (const char* full : {"{profile: \"1g.10gb\", instances: 7}", "{profile: \"3g.40gb\", instances: 2}",
                           "{profile: \"1g.20gb\", instances: 4}"}) {
    INFO(full);
    CHECK(Doc().set(30, "{profile: none}", full).set(25, "140", "2").set(23, "training", "inference").check().empty());
  }
}

TEST_CASE("GPU006: the largest model's memory is estimated by role and may shard over RDMA") {
  // Training: 16 bytes per parameter (mixed-precision Adam) + 20%; one node of 8 x 80 GB.
  Doc one_node;
  one_node.set(22, "count: 4", "count: 1").set(25, "largest_model_gb: 140", "largest_model: {params_b: 70, precision: bf16}");
  check_diag(one(one_node.check(), "GPU006"), Severity::Error, one_node.at(25, "{params_b"), "baremetal.node.train-a",
             "node pool 'train-a' needs about 1344 GB of GPU memory for its largest model (full training of a 70B-parameter "
             "bf16 model with Adam in mixed precision: 16 bytes per parameter (1120 GB of weights, gradients and optimizer "
             "state) + 20% for activations), but has 640 GB on one node (8 x H100-80GB)",
             "shard across more nodes on an RDMA fabric, fine-tune with training: lora, or use GPUs with more memory");
  // Four nodes on InfiniBand shard it (2560 GB); without an RDMA fabric they cannot.
  Doc four = one_node;
  four.set(22, "count: 1", "count: 4");
  CHECK(with_code(four.check(), "GPU006").empty());
  Doc eth = four;
  eth.set(27, "fabric: ib", "fabric: eth").set(14, "{name: ib, kind: infiniband", "{name: eth, kind: ethernet");
  CHECK(one(eth.check(), "GPU006").message.find("but has 640 GB on one node (8 x H100-80GB); without an InfiniBand or RoCE "
                                                "fabric it cannot shard across nodes") != std::string::npos);
  // LoRA fine-tuning of the same model fits one node; so does serving it.
  CHECK(with_code(Doc(one_node).set(25, "precision: bf16}", "precision: bf16, training: lora}").check(), "GPU006").empty());
  Doc serve = one_node;
  serve.set(23, "training", "inference");
  CHECK(serve.check().empty());
  // Inference estimate: weights + 20% for the KV cache; a 70B fp16 model does not fit one 80 GB GPU.
  Doc small;
  small.set(23, "training", "inference").set(24, "gpus_per_node: 8", "gpus_per_node: 1").set(22, "count: 4", "count: 1")
      .set(24, "memory_gb: 2048", "memory_gb: 512").set(25, "largest_model_gb: 140", "largest_model: {params_b: 70, precision: fp16}");
  CHECK(one(small.check(), "GPU006").message ==
        "node pool 'train-a' needs about 168 GB of GPU memory for its largest model (inference of a 70B-parameter fp16 model: "
        "140 GB of weights + 20% for KV cache and activations), but has 80 GB on one node (1 x H100-80GB)");
  // int4 quantization: 35 GB of weights, 42 GB with the cache: fits.
  CHECK(Doc(small).set(25, "precision: fp16", "precision: int4").check().empty());
  // largest_model_gb is read as the bf16 weights' size; the message says so.
  Doc gb;
  gb.set(22, "count: 4", "count: 1");
  CHECK(one(gb.check(), "GPU006").message.find("full training of a 140 GB model (largest_model_gb, read as bf16 weights: 70B "
                                               "parameters)") != std::string::npos);
}

TEST_CASE("GPU007: training on GPUs without ECC, or several GPUs per node without NVLink") {
  Doc doc;
  doc.set(24, "H100-80GB", "RTX-4090").set(25, "140", "1");
  check_diag(one(doc.check(), "GPU007"), Severity::Warning, doc.at(24, "RTX-4090"), "baremetal.node.train-a",
             "training pool 'train-a' (4 x 8 RTX-4090) has no ECC memory and no NVLink between the GPUs of a node",
             "train on data-center GPUs with ECC (and NVLink for several GPUs per node), e.g. H100-80GB");
  // One node of 8 x RTX 4090 is multi-GPU training without NVLink and ECC: the old rule, gated on nodes, said nothing.
  CHECK(one(Doc(doc).set(22, "count: 4", "count: 1").check(), "GPU007").message ==
        "training pool 'train-a' (1 x 8 RTX-4090) has no ECC memory and no NVLink between the GPUs of a node");
  // L40S: ECC, no NVLink. Eight per node warn; one per node needs no NVLink, however many nodes.
  Doc l40s;
  l40s.set(24, "H100-80GB", "L40S").set(25, "140", "1");
  auto d = one(l40s.check(), "GPU007");
  CHECK(d.message == "training pool 'train-a' (4 x 8 L40S) has no NVLink between the GPUs of a node");
  CHECK(d.hint == "use one GPU per node, or GPUs with NVLink (e.g. H100-80GB)");
  CHECK(with_code(Doc(l40s).set(24, "gpus_per_node: 8", "gpus_per_node: 1").set(24, "memory_gb: 2048", "memory_gb: 512")
                      .check(), "GPU007").empty());
  // V100 PCIe has ECC but no NVLink (its own row now).
  CHECK(one(Doc().set(24, "H100-80GB", "V100-32GB-PCIe").set(25, "140", "1").check(), "GPU007").message ==
        "training pool 'train-a' (4 x 8 V100-32GB-PCIe) has no NVLink between the GPUs of a node");
  // Inference is not affected.
  CHECK(with_code(Doc(doc).set(23, "training", "inference").check(), "GPU007").empty());
}

TEST_CASE("GPU008: the largest model larger than one MIG instance") {
  Doc doc;
  doc.set(23, "training", "inference").set(30, "{profile: none}", "{profile: \"3g.40gb\", instances: 2}").set(25, "140", "70");
  check_diag(one(doc.check(), "GPU008"), Severity::Error, doc.at(25, "70"), "baremetal.node.train-a",
             "node pool 'train-a' needs about 84 GB per model replica (inference estimate: of a 70 GB model (largest_model_gb, "
             "read as bf16 weights: 35B parameters): 70 GB of weights + 20% for KV cache and activations), more than its "
             "largest MIG instance, 3g.40gb (40 GB)",
             "use a larger MIG profile, or mig: {profile: none} to give the model whole GPUs");
  // A 13B bf16 model (31.2 GB with its cache) fits a 3g.40gb instance.
  CHECK(Doc(doc).set(25, "largest_model_gb: 70", "largest_model: {params_b: 13, precision: bf16}").check().empty());
  CHECK(doc.set(30, "3g.40gb\", instances: 2", "7g.80gb\", instances: 1").set(25, "70", "60").check().empty());
}

TEST_CASE("GPU010: bfloat16 on GPUs without BF16") {
  Doc doc;
  doc.set(24, "H100-80GB", "V100-32GB").set(25, "140", "10").insert(7, "    precision: bf16");
  check_diag(one(doc.check(), "GPU010"), Severity::Error, doc.at(25, "V100-32GB"), "baremetal.node.train-a",
             "node pool 'train-a' declares bf16 but runs V100-32GB (Volta), which has no BF16 arithmetic",
             "use fp16 with loss scaling on Volta GPUs, or Ampere or newer GPUs for bf16");
  // The pool's model precision counts too (T4: Turing).
  Doc t4;
  t4.set(23, "training", "inference").set(24, "H100-80GB, gpus_per_node: 8", "T4, gpus_per_node: 1")
      .set(24, "memory_gb: 2048", "memory_gb: 64").set(25, "largest_model_gb: 140", "largest_model: {params_b: 3, precision: bf16}");
  CHECK(one(t4.check(), "GPU010").message == "node pool 'train-a' declares bf16 but runs T4 (Turing), which has no BF16 arithmetic");
  CHECK(with_code(Doc(t4).set(25, "bf16", "fp16").check(), "GPU010").empty());
  // Ampere and newer have it.
  CHECK(Doc().insert(7, "    precision: bf16").check().empty());
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
  CHECK(with_code(Doc().set(27, "fabric: ib", "bios: {SriovEnable: Enabled}").set(22, "4", "1").check(), "NET007").empty());
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

TEST_CASE("STO003: a network file system tier without an export") {
  Doc doc;
  doc.set(19, ", export: \"nfs.example:/home\"", "");
  check_diag(one(doc.check(), "STO003"), Severity::Error, doc.at(29, "home]"), "baremetal.node.train-a",
             "node pool 'train-a' lists nfs tier 'home', which has no export to mount",
             "set export: on tier 'home' (nfs \"server:/path\", lustre \"mgs@o2ib:/fsname\", gpfs the device, weka "
             "\"backend/fs\", beegfs the management host)");
}

TEST_CASE("STO004: transport encryption the file system cannot give the pool") {
  Doc doc;
  doc.set(19, "export: \"nfs.example:/home\"}", "export: \"nfs.example:/home\", encryption: {in_transit: tls1.3}}");
  check_diag(one(doc.check(), "STO004"), Severity::Error, doc.after(19, "in_transit: "), "storage.tier.home",
             "tier 'home' asks for encryption in transit (tls1.3), but NFS RPC-with-TLS (xprtsec=tls) needs Linux 6.5 and "
             "ktls-utils, and node pool 'train-a' runs ubuntu-22.04",
             "run the pool on os: ubuntu-24.04, or drop encryption.in_transit");
  CHECK(Doc(doc).insert(30, "    os: ubuntu-24.04").check().empty());
  // WEKA has no per-mount encryption; Lustre (SSK) has.
  Doc weka;
  weka.set(19, "{name: home, kind: nfs, export: \"nfs.example:/home\"}",
           "{name: home, kind: parallel-fs, backend: weka, export: \"weka01/fs1\", encryption: {in_transit: tls1.3}}");
  CHECK(one(weka.check(), "STO004").message ==
        "tier 'home' asks for encryption in transit (tls1.3), but weka has no per-mount encryption in transit for node pool "
        "'train-a'");
  CHECK(Doc(weka).set(19, "backend: weka, export: \"weka01/fs1\"", "backend: lustre, export: \"10.1.0.1@o2ib:/fs1\"")
            .check().empty());
}

TEST_CASE("BAL001-003: CPU cores, RDMA NICs and fabric bandwidth per GPU") {
  Doc cores;
  cores.set(24, "memory_gb: 2048", "cpu_cores: 48, memory_gb: 2048");
  check_diag(one(cores.check(), "BAL001"), Severity::Warning, cores.after(24, "cpu_cores: "), "baremetal.node.train-a",
             "node pool 'train-a' has 48 CPU cores for 8 GPUs (6 per GPU, fewer than 8)",
             "give each GPU at least 8 CPU cores (64 for this node); NVIDIA's DGX systems have 14-16");
  CHECK(Doc().set(24, "memory_gb: 2048", "cpu_cores: 64, memory_gb: 2048").check().empty());
  Doc nics;
  nics.set(24, "memory_gb: 2048", "memory_gb: 2048, rdma_nics: 4");
  check_diag(one(nics.check(), "BAL002"), Severity::Warning, nics.after(24, "rdma_nics: "), "baremetal.node.train-a",
             "multi-node training pool 'train-a' has 4 RDMA NIC(s) for 8 H100-80GB GPUs per node; rail-optimised designs give "
             "every GPU its own NIC",
             "one RDMA NIC per GPU (8 per node)");
  CHECK(Doc().set(24, "memory_gb: 2048", "memory_gb: 2048, rdma_nics: 8").check().empty());
  Doc speed;
  speed.set(14, "kind: infiniband,", "kind: infiniband, speed_gbps: 100,");
  check_diag(one(speed.check(), "BAL003"), Severity::Warning, speed.after(14, "speed_gbps: "), "net.fabric.ib",
             "fabric 'ib' gives multi-node training pool 'train-a' 100 Gb/s per H100-80GB GPU, below 200 Gb/s",
             "use a 400 Gb/s (NDR InfiniBand / 400GbE RoCE) fabric with one NIC per GPU");
  CHECK(Doc().set(14, "kind: infiniband,", "kind: infiniband, speed_gbps: 400,").check().empty());
  // Ampere pools and single nodes are not held to the H100 rail design.
  CHECK(with_code(Doc(speed).set(24, "H100-80GB", "A100-80GB").check(), "BAL003").empty());
  CHECK(with_code(Doc(speed).set(22, "count: 4", "count: 1").check(), "BAL003").empty());
}

TEST_CASE("BURST002: spot checkpoints on node-local NVMe are lost on reclaim") {
  Doc doc;
  doc.set(32, "target: home}", "target: hot}");
  check_diag(one(doc.check(), "BURST002"), Severity::Error, doc.at(32, "hot}"), "aws.instance.aws-p5",
             "spot burst pool 'aws-p5' checkpoints to nvme tier 'hot', node-local storage that is lost when the instance is "
             "reclaimed",
             "checkpoint to an object, nfs or parallel-fs tier");
  CHECK(with_code(Doc(doc).set(32, "spot: true", "spot: false").check(), "BURST002").empty());
}

TEST_CASE("NET008: RDMA without GPUDirect: inbox rdma-core with the proprietary modules") {
  Doc doc;
  doc.set(14, "oversubscription: \"1:1\"}", "oversubscription: \"1:1\", rdma_stack: inbox}").insert(7, "    kernel_modules: proprietary");
  check_diag(one(doc.check(), "NET008"), Severity::Warning, doc.after(28, "fabric: "), "baremetal.node.train-a",
             "node pool 'train-a' uses the inbox RDMA stack (rdma-core) on fabric 'ib' with the proprietary kernel modules, so "
             "GPUDirect RDMA (dma-buf) is not available",
             "use the open kernel modules (kernel_modules: open in stack 'train'), or rdma_stack: doca-ofed on the fabric for "
             "nvidia-peermem");
  CHECK(Doc(doc).set(8, "proprietary", "open").check().empty());
  // RHEL-family pools default to the inbox stack.
  Doc rocky;
  rocky.insert(7, "    kernel_modules: proprietary").insert(30, "    os: rocky-9");
  CHECK(one(rocky.check(), "NET008").address == "baremetal.node.train-a");
}

TEST_CASE("NET009: a VRF name that cannot become a Linux device") {
  Doc doc;
  doc.set(11, "vrf: ml}", "vrf: machine-learning}");
  check_diag(one(doc.check(), "NET009"), Severity::Error, doc.after(11, "vrf: "), "net.vlan.fab",
             "VLAN 'fab' names VRF 'machine-learning', which cannot become the Linux device 'vrf-machine-learning'",
             "use at most 11 letters, digits, '.', '_' or '-' (Linux interface names have at most 15 characters)");
  CHECK(Doc().set(11, "vrf: ml}", "vrf: ml-fabric01}").set(12, "vrf: ml}", "vrf: ml-fabric01}").check().empty());
}

TEST_CASE("BURST001: spot burst pool without checkpointing") {
  Doc doc;
  doc.set(32, ", checkpointing: {interval_minutes: 30, target: home}", "");
  check_diag(one(doc.check(), "BURST001"), Severity::Error, doc.at(32, "true"), "aws.instance.aws-p5",
             "spot burst pool 'aws-p5' has no checkpointing",
             "add checkpointing: {interval_minutes: 30, target: TIER}, or set spot: false");
  CHECK(doc.set(32, "spot: true", "spot: false").check().empty());
  Doc azure;
  azure.set(32, "provider: aws, region: us-east-1, instance_type: p5.48xlarge",
            "provider: azure, region: eastus, instance_type: Standard_ND96isr_H100_v5")
      .set(32, ", checkpointing: {interval_minutes: 30, target: home}", "");
  CHECK(one(azure.check(), "BURST001").address == "azure.vm.aws-p5");
}

TEST_CASE("the rules aggregate across 10,000 nodes in 500 pools") {
  bp::Blueprint b;
  b.stacks.push_back({"s", "550.54.15", "12.4", "", {}, {}, {}});
  b.fabrics.push_back({"ib", "infiniband", 400, "", "2:1", std::nullopt, std::nullopt, {}});
  b.tiers.push_back({"nfs", "nfs", 1, "", "", "", std::nullopt, std::nullopt, "nfs.example:/data"});
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

TEST_CASE("IMG002 and IMG003: a burst pool's image runs the rendered user-data and leaves the driver to it") {
  // Issue 31, item 5: the catalog knows what some cloud images are (docs/catalog.md, cloud images).
  Doc doc;
  doc.set(32, "provider: aws, region: us-east-1, instance_type: p5.48xlarge",
          "provider: azure, region: eastus, resource_group: rg, image: \"Canonical:ubuntu-24_04-lts:server:latest\", "
          "instance_type: Standard_ND96isr_H100_v5");
  auto d = one(doc.check(), "IMG002");
  CHECK(d.severity == Severity::Error);
  CHECK(d.address == "azure.vm.aws-p5");
  CHECK(d.message ==
        "burst pool 'aws-p5' is rendered for ubuntu-22.04 but boots Canonical:ubuntu-24_04-lts:server:latest (ubuntu-24.04)");
  CHECK(d.hint == "set os: ubuntu-24.04 on the pool, or boot a ubuntu-22.04 image");
  // Rendered for the image's release, or the 22.04 image: nothing to say.
  CHECK(Doc(doc).set(32, "resource_group: rg,", "resource_group: rg, os: ubuntu-24.04,").check().empty());
  CHECK(Doc(doc).set(32, "ubuntu-24_04-lts:server", "0001-com-ubuntu-server-jammy:22_04-lts-gen2").check().empty());
  // The HPC image brings its own driver.
  auto hpc = Doc(doc).set(32, "Canonical:ubuntu-24_04-lts:server:latest", "microsoft-dsvm:ubuntu-hpc:2204:latest").check();
  CHECK(one(hpc, "IMG003").message ==
        "burst pool 'aws-p5' boots microsoft-dsvm:ubuntu-hpc:2204:latest, which comes with its own NVIDIA driver; the "
        "stack's pinned driver would be installed over it");
  CHECK(with_code(hpc, "IMG002").empty());
  // Images the catalog does not know (an AMI id says nothing) are not judged.
  CHECK(with_code(Doc().check(), "IMG002").empty());
}
