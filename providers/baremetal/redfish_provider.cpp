// baremetal.node over DMTF Redfish: what each call sends is described in
// docs/providers/baremetal.md.
#include "providers/baremetal/redfish_provider.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <future>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <filesystem>
#include <unistd.h>

#include "engine/core/files.h"
#include "engine/provider/nocloud.h"

namespace plinth::baremetal {

namespace {

ProviderSchema build_schema() {
  using T = ValueType;
  ProviderSchema s;
  s.name = "baremetal";
  s.version = PLINTH_VERSION;
  s.description = "Bare-metal GPU servers of node pools, through their BMCs (DMTF Redfish).";
  s.docs = "docs/providers/baremetal.md";
  s.resource_types = {
      {"baremetal.node", "baremetal", "One bare-metal GPU server of a node pool, managed through its BMC (Redfish).",
       {
           attr("role", "Workload role of the pool: training | inference | preprocessing.", T::String),
           attr("gpu", "Expected GPU model (catalog name, e.g. H100-80GB); checked against the BMC inventory.",
                T::String),
           attr("gpu_product_names",
                "Names the BMC may report for that GPU (the catalog's product name, then its aliases).",
                T::StringList),
           attr("gpus_per_node", "Expected number of GPUs in the server.", T::Int),
           attr("cpu_cores", "Expected CPU cores.", T::Int),
           attr("memory_gb", "Expected system memory in GB.", T::Int),
           force_new("stack", "Name of the pinned software stack; a different stack means reprovisioning.", T::String),
           force_new("user_data_hash",
                     "SHA-256 of the pool's rendered cloud-init; a new image or stack pin means reprovisioning.",
                     T::String),
           force_new("boot_method", "How the node boots its installer: pxe | uefi-http | virtual-media.", T::String),
           attr("boot_image", "Installer image URL; used at the next provisioning boot.", T::String),
           [] {
             auto a = attr("bios", "Redfish BIOS attributes (name -> value), applied in place by a reset.", T::Map);
             a.disruptive = true;  // the reset takes the node down: rolled out within max_unavailable
             return a;
           }(),
           attr("fabric", "Name of the high-speed fabric (InfiniBand / RoCE) the node attaches to; empty for none.",
                T::String),
           attr("networks", "VLAN names the node joins.", T::StringList),
           attr("storage", "Storage tier names the node mounts.", T::StringList),
           attr("mig_profile", "MIG profile applied to every GPU (\"none\" disables MIG).", T::String),
           attr("mig_instances", "MIG instances per GPU (0 when MIG is off).", T::Int),
           force_new("bmc_endpoint", "Redfish endpoint of this node's BMC; a different BMC is a different machine.",
                     T::String),
           {"bmc_credentials", false, true,
            "Reference (env:NAME or file:PATH) to the BMC user:password; never printed in plans.", T::String,
            "bmc_endpoint"},
           attr("bmc_ca_bundle", "CA bundle used to verify the BMC's TLS certificate; empty for the system store.",
                T::String),
           attr("power",
                "Power state of the provisioned server: On. Refresh reads the BMC's PowerState into it, so a server "
                "found Off (or powering off) is drift the next apply powers on.",
                T::String),
       }},
  };
  s.resource_types[0].import_id = "bmc_endpoint";  // plinth import ADDRESS https://bmc...
  s.resource_types[0].identity = {"uuid", "serial_number"};  // one server, whichever BMC address reaches it
  s.resource_types[0].inventory = true;            // servers exist before Plinth: check them at plan
  s.sections = {{"node_pools", "baremetal.node", true, {}}};
  // The node pool's `bmc:` block, which only this provider reads: one
  // endpoint per node (or a template with {index}), the credentials
  // reference and CA shared, and the power state a provisioned server keeps
  // (refresh reads PowerState into it, so a server found off is drift).
  s.sections[0].fields = {
      {"bmc.endpoints", "bmc_endpoint", nullptr, nullptr, true},
      {"bmc.credentials", "bmc_credentials", nullptr, "", false},
      {"bmc.ca_bundle", "bmc_ca_bundle", nullptr, "", false},
      {"bmc", "power", "On", nullptr, false},
  };
  s.options = {
      {"ca_bundle", T::String, "", {}, "CA bundle (PEM) for BMCs whose pool sets no bmc.ca_bundle; empty: the system store."},
      {"insecure", T::Bool, "false", {}, "Turn TLS verification off; refused for any BMC that is not on loopback."},
      {"timeout_ms", T::Int, "30000", {}, "Longest one HTTP request may take (cut to the operation's deadline)."},
      {"connect_timeout_ms", T::Int, "10000", {}, "Longest a TCP + TLS connection may take."},
      {"power_timeout_ms", T::Int, "300000", {}, "Longest wait for a PowerState change or a BMC task."},
      {"poll_ms", T::Int, "1000", {}, "Interval between PowerState and task polls."},
      {"parallelism", T::Int, "16", {}, "BMCs read at the same time during refresh."},
      {"seed_dir", T::String, "", {},
       "Directory where each created node's NoCloud seed image (NODE.iso: its rendered user-data, meta-data, "
       "network-config) is written; an HTTP(S) server the BMCs reach must serve it at seed_url."},
      {"seed_url", T::String, "", {},
       "URL under which seed_dir is served; the BMC inserts seed_url/NODE.iso as virtual media."},
  };
  // Where requests and credentials go, and where files are written: never
  // from a pull request's blueprint (--untrusted).
  operator_only(s.options, {"ca_bundle", "insecure", "seed_dir", "seed_url"});
  s.deadlines = Deadlines{std::chrono::minutes(2), std::chrono::minutes(15), std::chrono::minutes(15),
                          std::chrono::minutes(10)};
  return s;
}

}  // namespace

const ProviderSchema& schema() {
  static const ProviderSchema s = build_schema();
  return s;
}

RedfishOptions options_from(const ProviderConfig& c) {
  RedfishOptions o;
  auto positive = [&](const char* key, int& out) {
    if (c.has(key)) out = static_cast<int>(std::clamp<int64_t>(c.integer(key), 1, 24LL * 3600 * 1000));
  };
  o.ca_bundle = c.str("ca_bundle");
  o.insecure = c.flag("insecure");
  positive("timeout_ms", o.timeout_ms);
  positive("connect_timeout_ms", o.connect_timeout_ms);
  positive("power_timeout_ms", o.settings.power_timeout_ms);
  positive("poll_ms", o.settings.poll_ms);
  positive("parallelism", o.parallelism);
  o.seed_dir = c.str("seed_dir");
  o.seed_url = c.str("seed_url");
  while (!o.seed_url.empty() && o.seed_url.back() == '/') o.seed_url.pop_back();
  return o;
}

namespace {

Error at(const std::string& address, Error e) {
  e.message = address + ": " + e.message;
  return e;
}

std::vector<std::string> members(const Json& collection) {
  std::vector<std::string> out;
  if (!collection.is_object() || !collection.contains("Members") || !collection["Members"].is_array()) return out;
  for (const auto& m : collection["Members"])
    if (auto id = text(m, "@odata.id"); !id.empty()) out.push_back(id);
  return out;
}

std::string action_target(const Json& doc, const char* action) {
  if (!doc.contains("Actions") || !doc["Actions"].is_object()) return "";
  auto it = doc["Actions"].find(action);
  return it != doc["Actions"].end() ? text(*it, "target") : "";
}

/// Lower case, runs of spaces/underscores collapsed: "NVIDIA  H100" == "nvidia h100".
std::string normalize(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '_') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

/// Does the BMC's Processor Model `reported` name the GPU the pool declares?
/// With the catalog's names (attribute gpu_product_names, from the expander)
/// the match is exact up to case and spacing; without them every word of the
/// catalog name must appear in the reported model ("H100-80GB" ~ "NVIDIA H100 80GB HBM3").
bool gpu_matches(const Resource& r, const std::string& reported) {
  const Json& names = r.attributes.value("gpu_product_names", Json::array());
  if (names.is_array() && !names.empty()) {
    for (const auto& n : names)
      if (n.is_string() && normalize(n.get<std::string>()) == normalize(reported)) return true;
    return false;
  }
  auto have = words(reported);
  for (const auto& w : words(text(r.attributes, "gpu")))
    if (std::find(have.begin(), have.end(), w) == have.end()) return false;
  return true;
}

std::string declared_gpu(const Resource& r) {
  std::string gpu = text(r.attributes, "gpu");
  const Json& names = r.attributes.value("gpu_product_names", Json::array());
  if (names.is_array() && !names.empty() && names[0].is_string()) gpu += " (" + names[0].get<std::string>() + ")";
  return gpu;
}

long long as_int(const Json& j, const char* key, long long fallback = 0) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return fallback;
  return j[key].get<long long>();
}

std::string fmt_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// PATCH of the system's Boot object that sets a one-time override.
Json boot_override(const std::string& target) {
  return {{"Boot", {{"BootSourceOverrideTarget", target}, {"BootSourceOverrideEnabled", "Once"}}}};
}

/// True when the media device takes CD or DVD images.
bool takes_cd(const Json& media) {
  for (const auto& t : media.value("MediaTypes", Json::array()))
    if (t.is_string() && (t == "CD" || t == "DVD")) return true;
  return false;
}

/// The system's VirtualMedia devices that have an InsertMedia action, in
/// the BMC's order: the system's own, else the managers'.
Result<std::vector<Doc>> list_media(RedfishClient& c, const Json& system, Call& d) {
  std::vector<std::string> collections;
  if (auto v = link(system, "VirtualMedia"); !v.empty()) collections.push_back(v);
  if (collections.empty()) {
    auto root = c.service_root(d);
    if (!root) return root.error();
    if (auto m = link(**root, "Managers"); !m.empty()) {
      auto mgrs = c.get(m, d);
      if (!mgrs) return mgrs.error();
      for (const auto& mu : members(mgrs->body)) {
        auto mgr = c.get(mu, d);
        if (!mgr) return mgr.error();
        if (auto v = link(mgr->body, "VirtualMedia"); !v.empty()) collections.push_back(v);
      }
    }
  }
  std::vector<Doc> out;
  for (const auto& coll_uri : collections) {
    auto coll = c.get(coll_uri, d);
    if (!coll) return coll.error();
    for (const auto& mu : members(coll->body)) {
      auto m = c.get(mu, d);
      if (!m) return m.error();
      if (!action_target(m->body, "#VirtualMedia.InsertMedia").empty()) out.push_back(std::move(*m));
    }
  }
  return out;
}

/// The system's VirtualMedia devices (list_media), read on first use and
/// kept in `cache` for the rest of the operation (the seed and the installer
/// both need them during a create).
Result<const std::vector<Doc>*> media_of(RedfishClient& c, const Json& system, Call& d,
                                         std::optional<std::vector<Doc>>& cache) {
  if (!cache) {
    auto m = list_media(c, system, d);
    if (!m) return m.error();
    cache = std::move(*m);
  }
  return &*cache;
}

/// The installer's device: the first that takes a CD/DVD image, else the first.
const Doc* installer_media(const std::vector<Doc>& media) {
  for (const auto& m : media)
    if (takes_cd(m.body)) return &m;
  return media.empty() ? nullptr : &media.front();
}

/// The seed's device: the first CD/DVD device other than `installer`, else
/// any other device (a USB stick or floppy takes the same ISO 9660 image:
/// cloud-init finds the seed by its volume label, not by the device).
const Doc* seed_media(const std::vector<Doc>& media, const Doc* installer) {
  for (const auto& m : media)
    if (&m != installer && takes_cd(m.body)) return &m;
  for (const auto& m : media)
    if (&m != installer) return &m;
  return nullptr;
}

/// Ejects whatever `media` holds, then inserts `image` read-only.
Status insert_media(RedfishClient& c, const Doc& media, const std::string& image, Call& d) {
  if (media.body.value("Inserted", Json(false)) == Json(true) || !media.body.value("Image", Json()).is_null()) {
    if (auto eject = action_target(media.body, "#VirtualMedia.EjectMedia"); !eject.empty())
      if (auto st = c.post_action(eject, Json::object(), d); !st) return st;
  }
  Json insert = {{"Image", image}, {"Inserted", true}, {"WriteProtected", true}};
  return c.post_action(action_target(media.body, "#VirtualMedia.InsertMedia"), insert, d);
}

/// Sets the one-time boot override the node's boot_method asks for; for
/// virtual-media, ejects and inserts boot_image first. `sys` is the system
/// as read (its ETag goes with the PATCH; `reread` as RedfishClient::patch);
/// `media` caches its devices.
Status set_boot(RedfishClient& c, const std::string& system_uri, const Doc& sys, const Resource& r, Call& d,
                std::optional<std::vector<Doc>>& media, bool reread = true) {
  const std::string method = text(r.attributes, "boot_method");
  const std::string image = text(r.attributes, "boot_image");
  if (method.empty()) return {};
  if (method == "pxe") {
    auto p = c.patch(system_uri, boot_override("Pxe"), d, sys.etag, reread);
    return p ? Status{} : Status{p.error()};
  }
  if (method == "uefi-http") {
    Json body = boot_override("UefiHttp");
    if (!image.empty()) body["Boot"]["HttpBootUri"] = image;
    auto p = c.patch(system_uri, body, d, sys.etag, reread);
    return p ? Status{} : Status{p.error()};
  }
  if (method == "virtual-media") {
    if (image.empty())
      return Error::invalid("boot method virtual-media needs boot.image (the installer ISO URL) in the pool");
    auto devices = media_of(c, sys.body, d, media);
    if (!devices) return devices.error();
    const Doc* installer = installer_media(**devices);
    if (!installer)
      return Error::fatal("the BMC at " + c.endpoint() +
                          " has no VirtualMedia with an InsertMedia action (looked under the system and its "
                          "managers); use boot method pxe or uefi-http for this pool");
    if (auto st = insert_media(c, *installer, image, d); !st) return st;
    auto p = c.patch(system_uri, boot_override("Cd"), d);
    return p ? Status{} : Status{p.error()};
  }
  return Error::invalid("unknown boot method '" + method + "'; use pxe, uefi-http or virtual-media");
}

/// The resource a navigation property ({"@odata.id": ...}) names: as the
/// service expanded it ($expand), else read with a GET (with `query`).
Result<Doc> follow(RedfishClient& c, const Json& nav, Call& d, const std::string& query = "") {
  const std::string id = text(nav, "@odata.id");
  if (expanded(nav)) {
    auto u = c.url(id);
    if (!u) return u.error();
    return Doc{*u, nav, text(nav, "@odata.etag")};
  }
  return c.get(id, d, query);
}

/// The members of a collection: those the service expanded as they are, the
/// others read with GETs sent at once.
Result<std::vector<Json>> member_docs(RedfishClient& c, const Json& collection, Call& d) {
  std::vector<Json> out;
  if (!collection.is_object() || !collection.contains("Members") || !collection["Members"].is_array()) return out;
  const Json& list = collection["Members"];
  std::vector<std::future<Result<Doc>>> reads;
  std::vector<size_t> read_at;
  for (const auto& m : list) {
    if (!m.is_object() || text(m, "@odata.id").empty()) continue;
    out.push_back(m);
    if (!expanded(m)) {
      read_at.push_back(out.size() - 1);
      const std::string id = text(m, "@odata.id");
      reads.push_back(std::async(std::launch::async, [&c, &d, id] { return c.get(id, d); }));
    }
  }
  std::optional<Error> failed;
  for (size_t i = 0; i < reads.size(); ++i) {
    auto doc = reads[i].get();
    if (!doc) {
      if (!failed) failed = doc.error();
    } else {
      out[read_at[i]] = std::move(doc->body);
    }
  }
  if (failed) return *failed;
  return out;
}

/// A collection a navigation property names, with its members.
Result<std::vector<Json>> collection_members(RedfishClient& c, const Json& nav, Call& d, const std::string& query) {
  if (expanded(nav)) return member_docs(c, nav, d);  // read in place, not copied first
  auto coll = follow(c, nav, d, query);
  if (!coll) return coll.error();
  return member_docs(c, coll->body, d);
}

/// How to run the read of what `nav` names beside others: in this thread when
/// the service expanded it (and, for a collection, its members), so no request
/// is waited for; else in a thread of its own.
std::launch launch_for(const Json& nav, bool collection) {
  if (!expanded(nav)) return std::launch::async;
  if (collection && nav.contains("Members") && nav["Members"].is_array())
    for (const auto& m : nav["Members"])
      if (m.is_object() && !expanded(m)) return std::launch::async;
  return std::launch::deferred;
}

/// PATCHes BIOS attributes to the settings object (@Redfish.Settings) or the
/// Bios resource itself; they take effect at the next reset. `sys` is the
/// system as just read (its Bios may come expanded).
Status set_bios(RedfishClient& c, const Doc& sys, const Json& bios, Call& d) {
  if (!bios.is_object() || bios.empty()) return {};
  if (link(sys.body, "Bios").empty())
    return Error::fatal("GET " + sys.url + ": the system has no Bios resource, so the pool's bios settings cannot be applied");
  auto b = follow(c, sys.body["Bios"], d);
  if (!b) return b.error();
  std::string target = link(sys.body, "Bios");
  std::optional<std::string> etag = b->etag;
  if (b->body.contains("@Redfish.Settings") && b->body["@Redfish.Settings"].is_object())
    if (auto s = link(b->body["@Redfish.Settings"], "SettingsObject"); !s.empty()) {
      // The settings object holds only what is pending: PATCHed without
      // If-Match unless the service asks for it (428) or it changed (412).
      target = s;
      etag = "";
    }
  auto p = c.patch(target, {{"Attributes", bios}}, d, etag);
  return p ? Status{} : Status{p.error()};
}

/// Polls PowerState until it is `want`, within the power timeout, and
/// returns the system as last read (with `query`, so the last poll can be
/// the read-back). The first poll is at once; then the waits grow from a
/// quarter of poll_ms to poll_ms, so a transition of a few hundred ms is not
/// waited on for a whole interval.
Result<Doc> wait_power(RedfishClient& c, const std::string& system_uri, const std::string& want,
                       const RedfishSettings& s, Call& d, const std::atomic<bool>* cancel,
                       const std::string& query = "") {
  const Deadline limit = Deadline::after(std::chrono::milliseconds(s.power_timeout_ms));
  int wait_ms = std::max(1, s.poll_ms / 4);
  for (;;) {
    auto sys = c.get(system_uri, d, query);
    if (!sys) return sys.error();
    const std::string state = text(sys->body, "PowerState");
    if (state == want) return sys;
    if (limit.passed())
      return Error{Error::Kind::Retryable,
                   sys->url + " did not reach PowerState " + want + " within " + std::to_string(s.power_timeout_ms) +
                       " ms (power_timeout_ms); last seen: " + (state.empty() ? "none" : state),
                   0};
    if (auto st = net::pause(wait_ms, d.deadline(), cancel, "waiting for PowerState " + want + " at " + sys->url); !st)
      return st.error();
    wait_ms = std::min(wait_ms * 2, s.poll_ms);
  }
}

/// ComputerSystem.Reset: `on` powers the host on (On when off, ForceRestart
/// when on) and waits for On; otherwise ForceOff (when not off) and waits for
/// Off. `sys` is the system as read before (its action target and PowerState);
/// returns it as read when the power state was reached (with `query`).
Result<Doc> reset(RedfishClient& c, const std::string& system_uri, const Doc& sys, bool on, const RedfishSettings& s,
                  Call& d, const std::atomic<bool>* cancel, const std::string& query = "") {
  const std::string target = action_target(sys.body, "#ComputerSystem.Reset");
  if (target.empty())
    return Error::fatal("GET " + sys.url + ": the system has no #ComputerSystem.Reset action");
  const std::string state = text(sys.body, "PowerState");
  std::string type;
  if (on) type = state == "Off" || state == "PoweringOff" ? "On" : "ForceRestart";
  else if (state != "Off") type = "ForceOff";
  if (!type.empty())
    if (auto st = c.post_action(target, {{"ResetType", type}}, d); !st) return st.error();
  return wait_power(c, system_uri, on ? "On" : "Off", s, d, cancel, query);
}

/// The node's system: as system_uri() found it expanded, else read with
/// $expand `levels` deep where offered: 2 brings the inventory and the
/// VirtualMedia devices along, 1 the Bios and the collections without their
/// members (a third of the bytes to parse on a DMTF-shaped BMC).
Result<Doc> read_system(RedfishClient& c, Call& d, std::string* uri = nullptr, int levels = 2) {
  std::optional<Doc> first;
  auto sys_uri = c.system_uri(d, &first);
  if (!sys_uri) return sys_uri.error();
  if (uri) *uri = *sys_uri;
  if (first) return std::move(*first);
  auto query = c.expand_query(levels, d);
  if (!query) return query.error();
  return c.get(*sys_uri, d, *query);
}

/// What a create needs of a system the refresh read, kept until the create
/// (a few hundred bytes, not the inventory): its id, PowerState, Reset
/// target, and its Bios link with, when expanded, the BIOS's type, ETag and
/// settings object. Nothing without a strong ETag: the If-Match of the
/// create's first PATCH is what shows the system unchanged since the read
/// (a weak ETag may stay the same when PowerState changes).
std::optional<Doc> kept_for_create(const Doc& sys) {
  const Json& s = sys.body;
  if (sys.etag.empty() || sys.etag.starts_with("W/") || text(s, "@odata.id").empty()) return std::nullopt;
  Json k = Json::object();
  for (const char* key : {"@odata.id", "PowerState"})
    if (auto it = s.find(key); it != s.end()) k[key] = *it;
  if (auto target = action_target(s, "#ComputerSystem.Reset"); !target.empty())
    k["Actions"]["#ComputerSystem.Reset"]["target"] = target;
  if (auto bios = s.find("Bios"); bios != s.end() && bios->is_object()) {
    Json& b = k["Bios"] = Json::object();
    for (const char* key : {"@odata.id", "@odata.type", "@odata.etag"})
      if (auto it = bios->find(key); it != bios->end()) b[key] = *it;
    if (auto settings = bios->find("@Redfish.Settings"); settings != bios->end() && settings->is_object())
      if (auto object = link(*settings, "SettingsObject"); !object.empty())
        b["@Redfish.Settings"]["SettingsObject"]["@odata.id"] = object;
  }
  return Doc{sys.url, std::move(k), sys.etag};
}

/// The key of a node's kept system: its address and BMC.
std::string kept_key(const Resource& r) { return r.address + "\n" + text(r.attributes, "bmc_endpoint"); }

}  // namespace

Status RedfishProvider::configure(const ProviderConfig& config) {
  options_ = options_from(config);
  if (options_.seed_dir.empty() != options_.seed_url.empty())
    return Error::invalid(std::string("baremetal: ") + (options_.seed_dir.empty() ? "seed_url" : "seed_dir") +
                          " is set without " + (options_.seed_dir.empty() ? "seed_dir" : "seed_url") +
                          "; set both (the directory seeds are written to and the URL the BMCs fetch it at) or "
                          "neither");
  if (!options_.seed_url.empty() && options_.seed_url.rfind("http://", 0) != 0 &&
      options_.seed_url.rfind("https://", 0) != 0)
    return Error::invalid("baremetal: seed_url " + options_.seed_url +
                          " must be an http:// or https:// URL the BMCs can fetch from");
  net::ClientOptions http;
  http.ca_bundle = options_.ca_bundle;
  http.insecure = options_.insecure;
  http.connect_timeout_ms = options_.connect_timeout_ms;
  http.timeout_ms = options_.timeout_ms;
  http_ = std::make_unique<net::Client>(http);
  return {};
}

RedfishProvider::~RedfishProvider() { close(); }

void RedfishProvider::close() {
  std::map<std::string, std::unique_ptr<RedfishClient>> clients;
  {
    std::lock_guard<std::mutex> g(mu_);
    clients.swap(clients_);
  }
  if (stopped_) return;  // cancelled: leave the sessions to expire on the BMCs
  // Best effort: sessions also expire on the BMC. A few seconds at most,
  // `parallelism` BMCs at a time (one after the other, 1,000 sessions would
  // take 1,000 round trips).
  Call d(Deadline::after(std::chrono::seconds(5)), RetryPolicy{1});
  std::vector<RedfishClient*> list;
  for (auto& [key, client] : clients) list.push_back(client.get());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < list.size(); i = next++) (void)list[i]->logout(d);
  };
  const size_t n = std::min<size_t>(static_cast<size_t>(std::max(1, options_.parallelism)), list.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

Result<RedfishClient*> RedfishProvider::client_for(const Resource& r) {
  const std::string endpoint = text(r.attributes, "bmc_endpoint");
  const std::string creds = text(r.attributes, "bmc_credentials");
  const std::string ca = text(r.attributes, "bmc_ca_bundle");
  if (endpoint.empty())
    return Error::invalid(r.address + ": no bmc_endpoint; set bmc.endpoints in node pool '" + r.name + "'");
  const std::string key = endpoint + "\n" + creds + "\n" + ca;
  std::lock_guard<std::mutex> g(mu_);
  if (auto it = clients_.find(key); it != clients_.end()) return it->second.get();
  auto secret = resolve_credentials(creds);
  if (!secret) return at(r.address, secret.error());
  if (!http_) return Error::fatal("the baremetal provider was used before configure()");
  auto client = std::make_unique<RedfishClient>(*http_, endpoint, creds, *secret, ca, options_.settings, &stopped_);
  RedfishClient* p = client.get();
  clients_.emplace(key, std::move(client));
  return p;
}

ReadResult RedfishProvider::read_one(const Resource& r, Call& d, std::optional<Doc> system,
                                     std::optional<Doc>* keep) {
  ReadResult out;
  out.address = r.address;
  auto fail = [&](Error e) {
    out.error = at(r.address, std::move(e));
    return out;
  };
  auto cp = client_for(r);
  if (!cp) {
    out.error = cp.error();
    return out;
  }
  RedfishClient& c = **cp;
  if (!system) {
    auto sys = read_system(c, d);
    if (!sys) return fail(sys.error());
    system = std::move(*sys);
  }
  const Doc* sys = &*system;
  const Json& s = sys->body;
  if (keep) *keep = kept_for_create(*sys);

  Resource cur = r;
  Json computed = Json::object();
  computed["system_uri"] = sys->url;
  computed["power_state"] = text(s, "PowerState");
  // What the node claims (a running server) is read, not assumed: a server
  // switched off outside Plinth (or left off by an interrupted operation)
  // shows as `power` drift in the plan. (State written before the attribute
  // existed gets it here, so a refreshing plan finds nothing to change.)
  const std::string power = text(s, "PowerState");
  cur.attributes["power"] = power.empty() ? "Unknown" : power;
  for (auto [field, key] : {std::pair<const char*, const char*>{"Manufacturer", "manufacturer"},
                             {"Model", "model"},
                             {"SerialNumber", "serial_number"},
                             {"UUID", "uuid"}})
    if (auto v = text(s, field); !v.empty()) computed[key] = v;
  if (s.contains("Boot") && s["Boot"].is_object()) {
    computed["boot_override_target"] = text(s["Boot"], "BootSourceOverrideTarget");
    computed["boot_override_enabled"] = text(s["Boot"], "BootSourceOverrideEnabled");
  }

  const std::string procs = link(s, "Processors");
  if (procs.empty())
    return fail(Error::fatal("GET " + sys->url +
                             ": the system has no Processors collection, so its GPUs cannot be checked against the "
                             "pool; check the BMC firmware (it must list GPUs as Processors with ProcessorType GPU)"));
  // The reads of the inventory are sent at once; whatever the service
  // expanded ($expand) needs no request at all.
  auto expand = c.expand_query(1, d);
  if (!expand) return fail(expand.error());
  const Json managed = r.attributes.value("bios", Json::object());
  const bool read_bios = managed.is_object() && !managed.empty() && !link(s, "Bios").empty();
  std::future<Result<Doc>> bios;
  if (read_bios) bios = std::async(launch_for(s["Bios"], false), [&] { return follow(c, s["Bios"], d); });
  std::future<Result<std::vector<Json>>> nic_docs;
  if (!link(s, "EthernetInterfaces").empty())
    nic_docs = std::async(launch_for(s["EthernetInterfaces"], true),
                          [&] { return collection_members(c, s["EthernetInterfaces"], d, *expand); });
  auto proc_docs = collection_members(c, s["Processors"], d, *expand);
  std::optional<Result<Doc>> bios_doc;
  if (bios.valid()) bios_doc.emplace(bios.get());
  std::optional<Result<std::vector<Json>>> nics;
  if (nic_docs.valid()) nics.emplace(nic_docs.get());

  // BIOS: the blueprint's keys as observed (drift shows in the plan), all of
  // them in computed. Not read when the pool manages no BIOS attribute.
  if (bios_doc) {
    if (!*bios_doc) return fail(bios_doc->error());
    const Json observed = (*bios_doc)->body.value("Attributes", Json::object());
    computed["bios"] = observed;
    Json seen = Json::object();
    for (auto it = managed.begin(); it != managed.end(); ++it)
      if (observed.is_object() && observed.contains(it.key())) seen[it.key()] = observed[it.key()];
    cur.attributes["bios"] = seen;
  }

  // GPUs: Processors with ProcessorType GPU.
  if (!proc_docs) return fail(proc_docs.error());
  int gpus = 0;
  std::map<std::string, int> models;
  for (const auto& p : *proc_docs) {
    if (text(p, "ProcessorType") != "GPU") continue;
    ++gpus;
    ++models[text(p, "Model")];
  }
  computed["gpu_count"] = gpus;
  Json model_list = Json::array();
  for (const auto& [m, n] : models) model_list.push_back(m);
  computed["gpu_models"] = model_list;

  // Memory and NICs.
  double mem = 0;
  if (s.contains("MemorySummary") && s["MemorySummary"].is_object() &&
      s["MemorySummary"].contains("TotalSystemMemoryGiB") && s["MemorySummary"]["TotalSystemMemoryGiB"].is_number())
    mem = s["MemorySummary"]["TotalSystemMemoryGiB"].get<double>();
  computed["memory_gib"] = mem;
  if (nics) {
    if (!*nics) return fail(nics->error());
    Json macs = Json::array();
    for (const auto& e : **nics)
      if (auto mac = text(e, "MACAddress"); !mac.empty()) macs.push_back(mac);
    computed["macs"] = macs;
  }

  // Inventory checks against what the pool declares.
  auto diag = [&](const char* code, std::string msg, std::string hint) {
    out.diagnostics.push_back(Diagnostic{code, Severity::Error, std::move(msg), r.source, r.address, std::move(hint)});
  };
  const long long want_gpus = as_int(r.attributes, "gpus_per_node");
  const std::string want_gpu = text(r.attributes, "gpu");
  std::string reported = gpus == 0 ? "0 GPUs" : "";
  for (const auto& [m, n] : models) {
    if (!reported.empty()) reported += " + ";
    reported += std::to_string(n) + " × " + (m.empty() ? "(no model)" : m);
  }
  if (!want_gpu.empty()) {
    std::vector<std::string> wrong;
    for (const auto& [m, n] : models)
      if (!gpu_matches(r, m)) wrong.push_back(m);
    if (!wrong.empty())
      diag(kRuleGpuModel, "BMC reports " + reported + ", pool declares " + declared_gpu(r),
           "fix hardware.gpu of the pool or move the node to a pool with this GPU");
  }
  if (want_gpus > 0 && gpus != want_gpus)
    diag(kRuleGpuCount, "BMC reports " + reported + ", pool declares " + std::to_string(want_gpus),
         "check the server's GPUs (a failed or missing GPU) or fix hardware.gpus_per_node");
  const long long want_mem = as_int(r.attributes, "memory_gb");
  if (want_mem > 0 && mem < static_cast<double>(want_mem))
    diag(kRuleMemory,
         "BMC reports " + fmt_number(mem) + " GiB of memory, pool declares " + std::to_string(want_mem) + " GB",
         "check the server's DIMMs or lower hardware.memory_gb");

  cur.computed = std::move(computed);
  out.current = std::move(cur);
  return out;
}

std::optional<Doc> RedfishProvider::take_kept(const Resource& r) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = kept_.find(kept_key(r));
  if (it == kept_.end()) return std::nullopt;
  Doc doc = std::move(it->second);
  kept_.erase(it);
  return doc;
}

std::vector<ReadResult> RedfishProvider::read(const std::vector<Resource>& resources, const Call& call) {
  std::vector<ReadResult> results(resources.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < resources.size(); i = next++) {
      try {
        // Each node gets its own budget from when its read starts.
        auto call_i = call.fork();
        std::optional<Doc> kept;
        results[i] = read_one(resources[i], *call_i, std::nullopt, &kept);
        if (!results[i].error && kept) {
          std::lock_guard<std::mutex> g(mu_);
          kept_[kept_key(resources[i])] = std::move(*kept);
        }
      } catch (const std::exception& e) {  // an answer shaped unlike Redfish; never let it kill the thread
        results[i].address = resources[i].address;
        results[i].error = Error::fatal(resources[i].address + ": unexpected answer from the BMC: " + e.what());
      }
    }
  };
  const size_t n = std::min<size_t>(static_cast<size_t>(options_.parallelism), resources.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return results;
}

/// seed_url/NODE.iso.
std::string seed_file(const Resource& r) { return node_name(r.name, r.index) + ".iso"; }

Status RedfishProvider::deliver_seed(RedfishClient& c, const Doc& sys, const Resource& r, Call& d,
                                     std::optional<std::vector<Doc>>& devices) {
  if (options_.seed_dir.empty()) return {};
  const std::string user_data = text(r.computed, "user_data");
  if (user_data.empty())
    return Error::fatal("no rendered cloud-init reached the provider for this node, so there is no seed to deliver; "
                        "apply it with plinth apply (which renders the pool), or unset seed_dir");
  auto iso = nocloud_iso({user_data, nocloud_meta_data(r), text(r.computed, "network_config")});
  if (!iso) return iso.error();
  const std::string path = (std::filesystem::path(options_.seed_dir) / seed_file(r)).string();
  if (auto st = write_file_atomic(path, *iso, 0644); !st)
    return Error::fatal("cannot write the seed " + path + ": " + st.error().message +
                        "; make seed_dir a directory plinth may write");
  auto listed = media_of(c, sys.body, d, devices);
  if (!listed) return listed.error();
  const std::vector<Doc>* media = *listed;
  const Doc* installer = text(r.attributes, "boot_method") == "virtual-media" ? installer_media(*media) : nullptr;
  const Doc* target = seed_media(*media, installer);
  if (!target)
    return Error::fatal(
        "the BMC at " + c.endpoint() +
        (media->empty() ? std::string(" has no VirtualMedia with an InsertMedia action, so the seed cannot be inserted")
                        : std::string(" has a single virtual media device and the installer (boot.method "
                                      "virtual-media) uses it, so the seed has nowhere to go")) +
        "; boot the installer with pxe or uefi-http, or unset seed_dir and seed_url and deliver the seed "
        "another way (plinth render)");
  return insert_media(c, *target, options_.seed_url + "/" + seed_file(r), d);
}

Status RedfishProvider::withdraw_seed(RedfishClient& c, const Doc& sys, const Resource& r, Call& d) {
  if (options_.seed_dir.empty()) return {};
  const std::string image = options_.seed_url + "/" + seed_file(r);
  auto media = list_media(c, sys.body, d);
  if (!media) return media.error();
  for (const auto& m : *media)
    if (text(m.body, "Image") == image)
      if (auto eject = action_target(m.body, "#VirtualMedia.EjectMedia"); !eject.empty())
        if (auto st = c.post_action(eject, Json::object(), d); !st) return st;
  std::error_code ec;
  std::filesystem::remove(std::filesystem::path(options_.seed_dir) / seed_file(r), ec);
  if (ec)
    return Error::fatal("cannot delete the seed " + (std::filesystem::path(options_.seed_dir) / seed_file(r)).string() +
                        ": " + ec.message());
  return {};
}

Diagnostics RedfishProvider::preflight(const std::vector<Resource>& changes, const Call& call) {
  (void)call;
  Diagnostics out;
  if (changes.empty()) return out;
  const Resource& first = changes.front();
  if (options_.seed_dir.empty()) {
    out.push_back({kRuleSeed, Severity::Warning,
                   "baremetal: seed_dir and seed_url are not set, so the nodes this plan creates or replaces (" +
                       first.address + (changes.size() > 1 ? ", ..." : "") +
                       ") boot without their rendered stack (plinth render)",
                   first.source, first.address,
                   "set the provider options seed_dir (a directory a web server serves to the BMCs) and seed_url "
                   "(its URL): docs/providers/baremetal.md, \"Seed\""});
    return out;
  }
  std::error_code ec;
  const auto status = std::filesystem::status(options_.seed_dir, ec);
  if (ec || !std::filesystem::is_directory(status) || ::access(options_.seed_dir.c_str(), W_OK) != 0)
    out.push_back({kRuleSeed, Severity::Error,
                   "baremetal: seed_dir " + options_.seed_dir + " is not a directory plinth can write, so apply "
                   "could not deliver the nodes' seeds",
                   first.source, first.address, "create it (or fix its permissions), or set seed_dir to another one"});
  return out;
}

Result<Resource> RedfishProvider::create(const Resource& desired, Call& d) {
  auto cp = client_for(desired);
  if (!cp) return cp.error();
  RedfishClient& c = **cp;
  const std::string method = text(desired.attributes, "boot_method");
  const bool uses_media = !options_.seed_dir.empty() || method == "virtual-media";
  std::optional<std::vector<Doc>> media;  // read once for the seed and the installer
  std::string sys_uri;
  // After this provider's refresh read the node (plinth apply plans first), the system as that read
  // found it, when the first change is the boot override's PATCH: its If-Match, the read's strong
  // ETag, shows the system (its PowerState above all) unchanged since; a 412 means it changed, and it
  // is read again.
  std::optional<Doc> sys = take_kept(desired);
  bool boot_set = false;
  if (sys && !uses_media && (method == "pxe" || method == "uefi-http")) {
    sys_uri = text(sys->body, "@odata.id");
    auto st = set_boot(c, sys_uri, *sys, desired, d, media, false);
    if (!st && st.error().kind != Error::Kind::Conflict) return at(desired.address, st.error());
    boot_set = st.ok();
  }
  if (!boot_set) {
    // The create needs the system's Boot, its Bios and, for a seed or a virtual-media installer, its
    // VirtualMedia devices (expanded two levels deep); the refresh read the inventory already.
    auto fresh = read_system(c, d, &sys_uri, uses_media ? 2 : 1);
    if (!fresh) return at(desired.address, fresh.error());
    sys = std::move(*fresh);
    if (auto st = deliver_seed(c, *sys, desired, d, media); !st) return at(desired.address, st.error());
    if (auto st = set_boot(c, sys_uri, *sys, desired, d, media); !st) return at(desired.address, st.error());
  }
  if (auto st = set_bios(c, *sys, desired.attributes.value("bios", Json::object()), d); !st)
    return at(desired.address, st.error());
  // The poll that sees the host on reads its inventory too (with $expand).
  auto expand = c.expand_query(2, d);
  if (!expand) return at(desired.address, expand.error());
  auto on = reset(c, sys_uri, *sys, true, options_.settings, d, &stopped_, *expand);
  if (!on) return at(desired.address, on.error());
  auto observed = read_one(desired, d, std::move(*on));
  if (observed.error) return *observed.error;
  Resource out = desired;
  out.computed = observed.current->computed;
  return out;
}

Result<Resource> RedfishProvider::update(const Resource& prior, const Resource& desired, Call& d) {
  (void)take_kept(prior);  // read below if needed; a create of the address later reads afresh
  auto cp = client_for(desired);
  if (!cp) return cp.error();
  RedfishClient& c = **cp;
  const Json want_bios = desired.attributes.value("bios", Json::object());
  const bool bios_changed = want_bios != prior.attributes.value("bios", Json::object());
  const bool boot_changed =
      text(desired.attributes, "boot_method") != text(prior.attributes, "boot_method") ||
      text(desired.attributes, "boot_image") != text(prior.attributes, "boot_image");
  // Found not On by the refresh: power it on (unless the BIOS change resets it anyway).
  const bool power_on = text(desired.attributes, "power") == "On" && prior.attributes.contains("power") &&
                        text(prior.attributes, "power") != "On";
  std::optional<Doc> after;  // the system as the reset left it
  if (boot_changed || bios_changed || power_on) {
    std::string sys_uri;
    auto sys = read_system(c, d, &sys_uri);
    if (!sys) return at(desired.address, sys.error());
    if (boot_changed) {
      std::optional<std::vector<Doc>> media;
      if (auto st = set_boot(c, sys_uri, *sys, desired, d, media); !st) return at(desired.address, st.error());
    }
    if (!bios_changed && power_on && text(sys->body, "PowerState") != "On") {
      auto expand = c.expand_query(2, d);
      if (!expand) return at(desired.address, expand.error());
      // Off or PoweringOff: Reset On; PoweringOn: no request, wait for On.
      auto on = text(sys->body, "PowerState") == "PoweringOn"
                    ? wait_power(c, sys_uri, "On", options_.settings, d, &stopped_, *expand)
                    : reset(c, sys_uri, *sys, true, options_.settings, d, &stopped_, *expand);
      if (!on) return at(desired.address, on.error());
      after = std::move(*on);
    }
    if (bios_changed) {
      if (auto st = set_bios(c, *sys, want_bios, d); !st) return at(desired.address, st.error());
      auto expand = c.expand_query(2, d);
      if (!expand) return at(desired.address, expand.error());
      auto on = reset(c, sys_uri, *sys, true, options_.settings, d, &stopped_, *expand);
      if (!on) return at(desired.address, on.error());
      after = std::move(*on);
    }
  }
  auto observed = read_one(desired, d, std::move(after));
  if (observed.error) return *observed.error;
  Resource out = desired;
  out.computed = observed.current->computed;
  return out;
}

Status RedfishProvider::remove(const Resource& prior, Call& d) {
  (void)take_kept(prior);  // a replace's create, after this, reads the system afresh
  auto cp = client_for(prior);
  if (!cp) return cp.error();
  RedfishClient& c = **cp;
  std::string sys_uri;
  auto sys = read_system(c, d, &sys_uri);
  if (!sys) return at(prior.address, sys.error());
  auto off = reset(c, sys_uri, *sys, false, options_.settings, d, &stopped_);
  if (!off) return at(prior.address, off.error());
  if (off->body.contains("Boot") && text(off->body["Boot"], "BootSourceOverrideEnabled") != "Disabled") {
    auto p = c.patch(sys_uri, {{"Boot", {{"BootSourceOverrideEnabled", "Disabled"}}}}, d, off->etag);
    if (!p) return at(prior.address, p.error());
  }
  if (auto st = withdraw_seed(c, *off, prior, d); !st) return at(prior.address, st.error());
  return {};
}

}  // namespace plinth::baremetal
