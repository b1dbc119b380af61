// The top of a blueprint document (apiVersion, kind, then each section's
// reader in turn), the two small sections metadata and stacks, and how the
// readers name entities: read_name (list items) and claim_single (sections
// set once).
#include "engine/blueprint/loader_internal.h"

namespace plinth::bp::detail {
namespace {

// Allowed keys per section, in the order docs/blueprint.md lists them.
const Keys kTopKeys{"apiVersion", "kind",       "metadata",    "stacks", "networks",  "storage",
                    "node_pools", "burst_pools", "access", "monitoring", "clusters", "providers",
                    "outputs"};
const Keys kMetadataKeys{"name", "owner", "compliance", "labels", "agreements", "dpia"};
const Keys kAgreementKeys{"provider", "kind", "reference"};
const Keys kAgreementKinds{"baa", "dpa"};
const Keys kStackKeys{"driver", "cuda", "cudnn", "frameworks", "images", "kernel_modules", "container_toolkit", "cuda_compat",
                       "precision"};

const Keys kOutputKeys{"description", "pools", "attribute", "attributes", "sensitive"};

// Allowed values of enumerated fields.
const Keys kKernelModules{"open", "proprietary"};

}  // namespace

void Loader::load_document(const Ctx& c, const Node& root) {
  SourceLoc where = root.line() < 0 ? SourceLoc{c.file, 1, 1} : c.loc(root);
  Obj top(c, root, where, "the blueprint", "", nullptr, kTopKeys);
  if (!top.ok()) return;
  top.check_keys();

  std::string api, kind;
  if (top.str("apiVersion", api, true) && api != "plinth/v1")
    c.error("BP009", top.get("apiVersion")->value_loc, "unsupported apiVersion '" + api + "'",
            "this version of plinth reads 'apiVersion: plinth/v1'");
  if (top.str("kind", kind, true) && kind != "Blueprint")
    c.error("BP009", top.get("kind")->value_loc, "unsupported kind '" + kind + "'",
            kind == "blueprint" ? "did you mean 'Blueprint'?" : "write 'kind: Blueprint'");

  load_metadata(top);
  load_stacks(top);
  load_networks(top);
  load_storage(top);
  load_node_pools(top);
  load_burst_pools(top);
  load_access(top);
  load_monitoring(top);
  load_clusters(top);
  load_providers(top);
  load_outputs(top);
}

bool Loader::claim_single(const Ctx& c, std::optional<SourceLoc>& first, const char* what, const SourceLoc& at) {
  if (!first) {
    first = at;
    return true;
  }
  c.error("BP006", at, std::string(what) + " is defined twice: the first is at " + first->str(),
          "keep " + std::string(what) + " in one file only");
  return false;
}

bool Loader::read_name(Obj& o, std::string& name, NameTable& table, const char* kind) {
  const Ctx& c = o.ctx();
  bool named = o.str("name", name, true);
  if (named && !valid_name(name)) {
    o.invalid(*o.get("name"), "invalid name '" + name + "' for " + o.label(),
              "use letters, digits, '-', '_' and '.', starting with a letter or digit (at most 63 characters)");
    named = false;
  }
  if (named) o.set_label(std::string(kind) + " '" + name + "'");
  o.check_keys();
  return named && table.claim(c, name, o.get("name")->value_loc, kind);
}

void Loader::load_metadata(const Obj& top) {
  const Obj::Entry* e = top.get("metadata");
  if (!e) return;
  Metadata m;
  Obj o(top.ctx(), e->value, e->value_loc, "metadata", "", &m.origin, kMetadataKeys);
  if (!o.ok()) return;
  o.check_keys();
  m.origin.loc = o.loc();
  o.str("name", m.name, true);
  if (!m.name.empty() && !valid_name(m.name))
    o.invalid(*o.get("name"), "invalid name '" + m.name + "' for metadata",
              "use letters, digits, '-', '_' and '.', starting with a letter or digit (at most 63 characters)");
  o.str("owner", m.owner);
  o.str_list("compliance", m.compliance);
  o.str_map("labels", m.labels);
  if (auto list = o.list("agreements")) {
    const Ctx& c = top.ctx();
    size_t i = 0;
    for (const Node& item : *list) {
      const std::string n = std::to_string(i++);
      Agreement a;
      Obj x(c, item, c.loc(item), "agreement #" + std::to_string(i), "agreements." + n + ".", &m.origin, kAgreementKeys);
      if (!x.ok()) continue;
      x.check_keys();
      m.origin.fields["agreements." + n] = x.loc();
      bool ok = x.str("provider", a.provider, true);
      ok = x.enumeration("kind", a.kind, kAgreementKinds, true,
                         "baa (a HIPAA business associate agreement) or dpa (a GDPR Art. 28 processing agreement)") && ok;
      ok = x.str("reference", a.reference, true) && ok;
      if (ok && a.reference.empty())
        x.invalid(*x.get("reference"), "empty 'reference' in " + x.label(),
                  "say where the signed agreement is, e.g. reference: \"AWS BAA via AWS Artifact, accepted 2026-02-10\"");
      if (ok) m.agreements.push_back(std::move(a));
    }
  }
  o.str("dpia", m.dpia);
  if (claim_single(top.ctx(), metadata_at_, "metadata", e->key_loc)) bp_.metadata = std::move(m);
}

std::vector<Loader::NamedEntry> Loader::named_entries(const Obj& top, const char* key, const char* kind,
                                                      const char* name_hint) {
  std::vector<NamedEntry> out;
  const Obj::Entry* e = top.get(key);
  if (!e) return out;
  const Ctx& c = top.ctx();
  if (!e->value.IsMap()) {
    top.wrong_type(*e, "a map");
    return out;
  }
  for (const auto& [k, v] : e->value.pairs()) {
    NamedEntry n{k.Scalar(), c.loc(k), v};
    if (!valid_name(n.name)) {
      c.error("BP005", n.at, "invalid " + std::string(kind) + " name '" + n.name + "'", name_hint);
      continue;
    }
    out.push_back(std::move(n));
  }
  return out;
}

void Loader::load_stacks(const Obj& top) {
  const Ctx& c = top.ctx();
  for (auto& [name, at, v] : named_entries(top, "stacks", "stack")) {
    Stack s;
    s.origin.loc = at;
    s.name = name;
    std::string label = "stack '" + s.name + "'";
    s.origin.fields["name"] = s.origin.loc;
    // Missing fields are reported at the stack's name.
    Obj o(c, v, s.origin.loc, label, "", &s.origin, kStackKeys);
    if (!o.ok()) continue;
    o.check_keys();
    o.str("driver", s.driver, true);
    o.str("cuda", s.cuda, true);
    o.str("cudnn", s.cudnn);
    o.str_map("frameworks", s.frameworks);
    o.str_list("images", s.images);
    o.enumeration("kernel_modules", s.kernel_modules, kKernelModules);
    o.str("container_toolkit", s.container_toolkit);
    o.boolean("cuda_compat", s.cuda_compat);
    o.enumeration("precision", s.precision, kPrecisions);
    if (stacks_.claim(c, s.name, s.origin.loc, "stack")) bp_.stacks.push_back(std::move(s));
  }
}

void Loader::load_outputs(const Obj& top) {
  const Ctx& c = top.ctx();
  for (auto& [name, at, v] : named_entries(top, "outputs", "output")) {
    Output out;
    out.origin.loc = at;
    out.name = name;
    out.origin.fields["name"] = out.origin.loc;
    Obj o(c, v, out.origin.loc, "output '" + out.name + "'", "", &out.origin, kOutputKeys);
    if (!o.ok()) continue;
    o.check_keys();
    o.str("description", out.description);
    o.str_list("pools", out.pools);
    o.boolean("sensitive", out.sensitive);
    const Obj::Entry* one = o.get("attribute");
    const Obj::Entry* many = o.get("attributes");
    if (one && many) {
      o.invalid(*many, "output '" + out.name + "' sets both attribute and attributes",
                "write attribute: NAME for one value per node, or attributes: [A, B] for an object per node");
      continue;
    }
    if (!one && !many) {
      c.error("BP004", out.origin.loc, "output '" + out.name + "' names no attribute",
              "add attribute: NAME (e.g. bmc_endpoint, private_ip) or attributes: [A, B]");
      continue;
    }
    std::string attribute;
    if (one) {
      if (!o.str("attribute", attribute, true)) continue;
      out.attributes = {attribute};
    } else {
      out.single = false;
      if (!o.str_list("attributes", out.attributes, true)) continue;
      if (out.attributes.empty()) {
        o.invalid(*many, "output '" + out.name + "' lists no attributes", "name at least one, e.g. [private_ip]");
        continue;
      }
    }
    if (outputs_.claim(c, out.name, out.origin.loc, "output")) bp_.outputs.push_back(std::move(out));
  }
}

}  // namespace plinth::bp::detail
