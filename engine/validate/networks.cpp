// The rules on networks: VLAN ids, CIDRs and their overlap per VRF, VRF
// names, RoCE flow control, and oversubscribed fabrics carrying training.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <exception>
#include <optional>
#include <tuple>

#include "engine/core/ipv4.h"
#include "engine/validate/checker.h"

namespace plinth::validate {

const RuleInfo NET001{
    "NET001", Severity::Error, "VLAN id outside 1-4094", "Position: `id`.",
    "IEEE 802.1Q: the VLAN id has 12 bits; 0 and 4095 are reserved.", "use an id from 1 to 4094"};
const RuleInfo NET002{
    "NET002", Severity::Error, "duplicate VLAN id",
    "A second VLAN uses the id of an earlier one (the message names its position). Position: the later VLAN's `id`.",
    "Two VLANs with one 802.1Q id are one broadcast domain; switches cannot tell them apart.", "give each VLAN its own id"};
const RuleInfo NET003{
    "NET003", Severity::Error, "invalid CIDR",
    "`cidr` is not an IPv4 `address/prefix` (each octet 0-255 without leading zeros, prefix 0-32), or has host bits set "
    "(`10.100.3.1/16`; the hint gives the network address). Position: `cidr`.",
    "RFC 4632. IPv6 VLAN subnets are not supported yet.", "write the network address and prefix, e.g. `10.100.0.0/16`"};
const RuleInfo NET004{
    "NET004", Severity::Error, "overlapping CIDRs in one VRF",
    "Two VLANs with the same `vrf` (an empty `vrf` is the default routing table) have overlapping subnets. Reported "
    "on the VLAN written later, naming the other. VLANs in different VRFs may reuse addresses. Position: `cidr`.",
    "Overlapping subnets in one routing table (VRF) make routes ambiguous; separate VRFs may reuse addresses.",
    "disjoint subnets, or separate VRFs"};
const RuleInfo NET005{
    "NET005", Severity::Warning, "RoCE fabric without PFC and ECN",
    "A `kind: roce-v2` fabric does not set both `pfc: true` and `ecn: true`. Position: the `false` field, else `kind`.",
    "RoCE v2 needs priority flow control (IEEE 802.1Qbb) and ECN for congestion control (DCQCN); NVIDIA's RoCE "
    "configuration guides enable both.",
    "set both and configure them on the switches"};
const RuleInfo NET006{
    "NET006", Severity::Warning, "oversubscribed fabric carrying a training pool",
    "A fabric with `oversubscription` above 1:1 is used by at least one training pool (reported once per fabric, "
    "naming the first pool). Position: `oversubscription`.",
    "All-reduce runs at the speed of the slowest link; NVIDIA's DGX SuperPOD reference architecture uses a "
    "non-blocking fabric for compute traffic.",
    "`oversubscription: \"1:1\"`, or move training to a non-blocking fabric (inference may share)"};
const RuleInfo NET009{
    "NET009", Severity::Error, "VRF name that cannot become a Linux device",
    "A VLAN's `vrf` has characters other than letters, digits, '.', '_' and '-', or more than 11 of them. Position: `vrf`.",
    "The renderer creates the VRF as the Linux device `vrf-NAME`, and Linux interface names have at most 15 "
    "characters (IFNAMSIZ 16 with the terminating NUL).",
    "use a shorter VRF name"};

namespace {

using Range = Ipv4Range;

// "2:1" -> 2.0; nullopt when malformed (the loader reports that).
std::optional<double> ratio(const std::string& text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  try {
    double down = std::stod(text.substr(0, colon));
    double up = std::stod(text.substr(colon + 1));
    if (up <= 0) return std::nullopt;
    return down / up;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string cidr_text(const Range& r, const std::string& written) {
  std::string s;
  for (int shift = 24; shift >= 0; shift -= 8) s += std::to_string((r.first >> shift) & 0xff) + (shift ? "." : "");
  return s + written.substr(written.find('/'));
}

}  // namespace

void Checker::check_vlans() {
  std::unordered_map<int, const bp::Vlan*> by_id;
  struct Net {
    Range range;
    const bp::Vlan* vlan;
    size_t index;
  };
  std::vector<Net> nets;
  for (size_t i = 0; i < bp_.vlans.size(); ++i) {
    const auto& v = bp_.vlans[i];
    std::string addr = "net.vlan." + v.name;
    if (v.id < 1 || v.id > 4094) {
      add(NET001, v.origin.at("id"), addr, "VLAN '" + v.name + "' has id " + std::to_string(v.id) + ", outside 1-4094",
          "use an 802.1Q id from 1 to 4094 (0 and 4095 are reserved)");
    } else if (auto [it, fresh] = by_id.emplace(v.id, &v); !fresh) {
      add(NET002, v.origin.at("id"), addr,
          "VLAN '" + v.name + "' reuses id " + std::to_string(v.id) + " of VLAN '" + it->second->name + "' (" +
              it->second->origin.at("id").str() + ")",
          "give each VLAN its own id");
    }
    auto range = parse_cidr(v.cidr);
    if (!range) {
      add(NET003, v.origin.at("cidr"), addr, "VLAN '" + v.name + "' has invalid CIDR '" + v.cidr + "'",
          "write an IPv4 network as address/prefix, e.g. 10.100.0.0/16");
    } else if (range->host_bits) {
      add(NET003, v.origin.at("cidr"), addr, "VLAN '" + v.name + "' has CIDR '" + v.cidr + "' with host bits set",
          "write the network address: " + cidr_text(*range, v.cidr));
    } else {
      nets.push_back({*range, &v, i});
    }
    if (!v.vrf.empty() &&
        (v.vrf.size() > 11 || !std::all_of(v.vrf.begin(), v.vrf.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         })))
      add(NET009, v.origin.at("vrf"), addr,
          "VLAN '" + v.name + "' names VRF '" + v.vrf + "', which cannot become the Linux device 'vrf-" + v.vrf + "'",
          "use at most 11 letters, digits, '.', '_' or '-' (Linux interface names have at most 15 characters)");
  }
  // Sweep each VRF's networks by start address: O(n log n), not pairwise.
  std::sort(nets.begin(), nets.end(), [](const Net& a, const Net& b) {
    return std::tie(a.vlan->vrf, a.range.first, a.index) < std::tie(b.vlan->vrf, b.range.first, b.index);
  });
  const Net* widest = nullptr;  // the network reaching furthest so far in this VRF
  for (const auto& n : nets) {
    if (widest && widest->vlan->vrf == n.vlan->vrf && n.range.first <= widest->range.last) {
      // Report on the one written later, naming the other.
      const Net& later = n.index > widest->index ? n : *widest;
      const Net& earlier = n.index > widest->index ? *widest : n;
      std::string vrf = n.vlan->vrf.empty() ? "the default VRF" : "VRF '" + n.vlan->vrf + "'";
      add(NET004, later.vlan->origin.at("cidr"), "net.vlan." + later.vlan->name,
          "CIDR " + later.vlan->cidr + " of VLAN '" + later.vlan->name + "' overlaps " + earlier.vlan->cidr + " of VLAN '" +
              earlier.vlan->name + "' in " + vrf,
          "give the VLANs disjoint subnets, or put them in different VRFs");
    }
    if (!widest || widest->vlan->vrf != n.vlan->vrf || n.range.last > widest->range.last) widest = &n;
  }
}

void Checker::check_fabric(const bp::Fabric& f) {
  if (f.kind != "roce-v2") return;
  bool pfc = f.pfc.value_or(false), ecn = f.ecn.value_or(false);
  if (pfc && ecn) return;
  std::string missing = !pfc && !ecn ? "PFC and ECN" : !pfc ? "PFC" : "ECN";
  const SourceLoc& at = !pfc && f.pfc ? f.origin.at("pfc") : !ecn && f.ecn ? f.origin.at("ecn") : f.origin.at("kind");
  add(NET005, at, "net.fabric." + f.name, "RoCE fabric '" + f.name + "' does not enable " + missing,
      "set pfc: true and ecn: true, and configure them on the switches (lossless priority for RoCE traffic)");
}

// NET006: once per fabric, at its oversubscription, naming the first training pool.
void Checker::check_fabric_use() {
  for (const auto& f : bp_.fabrics) {
    auto it = fabric_training_pool_.find(f.name);
    if (it == fabric_training_pool_.end()) continue;
    auto r = ratio(f.oversubscription);
    if (!r || *r <= 1.0) continue;
    add(NET006, f.origin.at("oversubscription"), "net.fabric." + f.name,
        "fabric '" + f.name + "' is oversubscribed " + f.oversubscription + " but carries training pool '" +
            it->second->name + "'",
        "make the fabric non-blocking (oversubscription: \"1:1\") or move training to a 1:1 fabric");
  }
}

}  // namespace plinth::validate
