// The readers of the compute sections: node pools (hardware, model size,
// interfaces, boot, BMC, MIG) and burst pools, with the checks of BMC
// endpoints and credentials (bmc_endpoint_problem in loader.h too).
#include <algorithm>
#include <cctype>

#include "engine/blueprint/loader_internal.h"
#include "engine/core/duration.h"
#include "engine/core/ipv4.h"

namespace plinth::bp::detail {
namespace {

// Allowed keys per section, in the order docs/blueprint.md lists them.
const Keys kNodePoolKeys{"name",  "provider", "count", "role",     "hardware", "largest_model_gb",
                         "stack", "fabric",   "boot",  "bios",     "networks", "storage",
                         "bmc",   "mig",      "largest_model", "interfaces", "imex", "os", "rollout"};
const Keys kRolloutKeys{"max_unavailable", "drain_timeout"};
const Keys kModelKeys{"params_b", "precision", "training"};
const Keys kInterfacesKeys{"bond", "rdma"};
const Keys kImexKeys{"nodes"};
const Keys kHardwareKeys{"gpu", "gpus_per_node", "cpu_cores", "memory_gb", "rdma_nics"};
const Keys kBootKeys{"method", "image"};
const Keys kBmcKeys{"endpoints", "credentials", "ca_bundle"};
const Keys kMigKeys{"profile", "instances", "layout", "profiles"};
const Keys kBurstPoolKeys{"name",    "provider", "region",        "zone",     "instance_type", "desired", "max",
                          "spot",    "stack",    "checkpointing", "networks", "storage",       "os",      "transfer",
                          "multi_node"};
const Keys kCheckpointingKeys{"interval_minutes", "target"};

// Allowed values of enumerated fields.
const Keys kRoles{"training", "inference", "preprocessing"};
const Keys kBootMethods{"pxe", "uefi-http", "virtual-media"};
const Keys kTrainingMethods{"full", "lora"};
const Keys kOperatingSystems{"ubuntu-22.04", "ubuntu-24.04", "rhel-8", "rhel-9", "rocky-8", "rocky-9"};
const Keys kMigLayouts{"all-balanced"};

// Limits on sizes that become resources, loops or memory (docs/blueprint.md,
// "Limits"): a typo such as `count: 2000000000` is an error naming the limit,
// not an out-of-memory abort in plan.
constexpr int kMaxPoolNodes = 100000;     // nodes in a node pool; instances (desired, max) in a burst pool
constexpr int kMaxGpusPerNode = 64;
constexpr int kMaxRdmaNics = 64;          // per node
constexpr int kMaxCpuCores = 16384;
constexpr int kMaxMemoryGb = 1048576;     // 1 PiB
constexpr int kMaxMigInstances = 64;      // per GPU; the catalog's profiles allow at most 7

bool valid_env_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

/// What is wrong with a BMC endpoint URL: {code, message, hint}, or nullopt.
/// Anything but https:// would send the password in clear text (BP011), as
/// would a URL without a scheme or host (BP011); a user or password in the
/// URL (BP008) would land in plans and state, and is never repeated.
struct EndpointProblem {
  const char* code;
  std::string message, hint;
  bool secret = false;  ///< the URL holds a secret: show neither it nor its source line
};
std::optional<EndpointProblem> endpoint_problem(const std::string& url) {
  const size_t sep = url.find("://");
  std::string scheme = sep == std::string::npos ? "" : url.substr(0, sep);
  for (char& ch : scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::string rest = sep == std::string::npos ? url : url.substr(sep + 3);
  const std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string::npos)
    return EndpointProblem{"BP008",
                           "holds a user name or password in the URL (USER:PASSWORD@HOST); it would be shown in "
                           "plans and stored in state",
                           "remove it from the URL; the BMC user and password come from bmc.credentials (env:NAME "
                           "or file:PATH)",
                           true};
  if (scheme == "https") {
    if (authority.empty() || authority[0] == ':')
      return EndpointProblem{"BP011", "has no host",
                             "write https://HOST[:PORT][/PATH], e.g. https://bmc-{index}.dc1.example"};
    return std::nullopt;
  }
  if (scheme == "http")
    return EndpointProblem{"BP011",
                           "uses plain http: the BMC user and password would be sent in clear text",
                           "use https:// (Redfish services speak TLS; for a private CA set bmc.ca_bundle); plain "
                           "http is never accepted"};
  if (sep == std::string::npos)
    return EndpointProblem{"BP011", "has no scheme", "write it as a URL: https://" + url};
  return EndpointProblem{"BP011", "uses scheme '" + scheme + "'",
                         "BMCs are reached over Redfish: write https://HOST[:PORT][/PATH]"};
}

void check_bmc_endpoint(const Ctx& c, const std::string& url, const SourceLoc& at, const std::string& who) {
  auto p = endpoint_problem(url);
  if (!p) return;
  c.error(p->code, at,
          (p->secret ? "'bmc.endpoints' in " + who + " " : "BMC endpoint '" + url + "' in " + who + " ") + p->message,
          p->hint);
  if (p->secret) c.diags->back().show_source = false;  // the excerpt would print the password
}

}  // namespace

void Loader::load_node_pools(const Obj& top) {
  auto pools = top.list("node_pools");
  if (!pools) return;
  const Ctx& c = top.ctx();
  int i = 0;
  for (const Node& item : *pools) {
    NodePool p;
    Obj o(c, item, c.loc(item), "node pool #" + std::to_string(++i), "", &p.origin, kNodePoolKeys);
    if (!o.ok()) continue;
    p.origin.loc = o.loc();
    std::vector<Obj::Entry> extras;
    o.collect_unknown(&extras);
    bool named = read_name(o, p.name, pools_, "node pool");
    o.str("provider", p.provider);
    o.integer("count", p.count, true, 0, kMaxPoolNodes);
    o.enumeration("role", p.role, kRoles);
    if (auto h = o.sub("hardware", kHardwareKeys, true)) {
      h->str("gpu", p.hardware.gpu, true);
      h->integer("gpus_per_node", p.hardware.gpus_per_node, true, 0, kMaxGpusPerNode);
      h->integer("cpu_cores", p.hardware.cpu_cores, false, 0, kMaxCpuCores);
      h->integer("memory_gb", p.hardware.memory_gb, false, 0, kMaxMemoryGb);
      h->integer("rdma_nics", p.hardware.rdma_nics, false, 0, kMaxRdmaNics);
    }
    double largest = 0;
    if (o.number("largest_model_gb", largest)) p.largest_model_gb = largest;
    if (auto m = o.sub("largest_model", kModelKeys)) {
      ModelSize ms;
      if (m->number("params_b", ms.params_b, true) && ms.params_b <= 0)
        m->invalid(*m->get("params_b"), "'largest_model.params_b' in " + o.label() + " must be above 0",
                   "give the model's size in billions of parameters, e.g. params_b: 70");
      m->enumeration("precision", ms.precision, kPrecisions, true);
      m->enumeration("training", ms.training, kTrainingMethods);
      p.largest_model = ms;
      if (p.largest_model_gb)
        o.invalid(*o.get("largest_model"), "node pool '" + p.name + "' sets both largest_model and largest_model_gb",
                  "keep largest_model (size and precision); largest_model_gb is the older, raw-weights form");
    }
    if (auto ifs = o.sub("interfaces", kInterfacesKeys)) {
      Interfaces x;
      ifs->str_list("bond", x.bond);
      ifs->str_list("rdma", x.rdma);
      for (const auto* list : {&x.bond, &x.rdma})
        for (const auto& name : *list)
          if (name.empty() || !std::all_of(name.begin(), name.end(), [](char ch) {
                return std::isalnum(static_cast<unsigned char>(ch)) || ch == '*' || ch == '?' || ch == '-' || ch == '_' ||
                       ch == '.' || ch == '[' || ch == ']';
              }))
            ifs->invalid(*ifs->get(list == &x.bond ? "bond" : "rdma"),
                         "interface '" + name + "' in " + o.label() + " is not an interface name or glob",
                         "use a name such as eno1 or a glob such as \"ens1f*\"");
      for (const auto& b : x.bond)
        if (std::find(x.rdma.begin(), x.rdma.end(), b) != x.rdma.end())
          ifs->invalid(*ifs->get("bond"), "interface '" + b + "' of " + o.label() + " is both bonded and an RDMA rail",
                       "RDMA rails keep their own interfaces; list it under one of bond or rdma");
      p.interfaces = x;
    }
    if (auto im = o.sub("imex", kImexKeys)) {
      Imex x;
      if (im->str_list("nodes", x.nodes, true)) {
        std::vector<std::string> seen;
        for (const auto& a : x.nodes) {
          if (!parse_ipv4(a))
            im->invalid(*im->get("nodes"), "IMEX node '" + a + "' in " + o.label() + " is not an IPv4 address",
                        "list the compute trays' IPv4 addresses on the network their IMEX daemons use, e.g. 10.100.1.11");
          else if (std::find(seen.begin(), seen.end(), a) != seen.end())
            im->invalid(*im->get("nodes"), "IMEX node " + a + " is listed twice in " + o.label(),
                        "list each compute tray once");
          seen.push_back(a);
        }
      }
      p.imex = x;
    }
    o.enumeration("os", p.os, kOperatingSystems);
    if (auto r = o.sub("rollout", kRolloutKeys)) {
      Rollout x;
      if (const Obj::Entry* m = r->get("max_unavailable"); m && m->value.IsScalar()) {
        const std::string v = m->value.Scalar();
        if (!v.empty() && v.back() == '%') {
          auto n = parse_int(v.substr(0, v.size() - 1));
          if (!n || *n < 1 || *n > 100)
            r->invalid(*m, "'rollout.max_unavailable' in " + o.label() + " is '" + v + "', not a percentage from 1% to 100%",
                       "write a number of nodes (2) or a percentage of the pool (\"25%\")");
          x.max_unavailable = n ? static_cast<int>(*n) : 1;
          x.percent = true;
          r->record("max_unavailable", m->value_loc);
        } else {
          r->integer("max_unavailable", x.max_unavailable, false, 1, 100000);
        }
      } else if (m) {
        r->wrong_type(*m, "an integer or a percentage");
      }
      std::string timeout;
      if (r->str("drain_timeout", timeout)) {
        auto d = parse_duration(timeout);
        if (!d || d->count() <= 0)
          r->invalid(*r->get("drain_timeout"),
                     "'rollout.drain_timeout' in " + o.label() + " is '" + timeout + "', not a positive duration",
                     "write how long draining one node may take, e.g. 10m, 90s or 1h");
        else
          x.drain_timeout = *d;
      }
      p.rollout = x;
    }
    o.str("stack", p.stack, true);
    o.str("fabric", p.fabric);
    if (auto b = o.sub("boot", kBootKeys)) {
      Boot boot;
      b->enumeration("method", boot.method, kBootMethods, true);
      b->str("image", boot.image);
      p.boot = boot;
    }
    o.str_map("bios", p.bios);
    o.str_list("networks", p.networks);
    o.str_list("storage", p.storage);
    if (auto b = o.sub("bmc", kBmcKeys)) {
      Bmc bmc;
      if (const Obj::Entry* ep = b->get("endpoints", true)) {
        if (ep->value.IsScalar()) {
          bmc.endpoints = {ep->value.Scalar()};
          b->record("endpoints", ep->value_loc);
          check_bmc_endpoint(c, bmc.endpoints[0], ep->value_loc, o.label());
          if (bmc.endpoints[0].find("{index}") == std::string::npos)
            b->invalid(*ep,
                       "'bmc.endpoints' in " + o.label() + " is one endpoint without '{index}' for a pool of nodes",
                       "use a template such as \"https://bmc-{index}.dc1.example\" or list one endpoint per node");
        } else if (b->str_list("endpoints", bmc.endpoints)) {
          for (size_t k = 0; k < bmc.endpoints.size(); ++k)
            check_bmc_endpoint(c, bmc.endpoints[k], p.origin.at("bmc.endpoints." + std::to_string(k)), o.label());
          if (static_cast<int>(bmc.endpoints.size()) != p.count && p.count > 0)
            b->invalid(*ep,
                       "'bmc.endpoints' in " + o.label() + " lists " + std::to_string(bmc.endpoints.size()) +
                           " endpoint(s) for " + std::to_string(p.count) + " node(s)",
                       "list exactly one endpoint per node, or use a template with {index}");
        }
      }
      if (const Obj::Entry* ce_map = b->get("credentials"); ce_map && !ce_map->value.IsScalar()) {
        // A map or list here is usually {user: ..., password: ...}: report
        // the type without the source line, which would print the password.
        b->wrong_type(*ce_map, "a string");
        c.diags->back().show_source = false;
        c.diags->back().hint = "write credentials: env:NAME or file:PATH; the user and password go in that "
                               "variable or file as \"user:password\", never in the blueprint";
      } else if (b->str("credentials", bmc.credentials, true)) {
        const std::string& cr = bmc.credentials;
        const Obj::Entry* ce = b->get("credentials");
        if (starts_with(cr, "env:")) {
          if (!valid_env_name(std::string_view(cr).substr(4)))
            c.error("BP008", ce->value_loc,
                    "'bmc.credentials' in " + o.label() + " names an invalid environment variable '" + cr.substr(4) + "'",
                    "write env:NAME with letters, digits and '_', e.g. env:BMC_CREDENTIALS");
        } else if (starts_with(cr, "file:")) {
          if (cr.size() == 5)
            c.error("BP008", ce->value_loc, "'bmc.credentials' in " + o.label() + " has an empty file path",
                    "write file:PATH naming a file that holds \"user:password\"");
        } else {
          // Never echo the value: it may be a real password.
          c.error("BP008", ce->value_loc,
                  cr.find(':') != std::string::npos
                      ? "'bmc.credentials' in " + o.label() + " looks like an inline user:password; blueprints must not hold secrets"
                      : "'bmc.credentials' in " + o.label() + " must be env:NAME or file:PATH",
                  "move the secret to an environment variable and write credentials: env:BMC_CREDENTIALS "
                  "(or keep it in a file and write credentials: file:/path/to/secret)");
          c.diags->back().show_source = false;  // the excerpt would print the secret
          bmc.credentials.clear();
        }
      }
      b->str("ca_bundle", bmc.ca_bundle);
      p.bmc = bmc;
    }
    if (auto m = o.sub("mig", kMigKeys)) {
      const bool mixed = m->get("layout") || m->get("profiles");
      m->str("profile", p.mig.profile, !mixed);
      m->integer("instances", p.mig.instances, false, 0, kMaxMigInstances);
      m->enumeration("layout", p.mig.layout, kMigLayouts);
      if (const Obj::Entry* prof = m->get("profiles")) {
        if (!prof->value.IsMap()) {
          m->wrong_type(*prof, "a map");
        } else {
          m->record("profiles", prof->value_loc);
          for (const auto& [k, v] : prof->value.pairs()) {
            std::optional<long long> n;
            if (plain_scalar(v)) n = parse_int(v.Scalar());
            if (!n || *n < 1 || *n > kMaxMigInstances) {
              c.error("BP003", c.loc(v.IsNull() ? k : v),
                      "'mig.profiles." + k.Scalar() + "' in " + o.label() + " must be a count of instances per GPU, not " +
                          describe(v),
                      "write profile: count, e.g. \"1g.10gb\": 2");
              continue;
            }
            p.mig.profiles.emplace_back(k.Scalar(), static_cast<int>(*n));
            m->record("profiles." + k.Scalar(), c.loc(v));
          }
        }
      }
      int forms = (m->get("profile") && p.mig.profile != "none" ? 1 : 0) + (m->get("layout") ? 1 : 0) + (m->get("profiles") ? 1 : 0);
      if (forms > 1)
        m->invalid(*m->get(m->get("layout") ? "layout" : "profiles"),
                   "'mig' in " + o.label() + " sets more than one of profile, layout and profiles",
                   "use profile + instances for one profile, layout: all-balanced, or profiles: {PROFILE: COUNT, ...}");
    }
    if (named) {
      bp_.node_pools.push_back(std::move(p));
      keep_extras("node_pools", bp_.node_pools.size() - 1, o, extras);
    }
  }
}

void Loader::load_burst_pools(const Obj& top) {
  auto pools = top.list("burst_pools");
  if (!pools) return;
  const Ctx& c = top.ctx();
  int i = 0;
  for (const Node& item : *pools) {
    BurstPool p;
    Obj o(c, item, c.loc(item), "burst pool #" + std::to_string(++i), "", &p.origin, kBurstPoolKeys);
    if (!o.ok()) continue;
    p.origin.loc = o.loc();
    std::vector<Obj::Entry> extras;
    o.collect_unknown(&extras);
    bool named = read_name(o, p.name, pools_, "burst pool");
    o.str("provider", p.provider, true);
    o.str("region", p.region, true);
    o.str("zone", p.zone);
    o.str("instance_type", p.instance_type, true);
    bool has_desired = o.integer("desired", p.desired, false, 0, kMaxPoolNodes);
    bool has_max = o.integer("max", p.max, false, 0, kMaxPoolNodes);
    if (has_desired && has_max && p.desired > p.max)
      o.invalid(*o.get("desired"),
                "'desired' (" + std::to_string(p.desired) + ") exceeds 'max' (" + std::to_string(p.max) + ") in " +
                    o.label(),
                "lower desired or raise max");
    o.boolean("spot", p.spot);
    o.boolean("multi_node", p.multi_node);
    o.str("stack", p.stack, true);
    if (auto ck = o.sub("checkpointing", kCheckpointingKeys)) {
      Checkpointing cp;
      ck->integer("interval_minutes", cp.interval_minutes, true, 1);
      ck->str("target", cp.target, true);
      p.checkpointing = cp;
    }
    o.str_list("networks", p.networks);
    o.str_list("storage", p.storage);
    o.enumeration("os", p.os, kOperatingSystems);
    if (auto tr = o.sub("transfer", kTransferKeys)) {
      Transfer x;
      tr->enumeration("basis", x.basis, kTransferBases, true);
      tr->str("reference", x.reference);
      p.transfer = x;
    }
    if (named) {
      bp_.burst_pools.push_back(std::move(p));
      keep_extras("burst_pools", bp_.burst_pools.size() - 1, o, extras);
    }
  }
}

}  // namespace plinth::bp::detail

namespace plinth::bp {

std::string bmc_endpoint_problem(const std::string& url) {
  auto p = detail::endpoint_problem(url);
  if (!p) return "";
  return (p->secret ? std::string("the BMC endpoint URL ") : "the BMC endpoint '" + url + "' ") + p->message + "; " +
         p->hint;
}

}  // namespace plinth::bp
