// expand(): blueprint -> desired resources with stable addresses and
// dependencies. Built for 100,000-node blueprints: every pool's attributes are
// built (and its cloud-init rendered) once, then copied per node.
#include "engine/graph/expand.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "engine/blueprint/json.h"
#include "engine/catalog/catalog.h"
#include "engine/core/strings.h"
#include "engine/provider/registry.h"
#include "engine/render/render.h"

namespace plinth::graph {

bool address_less(const Resource& a, const Resource& b) {
  return std::tie(a.type, a.name, a.index, a.address) < std::tie(b.type, b.name, b.index, b.address);
}

const Resource* find_sorted(const std::vector<Resource>& sorted, const std::string& address) {
  auto parts = parse_address(address);
  if (!parts) return nullptr;
  auto key = std::tie(parts->type, parts->name, parts->index, address);
  auto it = std::lower_bound(sorted.begin(), sorted.end(), key, [](const Resource& r, const auto& k) {
    return std::tie(r.type, r.name, r.index, r.address) < k;
  });
  return it != sorted.end() && it->address == address ? &*it : nullptr;
}

const Resource* ResourceGraph::find(const std::string& address) const { return find_sorted(resources, address); }

namespace {

/// Builds resources of one blueprint; `out` grows in declaration order and is
/// sorted at the end.
class Expander {
 public:
  explicit Expander(const bp::Blueprint& b) : bp_(b) {}

  Result<ResourceGraph> run() {
    // Which provider serves each logical section, and as which type.
    for (const std::string& section : blueprint_sections()) {
      if (section == "node_pools" || section == "burst_pools") continue;
      std::string provider = schema_registry().default_provider(section);
      if (section == "monitoring" && bp_.monitoring && !bp_.monitoring->provider.empty())
        provider = bp_.monitoring->provider;
      if (const SectionSpec* spec = provider.empty() ? nullptr : schema_registry().section(section, provider))
        served_[section] = {spec->resource_type, provider};
    }
    // A declared cluster takes every section its provider serves: the access
    // section then reaches the cluster instead of only being recorded.
    if (!bp_.clusters.empty()) {
      const bp::Cluster& cl = bp_.clusters.front();
      const std::string provider = cl.provider.empty() ? schema_registry().default_provider("clusters") : cl.provider;
      if (!provider.empty() && !schema_registry().section("clusters", provider))
        return Error::invalid("cluster '" + cl.name + "' (" + cl.origin.loc.str() + "): provider '" + provider +
                              "' does not serve clusters");
      if (!provider.empty())
        for (const std::string& section : blueprint_sections())
          if (section != "node_pools" && section != "burst_pools")
            if (const SectionSpec* spec = schema_registry().section(section, provider)) {
              served_[section] = {spec->resource_type, provider};
              if (section != "clusters") on_cluster_.insert(section);
            }
    }
    for (const auto& [section, present] :
         {std::pair<const char*, bool>{"stacks", !bp_.stacks.empty()}, {"networks.vlans", !bp_.vlans.empty()},
          {"networks.fabrics", !bp_.fabrics.empty()}, {"storage.tiers", !bp_.tiers.empty()},
          {"storage.backups", !bp_.backups.empty()}, {"access.namespaces", !bp_.access.namespaces.empty()},
          {"access.roles", !bp_.access.roles.empty()}, {"access.audit_logging", bp_.access.audit_logging.has_value()},
          {"access.transport", bp_.access.transport.has_value()}, {"monitoring", bp_.monitoring.has_value()},
          {"clusters", !bp_.clusters.empty()}})
      if (present && !served_.count(section))
        return Error::invalid(std::string("no provider serves the blueprint section ") + section +
                              "; this plinth has none registered for it (plinth providers)");

    size_t total = bp_.stacks.size() + bp_.vlans.size() + bp_.fabrics.size() + bp_.tiers.size() +
                   bp_.backups.size() + bp_.access.namespaces.size() + bp_.access.roles.size() + 3;
    for (const auto& p : bp_.node_pools) total += static_cast<size_t>(std::max(p.count, 0));
    for (const auto& p : bp_.burst_pools) total += static_cast<size_t>(std::max(p.desired, 0));
    out_.reserve(total);

    for (const auto& s : bp_.stacks) stack(s);
    for (const auto& v : bp_.vlans) vlan(v);
    for (const auto& f : bp_.fabrics) fabric(f);
    for (const auto& t : bp_.tiers) tier(t);
    for (const auto& b : bp_.backups) backup(b);
    for (const auto& n : bp_.access.namespaces) ns(n);
    for (const auto& r : bp_.access.roles) role(r);
    if (bp_.access.audit_logging) audit_logging(*bp_.access.audit_logging);
    if (bp_.access.transport) transport(*bp_.access.transport);
    for (const auto& p : bp_.node_pools)
      if (auto st = node_pool(p); !st) return st.error();
    for (const auto& p : bp_.burst_pools)
      if (auto st = burst_pool(p); !st) return st.error();
    if (bp_.monitoring) monitoring(*bp_.monitoring);  // after the pools: it may watch them
    for (const auto& c : bp_.clusters) cluster(c);

    // Sort positions, then move each resource once (sorting the resources
    // themselves moves each of them O(log n) times). A pool's nodes come
    // out together and in order, so the runs of one type and name are
    // sorted by their first resource, and the whole only if that is not
    // enough (a name declared twice).
    auto less = [&](size_t a, size_t b) { return address_less(out_[a], out_[b]); };
    std::vector<std::pair<size_t, size_t>> runs;  // [first, end) of each run
    for (size_t i = 0; i < out_.size(); ++i) {
      if (i == 0 || out_[i].type != out_[i - 1].type || out_[i].name != out_[i - 1].name)
        runs.emplace_back(i, i + 1);
      else
        runs.back().second = i + 1;
    }
    std::sort(runs.begin(), runs.end(), [&](const auto& a, const auto& b) { return less(a.first, b.first); });
    std::vector<size_t> order;
    order.reserve(out_.size());
    for (const auto& [first, end] : runs)
      for (size_t i = first; i < end; ++i) order.push_back(i);
    if (!std::is_sorted(order.begin(), order.end(), less)) std::sort(order.begin(), order.end(), less);
    std::vector<Resource> sorted;
    sorted.reserve(out_.size());
    for (size_t i : order) sorted.push_back(std::move(out_[i]));
    return ResourceGraph{std::move(sorted)};
  }

 private:
  struct Served {
    std::string type, provider;
  };
  /// The resource type of a logical section's entities ("storage.tiers" -> "storage.tier").
  const std::string& type(const char* section) const {
    static const std::string none;
    auto it = served_.find(section);
    return it == served_.end() ? none : it->second.type;
  }
  /// Adds an entity of a logical section, as its serving provider's type.
  Resource& logical(const char* section, const std::string& name, const bp::Origin& origin, Json attrs,
                    std::vector<std::string> deps = {}) {
    const Served& s = served_.at(section);
    if (on_cluster_.count(section)) {
      // Which cluster it goes to; the provider connects through the context.
      const bp::Cluster& cl = bp_.clusters.front();
      attrs["cluster"] = cl.name;
      attrs["context"] = cl.context;
    }
    return add(s.type, name, origin, std::move(attrs), std::move(deps), s.provider);
  }

  Resource& add(const std::string& type, const std::string& name, const bp::Origin& origin, Json attrs,
                std::vector<std::string> deps, const std::string& provider, int index = -1) {
    Resource r;
    r.address = make_address(type, name, index);
    r.type = type;
    r.name = name;
    r.index = index;
    r.provider = provider;
    r.attributes = std::move(attrs);
    r.depends_on = std::move(deps);
    r.source = origin.loc;
    out_.push_back(std::move(r));
    return out_.back();
  }

  static std::vector<std::string> sorted_unique(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }

  void stack(const bp::Stack& s) {
    logical("stacks", s.name, s.origin,
        {{"driver", s.driver}, {"cuda", s.cuda}, {"cudnn", s.cudnn}, {"frameworks", s.frameworks}, {"images", s.images}});
  }

  void vlan(const bp::Vlan& v) {
    logical("networks.vlans", v.name, v.origin,
        {{"id", v.id}, {"cidr", v.cidr}, {"mtu", v.mtu}, {"vrf", v.vrf}, {"purpose", v.purpose}});
  }

  void fabric(const bp::Fabric& f) {
    Json a = {{"kind", f.kind},
              {"speed_gbps", f.speed_gbps},
              {"topology", f.topology},
              {"oversubscription", f.oversubscription}};
    if (f.pfc) a["pfc"] = *f.pfc;
    if (f.ecn) a["ecn"] = *f.ecn;
    logical("networks.fabrics", f.name, f.origin, std::move(a));
  }

  void tier(const bp::StorageTier& t) {
    Json a = {{"kind", t.kind},
              {"capacity_tb", t.capacity_tb},
              {"backend", t.backend},
              {"region", t.region},
              {"classification", t.classification}};
    if (t.encryption) {
      Json e = Json::object();
      if (!t.encryption->at_rest.empty()) e["at_rest"] = t.encryption->at_rest;
      if (!t.encryption->in_transit.empty()) e["in_transit"] = t.encryption->in_transit;
      if (!t.encryption->kms_key.empty()) e["kms_key"] = t.encryption->kms_key;
      a["encryption"] = std::move(e);
    }
    std::vector<std::string> deps;
    if (t.lifecycle) {
      a["lifecycle"] = {{"transition_from", t.lifecycle->transition_from},
                        {"after_days", t.lifecycle->after_days},
                        {"expire_days", t.lifecycle->expire_days}};
      if (!t.lifecycle->transition_from.empty() && t.lifecycle->transition_from != t.name)
        deps.push_back(make_address(type("storage.tiers"), t.lifecycle->transition_from));
    }
    logical("storage.tiers", t.name, t.origin, std::move(a), std::move(deps));
  }

  void backup(const bp::Backup& b) {
    logical("storage.backups", b.name, b.origin,
        {{"source", b.source},
         {"target", b.target},
         {"schedule", b.schedule},
         {"retention_days", b.retention_days},
         {"dr_test_interval_days", b.dr_test_interval_days}},
        sorted_unique({make_address(type("storage.tiers"), b.source), make_address(type("storage.tiers"), b.target)}));
  }

  void ns(const bp::Namespace& n) {
    Json a = {{"service_accounts", n.service_accounts}};
    if (n.gpu_quota) a["gpu_quota"] = *n.gpu_quota;
    if (!n.cpu_quota.empty()) a["cpu_quota"] = n.cpu_quota;
    if (!n.memory_quota.empty()) a["memory_quota"] = n.memory_quota;
    logical("access.namespaces", n.name, n.origin, std::move(a));
  }

  void role(const bp::Role& r) {
    std::vector<std::string> deps;
    deps.reserve(r.namespaces.size());
    for (const auto& n : r.namespaces) deps.push_back(make_address(type("access.namespaces"), n));
    Json a = {{"subjects", r.subjects}, {"namespaces", r.namespaces}, {"verbs", r.verbs}, {"resources", r.resources}};
    if (r.scope != "namespace") a["scope"] = r.scope;
    logical("access.roles", r.name, r.origin, std::move(a), sorted_unique(std::move(deps)));
  }

  void audit_logging(const bp::AuditLogging& a) {
    logical("access.audit_logging", "default", a.origin,
        {{"api_server", a.api_server}, {"storage", a.storage}, {"retention_days", a.retention_days}});
  }

  void transport(const bp::Transport& t) {
    logical("access.transport", "default", t.origin, {{"tls_min", t.tls_min}, {"mtls", t.mtls}});
  }

  void monitoring(const bp::Monitoring& m) {
    Json a = {{"dcgm", m.dcgm}, {"prometheus", m.prometheus}, {"grafana", m.grafana}};
    for (const auto& [k, v] : m.settings.items())
      if (!a.contains(k)) a[k] = v;
    const Served& s = served_.at("monitoring");
    const SectionSpec* spec = schema_registry().section("monitoring", s.provider);
    std::vector<std::string> deps;
    if (spec && spec->fleet) {
      // Every machine the blueprint declares, for a provider that watches them.
      Json nodes = Json::array();
      for (const Resource& r : out_) {
        if (r.index < 0) continue;
        const Json& at = r.attributes;
        nodes.push_back({{"address", r.address},
                         {"pool", r.name},
                         {"index", r.index},
                         {"provider", r.provider},
                         {"gpu", at.value("gpu", "")},
                         {"role", at.value("role", "")}});
        deps.push_back(r.address);
      }
      a["nodes"] = std::move(nodes);
    }
    logical("monitoring", "default", m.origin, std::move(a), std::move(deps));
  }

  /// A cluster: the GPU software its node pools need, as the cluster's
  /// provider applies it (for Kubernetes, the GPU Operator's ClusterPolicy):
  /// the driver the pools' stacks pin (the loader checked they agree), the
  /// MIG layout of each pool (profile -> instances per GPU) and the strategy
  /// that exposes it ("none", "single": one profile per pool, "mixed"), and
  /// whether monitoring asks for the DCGM exporter; and each pool's nodes
  /// (count, catalog GPU, role) so the provider can label them.
  void cluster(const bp::Cluster& c) {
    std::string driver;
    Json layouts = Json::object();
    Json nodes = Json::object();
    std::vector<std::string> pools;
    bool mixed = false;
    for (const auto& p : bp_.node_pools) {
      if (!c.pools.empty() && std::find(c.pools.begin(), c.pools.end(), p.name) == c.pools.end()) continue;
      pools.push_back(p.name);
      const catalog::GpuModel* gpu = gpu_model(p.hardware.gpu);
      nodes[p.name] = {{"count", p.count}, {"gpu", gpu ? gpu->name : p.hardware.gpu}, {"role", p.role}};
      if (const bp::Stack* st = bp_.find_stack(p.stack); st && driver.empty()) driver = st->driver;
      if (!p.mig.enabled()) continue;
      std::vector<std::pair<std::string, int>> layout = p.mig.profiles;
      if (layout.empty() && !p.mig.layout.empty())
        if (const catalog::GpuModel* model = gpu_model(p.hardware.gpu)) layout = model->mig_balanced;
      if (layout.empty()) layout = {{p.mig.profile, p.mig.instances}};
      Json l = Json::object();
      for (const auto& [profile, n] : layout) l[profile] = n;
      mixed = mixed || layout.size() > 1;
      layouts[p.name] = std::move(l);
    }
    Json a = {{"context", c.context},
              {"pools", pools},
              {"driver", driver},
              {"mig_strategy", layouts.empty() ? "none" : mixed ? "mixed" : "single"},
              {"mig_layouts", std::move(layouts)},
              {"nodes", std::move(nodes)},
              {"dcgm_exporter", bp_.monitoring && bp_.monitoring->dcgm}};
    const Served& s = served_.at("clusters");
    add(s.type, c.name, c.origin, std::move(a), {}, s.provider);
  }

  /// Dependencies shared by every member of a pool.
  std::vector<std::string> pool_deps(const std::string& stack, const std::string& fabric,
                                            const std::vector<std::string>& networks,
                                            const std::vector<std::string>& storage, const std::string& extra_tier) {
    std::vector<std::string> deps;
    deps.reserve(networks.size() + storage.size() + 3);
    if (!stack.empty()) deps.push_back(make_address(type("stacks"), stack));
    if (!fabric.empty()) deps.push_back(make_address(type("networks.fabrics"), fabric));
    for (const auto& n : networks) deps.push_back(make_address(type("networks.vlans"), n));
    for (const auto& s : storage) deps.push_back(make_address(type("storage.tiers"), s));
    if (!extra_tier.empty()) deps.push_back(make_address(type("storage.tiers"), extra_tier));
    return sorted_unique(std::move(deps));
  }

  Result<std::string> user_data_hash(const std::string& pool) {
    auto ci = render::render_pool(bp_, pool);
    if (!ci) return Error::invalid("cannot render cloud-init for pool '" + pool + "': " + ci.error().message);
    return ci->hash;
  }

  /// The provider's facts of each instance type a burst pool may launch
  /// (its `instance_type`, then the fallbacks of the setting the provider
  /// names): fact K becomes {K: {TYPE: value}} ("efa_interfaces" on AWS).
  static Json instance_facts(const bp::BurstPool& p, const SectionSpec& spec) {
    Json out = Json::object();
    const ProviderSchema* provider = schema_registry().provider(p.provider);
    if (!provider) return out;
    for (const auto& t : bp::candidate_types(p, spec.fallback_types))
      if (const InstanceType* it = provider->instance_type(t))
        for (const auto& [k, v] : it->facts.items())
          if (!(v.is_number() && v.get<double>() == 0)) out[k][t] = v;
    return out;
  }

  /// The catalog model a pool names (by name, alias or product name), or nullptr.
  static const catalog::GpuModel* gpu_model(const std::string& gpu) {
    auto cat = catalog::default_catalog();
    return cat ? (*cat)->gpu(gpu) : nullptr;
  }

  /// The names a BMC may report for catalog GPU `m` (product name, then
  /// aliases), so the baremetal provider can check the inventory without the
  /// catalog.
  static std::vector<std::string> gpu_product_names(const catalog::GpuModel& m) {
    std::vector<std::string> names = {m.product_name};
    names.insert(names.end(), m.aliases.begin(), m.aliases.end());
    return names;
  }

  /// `text` with every "{index}" replaced by `i`.
  static std::string with_index(std::string text, int i) {
    static const std::string kPlaceholder = "{index}";
    const std::string idx = std::to_string(i);
    for (size_t at = text.find(kPlaceholder); at != std::string::npos; at = text.find(kPlaceholder, at + idx.size()))
      text.replace(at, kPlaceholder.size(), idx);
    return text;
  }

  /// The attributes `spec.fields` take from `entity` (its blueprint form):
  /// those every member shares into `shared`, the per-member ones into
  /// `members` (`count` entries). Blocks the entity lacks are skipped.
  static Status take_fields(const SectionSpec& spec, const Json& entity, const std::string& what, int count,
                            Json& shared, std::vector<Json>& members) {
    members.assign(static_cast<size_t>(count), Json::object());
    for (const FieldSpec& f : spec.fields) {
      std::string pointer = "/" + f.from;
      std::replace(pointer.begin(), pointer.end(), '.', '/');
      const Json::json_pointer path(pointer);
      const Json::json_pointer block("/" + f.from.substr(0, f.from.find('.')));
      if (!entity.contains(block)) continue;
      Json v = !f.value.is_null() ? f.value : entity.contains(path) ? entity.at(path) : f.fallback;
      if (v.is_null()) continue;
      if (!f.per_member) {
        shared[f.to] = std::move(v);
        continue;
      }
      const bool templated = v.is_string() || (v.is_array() && v.size() == 1 && v[0].is_string() &&
                                               v[0].get<std::string>().find("{index}") != std::string::npos);
      if (!templated && (!v.is_array() || v.size() != static_cast<size_t>(count)))
        return Error::invalid(what + " lists " + std::to_string(v.is_array() ? v.size() : 1) + " value(s) of '" +
                              f.from + "' for " + std::to_string(count) +
                              " member(s); give one per member or one template containing {index}");
      for (int i = 0; i < count; ++i)
        members[static_cast<size_t>(i)][f.to] =
            templated ? Json(with_index(v.is_string() ? v.get<std::string>() : v[0].get<std::string>(), i))
                      : v[static_cast<size_t>(i)];
    }
    return {};
  }

  Status node_pool(const bp::NodePool& p) {
    auto hash = user_data_hash(p.name);
    if (!hash) return hash.error();

    // The catalog name, not the spelling: an alias ("NVIDIA H100 80GB HBM3" for
    // H100-80GB) yields the same attributes and user-data, so it never replaces a node.
    const catalog::GpuModel* model = gpu_model(p.hardware.gpu);
    std::string mig_profile = p.mig.profile;
    int mig_instances = p.mig.instances;
    if (!p.mig.layout.empty() || !p.mig.profiles.empty()) {
      std::vector<std::pair<std::string, int>> layout = p.mig.profiles;
      if (layout.empty() && model) layout = model->mig_balanced;
      std::vector<std::string> parts;
      mig_instances = 0;
      for (const auto& [name, n] : layout) {
        parts.push_back(std::to_string(n) + "x" + name);
        mig_instances += n;
      }
      mig_profile = (p.mig.layout.empty() ? std::string("mixed") : p.mig.layout) + ":" + join(parts, "+");
    }
    Json a = {{"role", p.role},
              {"gpu", model ? model->name : p.hardware.gpu},
              {"gpus_per_node", p.hardware.gpus_per_node},
              {"cpu_cores", p.hardware.cpu_cores},
              {"memory_gb", p.hardware.memory_gb},
              {"stack", p.stack},
              {"user_data_hash", *hash},
              {"bios", p.bios},
              {"fabric", p.fabric},
              {"networks", p.networks},
              {"storage", p.storage},
              {"mig_profile", mig_profile},
              {"mig_instances", mig_instances}};
    if (model) a["gpu_product_names"] = gpu_product_names(*model);
    if (p.boot) {
      a["boot_method"] = p.boot->method;
      a["boot_image"] = p.boot->image;
    }
    for (const auto& [k, v] : p.settings.items())
      if (!a.contains(k)) a[k] = v;
    const SectionSpec* spec = schema_registry().section("node_pools", p.provider);
    if (!spec)
      return Error::invalid("node pool '" + p.name + "': provider '" + p.provider + "' does not serve node_pools");
    // Blocks only the provider reads (bmc: on bare metal) become attributes as its schema says.
    std::vector<Json> members;
    if (auto st = take_fields(*spec, bp::to_json(p), "node pool '" + p.name + "'", p.count, a, members); !st)
      return st;
    const auto deps = pool_deps(p.stack, p.fabric, p.networks, p.storage, "");
    for (int i = 0; i < p.count; ++i) {
      Resource& r = add(spec->resource_type, p.name, p.origin, a, deps, p.provider, i);
      for (auto& [k, v] : members[static_cast<size_t>(i)].items()) r.attributes[k] = std::move(v);
    }
    return {};
  }

  Status burst_pool(const bp::BurstPool& p) {
    const SectionSpec* spec = schema_registry().section("burst_pools", p.provider);
    if (!spec)
      return Error::invalid("burst pool '" + p.name + "': provider '" + p.provider + "' does not serve burst_pools");
    const std::string& type = spec->resource_type;
    auto hash = user_data_hash(p.name);
    if (!hash) return hash.error();

    Json a = {{"instance_type", p.instance_type},
              {"region", p.region},
              {"zone", p.zone},
              {"spot", p.spot},
              {"stack", p.stack},
              {"user_data_hash", *hash},
              {"networks", p.networks},
              {"storage", p.storage}};
    for (const auto& [k, v] : p.settings.items())
      if (!a.contains(k)) a[k] = v;
    Json facts = instance_facts(p, *spec);
    for (auto& [k, v] : facts.items()) a[k] = std::move(v);
    std::string checkpoint_tier;
    if (p.checkpointing) {
      a["checkpointing"] = {{"interval_minutes", p.checkpointing->interval_minutes},
                            {"target", p.checkpointing->target}};
      checkpoint_tier = p.checkpointing->target;
    }
    const auto deps = pool_deps(p.stack, "", p.networks, p.storage, checkpoint_tier);
    // The rendered cloud-init itself reaches the provider at apply time
    // (apply::Options::prepare); user_data_hash stands for it in the plan.
    for (int i = 0; i < p.desired; ++i) add(type, p.name, p.origin, a, deps, p.provider, i);
    return {};
  }

  const bp::Blueprint& bp_;
  std::map<std::string, Served> served_;  // logical section -> type and provider
  std::set<std::string> on_cluster_;      // sections moved to the declared cluster's provider
  std::vector<Resource> out_;
};

}  // namespace

Result<ResourceGraph> expand(const bp::Blueprint& blueprint) { return Expander(blueprint).run(); }

}  // namespace plinth::graph
