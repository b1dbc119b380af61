#include "tests/emulators/gcp/instance_spec.h"

#include <openssl/evp.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "tests/emulators/gcp/catalog.h"

namespace plinth::gcp_emulator {

using nlohmann::json;

namespace {

const char* kNameRegex = "(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?|[1-9][0-9]{0,19})";
const std::regex kName(R"([a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)");
const std::regex kLabelKey(R"([a-z][a-z0-9_-]{0,62})");
const std::regex kLabelValue(R"([a-z0-9_-]{0,63})");
const std::regex kMetadataKey(R"([a-zA-Z0-9_-]{1,128})");
const std::string kScopePrefix = "https://www.googleapis.com/auth/";

/// Top-level Instance fields: the compute.v1 discovery document's (revision
/// 20211004) plus those the API gained since.
const std::set<std::string> kInstanceFields = {
    "advancedMachineFeatures", "canIpForward", "confidentialInstanceConfig", "cpuPlatform", "creationTimestamp",
    "deletionProtection", "description", "disks", "displayDevice", "fingerprint", "guestAccelerators", "hostname", "id",
    "kind", "labelFingerprint", "labels", "lastStartTimestamp", "lastStopTimestamp", "lastSuspendedTimestamp",
    "machineType", "metadata", "minCpuPlatform", "name", "networkInterfaces", "privateIpv6GoogleAccess",
    "reservationAffinity", "resourcePolicies", "satisfiesPzs", "scheduling", "selfLink", "serviceAccounts",
    "shieldedInstanceConfig", "shieldedInstanceIntegrityPolicy", "startRestricted", "status", "statusMessage", "tags",
    "zone",
    // newer than the stored discovery document
    "keyRevocationActionType", "networkPerformanceConfig", "params", "resourceStatus", "sourceMachineImage",
    "instanceEncryptionKey", "satisfiesPzi"};
const std::set<std::string> kSchedulingFields = {
    "automaticRestart", "locationHint", "minNodeCpus", "nodeAffinities", "onHostMaintenance", "preemptible",
    // newer than the stored discovery document
    "provisioningModel", "instanceTerminationAction", "maxRunDuration", "terminationTime", "onInstanceStopAction",
    "availabilityDomain", "hostErrorTimeoutSeconds", "localSsdRecoveryTimeout"};
const std::set<std::string> kDiskTypes = {"pd-standard",          "pd-balanced",        "pd-ssd",
                                          "pd-extreme",           "hyperdisk-balanced", "hyperdisk-extreme",
                                          "hyperdisk-throughput", "local-ssd"};

std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// The path segments of a resource reference: a full URL
/// (https://HOST/compute/v1/projects/...) or a partial one (projects/..., zones/..., global/..., regions/...).
std::vector<std::string> ref_segments(const std::string& ref) {
  std::string rest = ref;
  if (rest.rfind("https://", 0) == 0 || rest.rfind("http://", 0) == 0) {
    auto at = rest.find("/projects/");
    if (at == std::string::npos) return {};
    rest = rest.substr(at + 1);
  }
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= rest.size()) {
    auto end = rest.find('/', start);
    if (end == std::string::npos) end = rest.size();
    out.push_back(rest.substr(start, end - start));
    start = end + 1;
  }
  for (const auto& s : out)
    if (s.empty()) return {};
  return out;
}

/// Matches `ref` against [projects/PROJECT/]KIND/SCOPE/COLLECTION/NAME (or
/// [projects/PROJECT/]global/COLLECTION/NAME when `scope_kind` is "global").
/// Fills project (default: ours), scope and name.
bool parse_ref(const std::string& ref, const std::string& scope_kind, const std::string& collection,
               const std::string& default_project, std::string& project, std::string& scope, std::string& name) {
  auto seg = ref_segments(ref);
  project = default_project;
  if (seg.size() >= 2 && seg[0] == "projects") {
    project = seg[1];
    seg.erase(seg.begin(), seg.begin() + 2);
  }
  if (scope_kind == "global") {
    if (seg.size() != 3 || seg[0] != "global" || seg[1] != collection) return false;
    scope.clear();
    name = seg[2];
    return true;
  }
  if (seg.size() != 4 || seg[0] != scope_kind || seg[2] != collection) return false;
  scope = seg[1];
  name = seg[3];
  return true;
}

}  // namespace

std::string fingerprint(const std::string& content) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(content.data(), content.size(), md, &len, EVP_sha256(), nullptr);
  static const char* b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (int i = 0; i < 9; i += 3) {
    uint32_t v = (md[i] << 16) | (md[i + 1] << 8) | (i + 2 < 8 ? md[i + 2] : 0);
    out += b64[(v >> 18) & 63];
    out += b64[(v >> 12) & 63];
    out += b64[(v >> 6) & 63];
    out += i + 2 < 8 ? b64[v & 63] : '=';
  }
  return out;
}

std::optional<ApiAnswer> check_labels(const json& labels, const std::string& field,
                                      std::map<std::string, std::string>& out) {
  if (!labels.is_object()) return invalid_field(field, labels.dump(), "Must be an object.");
  if (labels.size() > 64) return invalid_field(field, "", "A resource can have at most 64 labels.");
  std::map<std::string, std::string> checked;
  for (const auto& [k, v] : labels.items()) {
    if (!std::regex_match(k, kLabelKey))
      return invalid_field(field, "",
                           "Label key '" + k +
                               "' violates format constraints. The key must start with a lowercase character, can "
                               "only contain lowercase letters, numeric characters, underscores and dashes. The key "
                               "can be at most 63 characters long. International characters are allowed.");
    std::string val = text_of(v);
    if (!v.is_string() || !std::regex_match(val, kLabelValue))
      return invalid_field(field, "",
                           "Label value '" + val +
                               "' violates format constraints. The value can only contain lowercase letters, "
                               "numeric characters, underscores and dashes. The value can be at most 63 characters "
                               "long. International characters are allowed.");
    checked[k] = val;
  }
  out = std::move(checked);
  return std::nullopt;
}

std::optional<ApiAnswer> build_instance_spec(const json& body, const SpecScope& scope, uint64_t& ip_seq,
                                             InstanceSpec& out) {
  const std::string& zone = scope.zone;
  auto link = [&](const std::string& rest) { return scope.compute_base + rest; };
  auto zone_link = [&](const std::string& z) {
    return scope.compute_base + "projects/" + scope.project + "/zones/" + z;
  };
  if (!body.is_object())
    return error_answer(400, "parseError", "Invalid JSON payload received. The request body is not a JSON object.",
                        "global", "INVALID_ARGUMENT");
  for (const auto& [k, v] : body.items())
    if (!kInstanceFields.count(k))
      return error_answer(400, "invalid",
                          "Invalid JSON payload received. Unknown name \"" + k + "\" at 'resource': Cannot find field.",
                          "global", "INVALID_ARGUMENT");

  // name
  std::string name = body.contains("name") ? text_of(body["name"]) : "";
  if (!body.contains("name") || !body["name"].is_string() || !std::regex_match(name, kName))
    return invalid_field("resource.name", name, std::string("Must be a match of regex '") + kNameRegex + "'");

  // machineType
  std::string mt_ref = body.contains("machineType") ? text_of(body["machineType"]) : "";
  if (mt_ref.empty()) return invalid_field("resource.machineType", "", "Machine type must be specified.");
  std::string ref_project, ref_zone, mt_name;
  if (!parse_ref(mt_ref, "zones", "machineTypes", scope.project, ref_project, ref_zone, mt_name))
    return invalid_field("resource.machineType", mt_ref,
                         "The URL is malformed. Use zones/ZONE/machineTypes/TYPE or a full URL.");
  if (ref_project != scope.project || ref_zone != zone)
    return invalid_field("resource.machineType", mt_ref,
                         "Machine type must be in the same project and zone as the instance (projects/" +
                             scope.project + "/zones/" + zone + ").");
  const MachineType* mt = find_machine_type(mt_name);
  if (!mt)
    return invalid_field("resource.machineType", mt_ref,
                         "Machine type with name '" + mt_name + "' does not exist in zone '" + zone + "'.");

  out.name = name;
  out.machine_type = mt->name;
  json& spec = out.spec;
  spec = json::object();
  if (body.contains("description")) spec["description"] = body["description"];

  // guestAccelerators
  std::string acc_name = mt->accelerator;
  int acc_count = mt->accelerator_count;
  if (body.contains("guestAccelerators") && !body["guestAccelerators"].empty()) {
    const json& ga = body["guestAccelerators"];
    if (!ga.is_array() || ga.size() != 1 || !ga[0].is_object())
      return invalid_field("resource.guestAccelerators", ga.dump(), "Exactly one accelerator type may be attached.");
    std::string aref = ga[0].contains("acceleratorType") ? text_of(ga[0]["acceleratorType"]) : "";
    std::string ap, az, an;
    if (!parse_ref(aref, "zones", "acceleratorTypes", scope.project, ap, az, an) || az != zone)
      return invalid_field("resource.guestAccelerators[0].acceleratorType", aref,
                           "The URL is malformed. Use zones/" + zone + "/acceleratorTypes/TYPE or a full URL.");
    const AcceleratorType* at = find_accelerator_type(an);
    if (!at)
      return invalid_field("resource.guestAccelerators[0].acceleratorType", aref,
                           "Accelerator type '" + an + "' does not exist in zone '" + zone + "'.");
    int count = ga[0].value("acceleratorCount", 0);
    if (mt->accelerator_count) {
      if (an != mt->accelerator || count != mt->accelerator_count)
        return invalid_field("resource.guestAccelerators[0]", an + ":" + std::to_string(count),
                             "Machine type '" + mt->name + "' comes with " + std::to_string(mt->accelerator_count) +
                                 " " + mt->accelerator +
                                 " accelerator(s); omit guestAccelerators or request exactly "
                                 "those.");
    } else if (!mt->accepts_accelerators) {
      return invalid_field("resource.guestAccelerators", an,
                           "Machine type '" + mt->name +
                               "' does not support accelerators; attach GPUs to an N1 "
                               "machine type or use an accelerator-optimized one (A2, A3, G2).");
    } else if (std::find(at->attachable_counts.begin(), at->attachable_counts.end(), count) ==
               at->attachable_counts.end()) {
      std::string allowed;
      for (int n : at->attachable_counts) allowed += (allowed.empty() ? "" : ", ") + std::to_string(n);
      return invalid_field(
          "resource.guestAccelerators[0].acceleratorCount", std::to_string(count),
          at->attachable_counts.empty()
              ? "Accelerator type '" + an + "' comes only with its accelerator-optimized machine types."
              : "Accelerator type '" + an + "' can be attached in counts of " + allowed + ".");
    }
    acc_name = an;
    acc_count = count;
  }
  if (acc_count) {
    spec["guestAccelerators"] = json::array({{{"acceleratorType", zone_link(zone) + "/acceleratorTypes/" + acc_name},
                                              {"acceleratorCount", acc_count},
                                              {"_name", acc_name}}});
  }

  // scheduling
  json sched = body.value("scheduling", json::object());
  if (!sched.is_object()) return invalid_field("resource.scheduling", sched.dump(), "Must be an object.");
  for (const auto& [k, v] : sched.items())
    if (!kSchedulingFields.count(k))
      return error_answer(
          400, "invalid",
          "Invalid JSON payload received. Unknown name \"" + k + "\" at 'resource.scheduling': Cannot find field.",
          "global", "INVALID_ARGUMENT");
  std::string model = sched.value("provisioningModel", "");
  if (!model.empty() && model != "SPOT" && model != "STANDARD")
    return invalid_field("resource.scheduling.provisioningModel", model, "Allowed values are SPOT and STANDARD.");
  bool preemptible = sched.value("preemptible", false);
  if (preemptible && model == "STANDARD")
    return invalid_field("resource.scheduling.provisioningModel", model,
                         "A preemptible instance cannot have provisioning model STANDARD.");
  out.spot = model == "SPOT" || preemptible;
  std::string action = sched.value("instanceTerminationAction", "");
  if (!action.empty() && action != "STOP" && action != "DELETE")
    return invalid_field("resource.scheduling.instanceTerminationAction", action,
                         "Allowed values are STOP and DELETE.");
  if (!action.empty() && !out.spot)
    return invalid_field("resource.scheduling.instanceTerminationAction", action,
                         "Instance termination action can only be set for Spot or preemptible VMs.");
  std::string maintenance = sched.value("onHostMaintenance", out.spot ? "TERMINATE" : "MIGRATE");
  if (maintenance != "MIGRATE" && maintenance != "TERMINATE")
    return invalid_field("resource.scheduling.onHostMaintenance", maintenance,
                         "Allowed values are MIGRATE and TERMINATE.");
  bool restart = sched.value("automaticRestart", !out.spot);
  if (out.spot && maintenance == "MIGRATE")
    return invalid_field("resource.scheduling.onHostMaintenance", maintenance,
                         "Spot and preemptible instances cannot be live-migrated; use TERMINATE.");
  if (out.spot && restart)
    return invalid_field("resource.scheduling.automaticRestart", "true",
                         "Spot and preemptible instances cannot be restarted automatically.");
  if (acc_count && maintenance != "TERMINATE")
    return error_answer(400, "badRequest", "Instances with guest accelerators do not support live migration.");
  out.termination_action = out.spot ? (action.empty() ? "STOP" : action) : "";
  json sched_out = {{"onHostMaintenance", maintenance},
                    {"automaticRestart", restart},
                    {"preemptible", preemptible},
                    {"provisioningModel", out.spot ? "SPOT" : "STANDARD"}};
  if (out.spot) sched_out["instanceTerminationAction"] = out.termination_action;
  for (const char* keep : {"nodeAffinities", "minNodeCpus", "locationHint", "maxRunDuration", "terminationTime"})
    if (sched.contains(keep)) sched_out[keep] = sched[keep];
  spec["scheduling"] = sched_out;

  // disks
  if (!body.contains("disks") || !body["disks"].is_array() || body["disks"].empty())
    return invalid_field("resource.disks", "", "No disks are specified; an instance needs a boot disk.");
  json disks_out = json::array();
  int boot_count = 0;
  for (size_t i = 0; i < body["disks"].size(); ++i) {
    const json& d = body["disks"][i];
    std::string f = "resource.disks[" + std::to_string(i) + "]";
    if (!d.is_object()) return invalid_field(f, d.dump(), "Must be an object.");
    bool boot = d.value("boot", i == 0);
    boot_count += boot ? 1 : 0;
    if (d.contains("source"))
      return invalid_field(f + ".source", text_of(d["source"]),
                           "gcp-emulator creates disks with the instance only; use initializeParams.");
    if (!d.contains("initializeParams") || !d["initializeParams"].is_object())
      return invalid_field(f + ".initializeParams", "", "A new disk needs initializeParams.");
    const json& ip = d["initializeParams"];
    NewDisk disk;
    disk.name = ip.value("diskName", i == 0 ? name : name + "-" + std::to_string(i));
    if (!std::regex_match(disk.name, kName))
      return invalid_field(f + ".initializeParams.diskName", disk.name,
                           std::string("Must be a match of regex '") + kNameRegex + "'");
    if (boot) {
      std::string img = ip.contains("sourceImage") ? text_of(ip["sourceImage"]) : "";
      auto seg = ref_segments(img);
      bool ok =
          (seg.size() == 5 && seg[0] == "projects" && seg[2] == "global" && seg[3] == "images") ||
          (seg.size() == 6 && seg[0] == "projects" && seg[2] == "global" && seg[3] == "images" && seg[4] == "family") ||
          (seg.size() == 3 && seg[0] == "global" && seg[1] == "images");
      // A zonal image family view, as gcloud sends --image-family: the zone may be "-" (any).
      const bool family_view = seg.size() == 6 && seg[0] == "projects" && seg[2] == "zones" &&
                               seg[4] == "imageFamilyViews";
      ok = ok || family_view;
      for (size_t k = 0; k < seg.size(); ++k)
        ok = ok && ((family_view && k == 3 && seg[k] == "-") ||
                    std::regex_match(seg[k], std::regex(R"([a-zA-Z][-a-zA-Z0-9._]*)")));
      if (img.empty())
        return invalid_field(f + ".initializeParams.sourceImage", "", "A boot disk needs a source image.");
      if (!ok) return invalid_field(f + ".initializeParams.sourceImage", img, "The URL is malformed.");
      if (seg[0] == "global") seg.insert(seg.begin(), {"projects", scope.project});
      std::string canonical;
      for (const auto& s : seg) canonical += (canonical.empty() ? "" : "/") + s;
      disk.source_image = link(canonical);
    }
    int64_t size = 10;
    if (ip.contains("diskSizeGb")) {
      const json& sz = ip["diskSizeGb"];
      bool ok = false;
      if (sz.is_number_integer()) {
        size = sz.get<int64_t>();
        ok = true;
      } else if (sz.is_string()) {
        try {
          size_t used = 0;
          size = std::stoll(sz.get<std::string>(), &used);
          ok = used == sz.get<std::string>().size();
        } catch (...) {
        }
      }
      if (!ok) return invalid_field(f + ".initializeParams.diskSizeGb", text_of(sz), "Must be a whole number of GB.");
      if (size < 10)
        return invalid_field(f + ".initializeParams.diskSizeGb", std::to_string(size),
                             "Requested disk size cannot be smaller than the image size (10 GB)");
      if (size > 65536)
        return invalid_field(f + ".initializeParams.diskSizeGb", std::to_string(size),
                             "Disk size cannot be larger than 65536 GB.");
    }
    disk.size_gb = size;
    disk.type = "pd-standard";
    if (ip.contains("diskType")) {
      std::string tref = text_of(ip["diskType"]);
      std::string tp, tz, tn;
      if (!parse_ref(tref, "zones", "diskTypes", scope.project, tp, tz, tn)) {
        tn = tref;
        tz = zone;
      }
      if (tz != zone || !kDiskTypes.count(tn))
        return invalid_field(f + ".initializeParams.diskType", tref,
                             "Disk type '" + tn + "' does not exist in zone '" + zone + "'.");
      disk.type = tn;
    }
    disk.auto_delete = d.value("autoDelete", true);
    json attached = {{"kind", "compute#attachedDisk"},
                     {"type", "PERSISTENT"},
                     {"mode", d.value("mode", "READ_WRITE")},
                     {"source", zone_link(zone) + "/disks/" + disk.name},
                     {"deviceName", d.value("deviceName", "persistent-disk-" + std::to_string(i))},
                     {"index", static_cast<int>(i)},
                     {"boot", boot},
                     {"autoDelete", disk.auto_delete},
                     {"interface", d.value("interface", "SCSI")},
                     {"diskSizeGb", std::to_string(size)}};
    disks_out.push_back(attached);
    out.disks.push_back(disk);
  }
  if (boot_count != 1)
    return invalid_field("resource.disks", "",
                         "Exactly one disk must be the boot disk, not " + std::to_string(boot_count) + ".");
  spec["disks"] = disks_out;

  // networkInterfaces
  if (!body.contains("networkInterfaces") || !body["networkInterfaces"].is_array() || body["networkInterfaces"].empty())
    return invalid_field("resource.networkInterfaces", "", "At least one network interface is required.");
  // At most 8 interfaces, 9 on A3 Mega (1 + 8 GPU NICs), 10 on A3 Ultra and A4 (2 gVNICs + 8 MRDMA).
  const bool mrdma_machine = mt->name == "a3-ultragpu-8g" || mt->name == "a4-highgpu-8g";  // ConnectX-7 VFs
  const size_t max_nics = mt->name == "a3-megagpu-8g" ? 9 : mrdma_machine ? 10 : 8;
  if (body["networkInterfaces"].size() > max_nics)
    return invalid_field("resource.networkInterfaces", "",
                         "Machine type '" + mt->name + "' supports at most " + std::to_string(max_nics) +
                             " network interfaces, not " + std::to_string(body["networkInterfaces"].size()) + ".");
  std::map<std::string, bool> nic_networks;  // network -> holds MRDMA interfaces
  json nics = json::array();
  for (size_t i = 0; i < body["networkInterfaces"].size(); ++i) {
    const json& n = body["networkInterfaces"][i];
    std::string f = "resource.networkInterfaces[" + std::to_string(i) + "]";
    if (!n.is_object()) return invalid_field(f, n.dump(), "Must be an object.");
    std::string net_ref = n.contains("network") ? text_of(n["network"]) : "";
    std::string sub_ref = n.contains("subnetwork") ? text_of(n["subnetwork"]) : "";
    std::string np = scope.project, nn = "default", sp = scope.project, sr = region_of(zone), sn = "default", dummy;
    if (!net_ref.empty() && !parse_ref(net_ref, "global", "networks", scope.project, np, dummy, nn))
      return invalid_field(f + ".network", net_ref, "The URL is malformed.");
    if (!sub_ref.empty()) {
      if (!parse_ref(sub_ref, "regions", "subnetworks", scope.project, sp, sr, sn))
        return invalid_field(f + ".subnetwork", sub_ref, "The URL is malformed.");
      if (sr != region_of(zone))
        return invalid_field(f + ".subnetwork", sub_ref,
                             "Subnetwork must be in the instance's region '" + region_of(zone) + "'.");
    } else if (nn != "default") {
      sn = nn;  // an auto-mode network's subnetwork carries its name
    }
    // Compute infers the network of an interface that names only its subnetwork;
    // here a subnetwork belongs to the network of its own name (as above).
    if (net_ref.empty() && !sub_ref.empty()) {
      np = sp;
      nn = sn;
    }
    const std::string nic_type = n.contains("nicType") ? text_of(n["nicType"]) : "";
    static const std::set<std::string> kNicTypes = {"GVNIC", "VIRTIO_NET", "MRDMA", "IRDMA", "IDPF",
                                                    "UNSPECIFIED_NIC_TYPE"};
    if (n.contains("nicType") && !kNicTypes.count(nic_type))
      return invalid_field(f + ".nicType", nic_type,
                           "Must be one of GVNIC, VIRTIO_NET, MRDMA, IRDMA, IDPF or UNSPECIFIED_NIC_TYPE.");
    // MRDMA (ConnectX-7 virtual functions) exists on A3 Ultra and A4 only, and
    // a network holding one takes no other NIC type (the RDMA network profile).
    const bool rdma = nic_type == "MRDMA";
    if (rdma && !mrdma_machine)
      return invalid_field(f + ".nicType", nic_type,
                           "MRDMA network interfaces are supported only on A3 Ultra and A4 machine types, not '" +
                               mt->name + "'.");
    const std::string net_key = np + "/" + nn;
    if (auto [it, fresh] = nic_networks.emplace(net_key, rdma); !fresh && (!rdma || !it->second))
      return invalid_field(f + ".network", link("projects/" + np + "/global/networks/" + nn),
                           it->second || rdma ? "A network with the RDMA network profile accepts only MRDMA network "
                                                "interfaces."
                                              : "Networks must be distinct for NICs attached to a VM.");
    json nic = {{"kind", "compute#networkInterface"},
                {"network", link("projects/" + np + "/global/networks/" + nn)},
                {"subnetwork", link("projects/" + sp + "/regions/" + sr + "/subnetworks/" + sn)},
                {"networkIP", "10.128." + std::to_string((ip_seq >> 8) & 255) + "." + std::to_string(ip_seq & 255)},
                {"name", "nic" + std::to_string(i)},
                {"stackType", n.value("stackType", "IPV4_ONLY")}};
    ++ip_seq;
    if (n.contains("nicType")) nic["nicType"] = n["nicType"];
    if (n.contains("accessConfigs") && n["accessConfigs"].is_array()) {
      json acs = json::array();
      for (const auto& ac : n["accessConfigs"]) {
        std::string type = ac.value("type", "ONE_TO_ONE_NAT");
        if (type != "ONE_TO_ONE_NAT")
          return invalid_field(f + ".accessConfigs[0].type", type, "Only ONE_TO_ONE_NAT is supported for IPv4.");
        acs.push_back({{"kind", "compute#accessConfig"},
                       {"type", type},
                       {"name", ac.value("name", "External NAT")},
                       {"natIP", "34.72." + std::to_string((ip_seq >> 8) & 255) + "." + std::to_string(ip_seq & 255)},
                       {"networkTier", ac.value("networkTier", "PREMIUM")}});
      }
      nic["accessConfigs"] = acs;
    }
    nic["fingerprint"] = fingerprint(nic.dump());
    nics.push_back(nic);
  }
  spec["networkInterfaces"] = nics;

  // serviceAccounts
  if (body.contains("serviceAccounts")) {
    const json& sas = body["serviceAccounts"];
    if (!sas.is_array() || sas.size() > 1)
      return invalid_field("resource.serviceAccounts", sas.dump(), "At most one service account may be attached.");
    json accounts = json::array();
    for (const auto& sa : sas) {
      std::string email = sa.value("email", "default");
      if (email == "default") email = scope.project_number + "-compute@developer.gserviceaccount.com";
      if (email.find('@') == std::string::npos)
        return invalid_field("resource.serviceAccounts[0].email", email, "Must be an email address or 'default'.");
      json scopes = json::array();
      if (sa.contains("scopes")) {
        for (size_t i = 0; i < sa["scopes"].size(); ++i) {
          std::string sc = text_of(sa["scopes"][i]);
          if (sc.rfind(kScopePrefix, 0) != 0)
            return invalid_field("resource.serviceAccounts[0].scopes[" + std::to_string(i) + "]", sc,
                                 "Scopes are URLs such as https://www.googleapis.com/auth/cloud-platform.");
          scopes.push_back(sc);
        }
      }
      accounts.push_back({{"email", email}, {"scopes", scopes}});
    }
    spec["serviceAccounts"] = accounts;
  }

  // labels
  if (body.contains("labels"))
    if (auto e = check_labels(body["labels"], "resource.labels", out.labels)) return e;

  // metadata
  json meta = {{"kind", "compute#metadata"}};
  json items = json::array();
  if (body.contains("metadata") && body["metadata"].contains("items")) {
    const json& in = body["metadata"]["items"];
    if (!in.is_array())
      return invalid_field("resource.metadata.items", in.dump(), "Must be a list of key/value pairs.");
    size_t total = 0;
    std::set<std::string> seen;
    for (size_t i = 0; i < in.size(); ++i) {
      std::string key = in[i].value("key", "");
      std::string value = in[i].contains("value") ? text_of(in[i]["value"]) : "";
      std::string f = "resource.metadata.items[" + std::to_string(i) + "]";
      if (!std::regex_match(key, kMetadataKey))
        return invalid_field(f + ".key", key, "Must be a match of regex '[a-zA-Z0-9-_]{1,128}'");
      if (!seen.insert(key).second)
        return invalid_field("resource.metadata", "", "Duplicate metadata key '" + key + "'.");
      if (value.size() > 256 * 1024) return invalid_field(f + ".value", key, "A metadata value can be at most 256 KB.");
      total += key.size() + value.size();
      items.push_back({{"key", key}, {"value", value}});
    }
    if (total > 512 * 1024) return invalid_field("resource.metadata", "", "Metadata can be at most 512 KB in total.");
  }
  if (!items.empty()) meta["items"] = items;
  meta["fingerprint"] = fingerprint(items.dump());
  spec["metadata"] = meta;

  for (const char* keep : {"tags", "shieldedInstanceConfig", "minCpuPlatform", "hostname", "resourcePolicies"})
    if (body.contains(keep)) spec[keep] = body[keep];
  if (!spec.contains("tags")) spec["tags"] = {{"fingerprint", fingerprint("[]")}};
  spec["canIpForward"] = body.value("canIpForward", false);
  spec["deletionProtection"] = body.value("deletionProtection", false);
  spec["startRestricted"] = false;
  spec["reservationAffinity"] = body.value("reservationAffinity", json{{"consumeReservationType", "ANY_RESERVATION"}});

  return std::nullopt;
}

}  // namespace plinth::gcp_emulator
