#include "engine/blueprint/json.h"

#include "engine/core/duration.h"

namespace plinth::bp {
namespace {

// Sets `key` only when `value` is not empty ("" means "not set" in the model).
void put(Json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

Json strings(const std::vector<std::string>& v) { return Json(v); }

Json string_map(const std::map<std::string, std::string>& m) {
  Json j = Json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

Json entity(const std::string& name, const Origin& o) {
  Json j = Json::object();
  put(j, "name", name);
  j["_source"] = o.loc.str();
  return j;
}

Json stack(const Stack& s) {
  Json j = entity(s.name, s.origin);
  put(j, "driver", s.driver);
  put(j, "cuda", s.cuda);
  put(j, "cudnn", s.cudnn);
  j["frameworks"] = string_map(s.frameworks);
  j["images"] = strings(s.images);
  put(j, "kernel_modules", s.kernel_modules);
  put(j, "container_toolkit", s.container_toolkit);
  j["cuda_compat"] = s.cuda_compat;
  put(j, "precision", s.precision);
  return j;
}

Json vlan(const Vlan& v) {
  Json j = entity(v.name, v.origin);
  j["id"] = v.id;
  put(j, "cidr", v.cidr);
  put(j, "vrf", v.vrf);
  put(j, "purpose", v.purpose);
  j["mtu"] = v.mtu;
  return j;
}

Json fabric(const Fabric& f) {
  Json j = entity(f.name, f.origin);
  put(j, "kind", f.kind);
  j["speed_gbps"] = f.speed_gbps;
  put(j, "topology", f.topology);
  put(j, "oversubscription", f.oversubscription);
  if (f.pfc) j["pfc"] = *f.pfc;
  if (f.ecn) j["ecn"] = *f.ecn;
  put(j, "rdma_stack", f.rdma_stack);
  return j;
}

Json transfer(const Transfer& t) {
  Json j = Json::object();
  put(j, "basis", t.basis);
  put(j, "reference", t.reference);
  return j;
}

Json tier(const StorageTier& t) {
  Json j = entity(t.name, t.origin);
  put(j, "kind", t.kind);
  j["capacity_tb"] = t.capacity_tb;
  put(j, "backend", t.backend);
  put(j, "region", t.region);
  put(j, "classification", t.classification);
  if (t.encryption) {
    Json e = Json::object();
    put(e, "at_rest", t.encryption->at_rest);
    put(e, "in_transit", t.encryption->in_transit);
    put(e, "kms_key", t.encryption->kms_key);
    j["encryption"] = std::move(e);
  }
  if (t.lifecycle) {
    Json l = Json::object();
    put(l, "transition_from", t.lifecycle->transition_from);
    l["after_days"] = t.lifecycle->after_days;
    l["expire_days"] = t.lifecycle->expire_days;
    j["lifecycle"] = std::move(l);
  }
  put(j, "export", t.remote);
  put(j, "mount_point", t.mount_point);
  if (t.transfer) j["transfer"] = transfer(*t.transfer);
  return j;
}

Json backup(const Backup& b) {
  Json j = entity(b.name, b.origin);
  put(j, "source", b.source);
  put(j, "target", b.target);
  put(j, "schedule", b.schedule);
  j["retention_days"] = b.retention_days;
  j["dr_test_interval_days"] = b.dr_test_interval_days;
  return j;
}

Json node_pool(const NodePool& p) {
  Json j = entity(p.name, p.origin);
  put(j, "provider", p.provider);
  j["count"] = p.count;
  put(j, "role", p.role);
  Json h = Json::object();
  put(h, "gpu", p.hardware.gpu);
  h["gpus_per_node"] = p.hardware.gpus_per_node;
  h["cpu_cores"] = p.hardware.cpu_cores;
  h["memory_gb"] = p.hardware.memory_gb;
  h["rdma_nics"] = p.hardware.rdma_nics;
  j["hardware"] = std::move(h);
  if (p.largest_model_gb) j["largest_model_gb"] = *p.largest_model_gb;
  if (p.largest_model)
    j["largest_model"] = {{"params_b", p.largest_model->params_b},
                          {"precision", p.largest_model->precision},
                          {"training", p.largest_model->training}};
  if (p.interfaces) j["interfaces"] = {{"bond", strings(p.interfaces->bond)}, {"rdma", strings(p.interfaces->rdma)}};
  if (p.imex) j["imex"] = {{"nodes", strings(p.imex->nodes)}};
  put(j, "os", p.os);
  if (p.rollout) {
    j["rollout"] = {{"max_unavailable", p.rollout->percent ? Json(std::to_string(p.rollout->max_unavailable) + "%")
                                                           : Json(p.rollout->max_unavailable)}};
    if (p.rollout->drain_timeout.count() > 0) j["rollout"]["drain_timeout"] = format_duration(p.rollout->drain_timeout);
  }
  put(j, "stack", p.stack);
  put(j, "fabric", p.fabric);
  if (p.boot) {
    Json b = Json::object();
    put(b, "method", p.boot->method);
    put(b, "image", p.boot->image);
    j["boot"] = std::move(b);
  }
  j["bios"] = string_map(p.bios);
  j["networks"] = strings(p.networks);
  j["storage"] = strings(p.storage);
  if (p.bmc) {
    Json b = Json::object();
    b["endpoints"] = strings(p.bmc->endpoints);
    put(b, "credentials", p.bmc->credentials);  // a reference (env:/file:), never the secret
    put(b, "ca_bundle", p.bmc->ca_bundle);
    j["bmc"] = std::move(b);
  }
  j["mig"] = {{"profile", p.mig.profile}, {"instances", p.mig.instances}};
  if (!p.mig.layout.empty()) j["mig"]["layout"] = p.mig.layout;
  if (!p.mig.profiles.empty()) {
    Json m = Json::object();
    for (const auto& [name, n] : p.mig.profiles) m[name] = n;
    j["mig"]["profiles"] = std::move(m);
  }
  for (const auto& [k, v] : p.settings.items())
    if (!j.contains(k)) j[k] = v;
  return j;
}

Json burst_pool(const BurstPool& p) {
  Json j = entity(p.name, p.origin);
  put(j, "provider", p.provider);
  put(j, "region", p.region);
  put(j, "zone", p.zone);
  put(j, "instance_type", p.instance_type);
  j["desired"] = p.desired;
  j["max"] = p.max;
  j["spot"] = p.spot;
  j["multi_node"] = p.multi_node;
  put(j, "stack", p.stack);
  if (p.checkpointing) {
    Json c = Json::object();
    c["interval_minutes"] = p.checkpointing->interval_minutes;
    put(c, "target", p.checkpointing->target);
    j["checkpointing"] = std::move(c);
  }
  j["networks"] = strings(p.networks);
  j["storage"] = strings(p.storage);
  put(j, "os", p.os);
  if (p.transfer) j["transfer"] = transfer(*p.transfer);
  for (const auto& [k, v] : p.settings.items())
    if (!j.contains(k)) j[k] = v;
  return j;
}

template <typename T, typename F>
Json list(const std::vector<T>& v, F f) {
  Json j = Json::array();
  for (const T& x : v) j.push_back(f(x));
  return j;
}

}  // namespace

Json to_json(const NodePool& pool) { return node_pool(pool); }

Json to_json(const Blueprint& bp) {
  Json j = Json::object();
  j["apiVersion"] = bp.api_version;
  j["kind"] = "Blueprint";

  Json m = entity(bp.metadata.name, bp.metadata.origin);
  put(m, "owner", bp.metadata.owner);
  m["compliance"] = strings(bp.metadata.compliance);
  m["labels"] = string_map(bp.metadata.labels);
  Json agreements = Json::array();
  for (const Agreement& a : bp.metadata.agreements)
    agreements.push_back({{"provider", a.provider}, {"kind", a.kind}, {"reference", a.reference}});
  m["agreements"] = std::move(agreements);
  put(m, "dpia", bp.metadata.dpia);
  j["metadata"] = std::move(m);

  Json stacks = Json::object();
  for (const Stack& s : bp.stacks) stacks[s.name] = stack(s);
  j["stacks"] = std::move(stacks);

  j["networks"] = {{"vlans", list(bp.vlans, vlan)}, {"fabrics", list(bp.fabrics, fabric)}};
  j["storage"] = {{"tiers", list(bp.tiers, tier)}, {"backups", list(bp.backups, backup)}};
  j["node_pools"] = list(bp.node_pools, node_pool);
  j["burst_pools"] = list(bp.burst_pools, burst_pool);

  Json access = Json::object();
  access["namespaces"] = list(bp.access.namespaces, [](const Namespace& n) {
    Json x = entity(n.name, n.origin);
    if (n.gpu_quota) x["quota"] = {{"gpus", *n.gpu_quota}};
    if (!n.cpu_quota.empty()) x["quota"]["cpu"] = n.cpu_quota;
    if (!n.memory_quota.empty()) x["quota"]["memory"] = n.memory_quota;
    x["service_accounts"] = strings(n.service_accounts);
    return x;
  });
  access["roles"] = list(bp.access.roles, [](const Role& r) {
    Json x = entity(r.name, r.origin);
    x["subjects"] = strings(r.subjects);
    x["namespaces"] = strings(r.namespaces);
    x["verbs"] = strings(r.verbs);
    x["resources"] = strings(r.resources);
    if (r.scope != "namespace") x["scope"] = r.scope;
    return x;
  });
  if (const auto& a = bp.access.audit_logging) {
    Json x = entity("", a->origin);
    x["api_server"] = a->api_server;
    x["storage"] = a->storage;
    x["retention_days"] = a->retention_days;
    access["audit_logging"] = std::move(x);
  }
  if (const auto& t = bp.access.transport) {
    Json x = entity("", t->origin);
    put(x, "tls_min", t->tls_min);
    x["mtls"] = t->mtls;
    access["transport"] = std::move(x);
  }
  j["access"] = std::move(access);

  if (bp.monitoring) {
    Json x = entity("", bp.monitoring->origin);
    x["dcgm"] = bp.monitoring->dcgm;
    x["prometheus"] = bp.monitoring->prometheus;
    x["grafana"] = bp.monitoring->grafana;
    put(x, "prometheus_url", bp.monitoring->prometheus_url);
    if (!bp.monitoring->provider.empty()) x["provider"] = bp.monitoring->provider;
    for (const auto& [k, v] : bp.monitoring->settings.items()) x[k] = v;
    j["monitoring"] = std::move(x);
  }

  if (!bp.clusters.empty())
    j["clusters"] = list(bp.clusters, [](const Cluster& c) {
      Json x = entity(c.name, c.origin);
      put(x, "context", c.context);
      x["pools"] = strings(c.pools);
      put(x, "provider", c.provider);
      return x;
    });

  if (!bp.outputs.empty()) {
    Json outputs = Json::object();
    for (const Output& o : bp.outputs) {
      Json x = entity(o.name, o.origin);
      put(x, "description", o.description);
      x["pools"] = strings(o.pools);
      if (o.single) x["attribute"] = o.attributes.front();
      else x["attributes"] = strings(o.attributes);
      x["sensitive"] = o.sensitive;
      outputs[o.name] = std::move(x);
    }
    j["outputs"] = std::move(outputs);
  }

  Json files = Json::array();
  for (const SourceFile& f : bp.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}});
  j["_files"] = std::move(files);
  return j;
}

}  // namespace plinth::bp
