// The readers of what the blueprint asks of its Kubernetes cluster: access
// (namespaces and quotas, roles, audit logging, transport), monitoring and
// clusters.
#include <algorithm>
#include <regex>

#include "engine/blueprint/loader_internal.h"

namespace plinth::bp::detail {
namespace {

// Allowed keys per section, in the order docs/blueprint.md lists them.
const Keys kAccessKeys{"namespaces", "roles", "audit_logging", "transport"};
const Keys kNamespaceKeys{"name", "quota", "service_accounts"};
const Keys kQuotaKeys{"gpus", "cpu", "memory"};
const Keys kRoleKeys{"name", "subjects", "namespaces", "verbs", "resources", "scope"};
const Keys kClusterKeys{"name", "context", "pools", "provider"};
const Keys kAuditLoggingKeys{"api_server", "storage", "retention_days"};
const Keys kTransportKeys{"tls_min", "mtls"};
const Keys kMonitoringKeys{"dcgm", "prometheus", "grafana", "prometheus_url", "provider"};

// Allowed values of enumerated fields.
const Keys kRoleScopes{"namespace", "cluster"};
const Keys kTlsVersions{"1.2", "1.3"};
const Keys kSubjectKinds{"group", "user", "serviceaccount"};

}  // namespace

void Loader::load_access(const Obj& top) {
  auto acc = top.sub("access", kAccessKeys);
  if (!acc) return;
  const Ctx& c = top.ctx();
  if (auto list = acc->list("namespaces")) {
    int i = 0;
    for (const Node& item : *list) {
      Namespace ns;
      Obj o(c, item, c.loc(item), "namespace #" + std::to_string(++i), "", &ns.origin, kNamespaceKeys);
      if (!o.ok()) continue;
      ns.origin.loc = o.loc();
      bool named = read_name(o, ns.name, namespaces_, "namespace");
      if (auto q = o.sub("quota", kQuotaKeys)) {
        int gpus = 0;
        if (q->integer("gpus", gpus, true)) ns.gpu_quota = gpus;
        // Kubernetes quantities: a number with an optional SI or binary suffix.
        static const std::regex kQuantity(R"(^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$)");
        for (auto [key, out] : {std::pair<const char*, std::string*>{"cpu", &ns.cpu_quota}, {"memory", &ns.memory_quota}})
          if (q->str(key, *out) && !std::regex_match(*out, kQuantity)) {
            q->invalid(*q->get(key), "invalid quota." + std::string(key) + " '" + *out + "' in " + o.label(),
                       std::string("write a Kubernetes quantity, e.g. ") + (key == std::string("cpu") ? "64 or 500m" : "512Gi"));
            out->clear();
          }
      }
      o.str_list("service_accounts", ns.service_accounts);
      if (named) bp_.access.namespaces.push_back(std::move(ns));
    }
  }
  if (auto list = acc->list("roles")) {
    int i = 0;
    for (const Node& item : *list) {
      Role r;
      Obj o(c, item, c.loc(item), "role #" + std::to_string(++i), "", &r.origin, kRoleKeys);
      if (!o.ok()) continue;
      r.origin.loc = o.loc();
      bool named = read_name(o, r.name, roles_, "role");
      if (o.str_list("subjects", r.subjects, true)) {
        for (size_t k = 0; k < r.subjects.size(); ++k) {
          const std::string& s = r.subjects[k];
          std::string kind = s.substr(0, s.find(':'));
          if (s.find(':') == std::string::npos || s.size() == kind.size() + 1 ||
              std::find(kSubjectKinds.begin(), kSubjectKinds.end(), kind) == kSubjectKinds.end())
            c.error("BP005", r.origin.at("subjects." + std::to_string(k)),
                    "invalid subject '" + s + "' in " + o.label(),
                    "write group:NAME, user:NAME or serviceaccount:NAMESPACE/NAME");
        }
      }
      o.str_list("namespaces", r.namespaces);
      o.str_list("verbs", r.verbs, true);
      o.str_list("resources", r.resources, true);
      if (o.enumeration("scope", r.scope, kRoleScopes) && r.scope == "cluster" && !r.namespaces.empty())
        o.invalid(*o.get("scope"), "role '" + r.name + "' has scope cluster and also lists namespaces",
                  "a cluster-scoped role applies everywhere: remove namespaces, or use scope: namespace");
      if (named) bp_.access.roles.push_back(std::move(r));
    }
  }
  if (const Obj::Entry* e = acc->get("audit_logging")) {
    AuditLogging al;
    Obj o(c, e->value, e->value_loc, "access.audit_logging", "", &al.origin, kAuditLoggingKeys);
    if (o.ok()) {
      o.check_keys();
      al.origin.loc = o.loc();
      o.boolean("api_server", al.api_server);
      o.boolean("storage", al.storage);
      o.integer("retention_days", al.retention_days);
      if (claim_single(c, audit_logging_at_, "access.audit_logging", e->key_loc))
        bp_.access.audit_logging = std::move(al);
    }
  }
  if (const Obj::Entry* e = acc->get("transport")) {
    Transport tr;
    Obj o(c, e->value, e->value_loc, "access.transport", "", &tr.origin, kTransportKeys);
    if (o.ok()) {
      o.check_keys();
      tr.origin.loc = o.loc();
      o.enumeration("tls_min", tr.tls_min, kTlsVersions);
      o.boolean("mtls", tr.mtls);
      if (claim_single(c, transport_at_, "access.transport", e->key_loc)) bp_.access.transport = std::move(tr);
    }
  }
}

void Loader::load_monitoring(const Obj& top) {
  const Obj::Entry* e = top.get("monitoring");
  if (!e) return;
  Monitoring m;
  Obj o(top.ctx(), e->value, e->value_loc, "monitoring", "", &m.origin, kMonitoringKeys);
  if (!o.ok()) return;
  std::vector<Obj::Entry> extras;
  o.collect_unknown(&extras);
  o.check_keys();
  m.origin.loc = o.loc();
  o.boolean("dcgm", m.dcgm);
  o.boolean("prometheus", m.prometheus);
  o.boolean("grafana", m.grafana);
  o.str("prometheus_url", m.prometheus_url);
  if (!m.prometheus_url.empty() && m.prometheus_url.rfind("http://", 0) != 0 && m.prometheus_url.rfind("https://", 0) != 0)
    top.ctx().error("BP003", m.origin.at("prometheus_url"),
                    "monitoring.prometheus_url '" + m.prometheus_url + "' is not an http:// or https:// URL",
                    "give the Prometheus server's base URL, e.g. https://prometheus.example:9090");
  o.str("provider", m.provider);
  if (claim_single(top.ctx(), monitoring_at_, "monitoring", e->key_loc)) {
    bp_.monitoring = std::move(m);
    keep_extras("monitoring", 0, o, extras);
  }
}

void Loader::load_clusters(const Obj& top) {
  auto list = top.list("clusters");
  if (!list) return;
  const Ctx& c = top.ctx();
  int i = 0;
  for (const Node& item : *list) {
    Cluster cl;
    Obj o(c, item, c.loc(item), "cluster #" + std::to_string(++i), "", &cl.origin, kClusterKeys);
    if (!o.ok()) continue;
    o.check_keys();
    cl.origin.loc = o.loc();
    bool named = read_name(o, cl.name, clusters_, "cluster");
    o.str("context", cl.context);
    o.str_list("pools", cl.pools);
    o.str("provider", cl.provider);
    if (!named) continue;
    if (!bp_.clusters.empty()) {
      c.error("BP005", cl.origin.loc,
              "cluster '" + cl.name + "' is a second cluster; this version of plinth applies a blueprint to one "
              "cluster (the first is '" + bp_.clusters.front().name + "' at " + bp_.clusters.front().origin.loc.str() + ")",
              "keep one entry under clusters: and split the blueprint per cluster");
      continue;
    }
    bp_.clusters.push_back(std::move(cl));
  }
}

}  // namespace plinth::bp::detail
