#include "engine/provider/schema.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "engine/core/duration.h"

namespace plinth {

const char* to_string(ValueType t) {
  switch (t) {
    case ValueType::Any: return "any";
    case ValueType::String: return "string";
    case ValueType::Bool: return "bool";
    case ValueType::Int: return "integer";
    case ValueType::Number: return "number";
    case ValueType::Duration: return "duration";
    case ValueType::StringList: return "list of strings";
    case ValueType::Map: return "map";
    case ValueType::Object: return "object";
  }
  return "any";
}

std::optional<ValueType> parse_value_type(std::string_view text) {
  static const std::pair<std::string_view, ValueType> names[] = {
      {"any", ValueType::Any},         {"string", ValueType::String},   {"bool", ValueType::Bool},
      {"boolean", ValueType::Bool},    {"integer", ValueType::Int},     {"int", ValueType::Int},
      {"number", ValueType::Number},   {"duration", ValueType::Duration}, {"list of strings", ValueType::StringList},
      {"list", ValueType::StringList}, {"map", ValueType::Map},         {"object", ValueType::Object},
  };
  for (const auto& [name, type] : names)
    if (name == text) return type;
  return std::nullopt;
}

AttributeSpec attr(std::string name, std::string description, ValueType type) {
  return {std::move(name), false, false, std::move(description), type};
}
void operator_only(std::vector<OptionSpec>& options, std::initializer_list<std::string_view> names) {
  for (OptionSpec& o : options)
    if (std::find(names.begin(), names.end(), o.name) != names.end()) o.operator_only = true;
}

AttributeSpec force_new(std::string name, std::string description, ValueType type) {
  return {std::move(name), true, false, std::move(description), type};
}

const AttributeSpec* ResourceType::find(std::string_view attr) const {
  auto it = std::find_if(attributes.begin(), attributes.end(), [&](const AttributeSpec& a) { return a.name == attr; });
  return it == attributes.end() ? nullptr : &*it;
}

const ResourceType* ProviderSchema::resource_type(const std::string& type) const {
  for (const auto& t : resource_types)
    if (t.type == type) return &t;
  return nullptr;
}

const InstanceType* ProviderSchema::instance_type(const std::string& name) const {
  for (const auto& t : instance_types)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<OptionSpec> common_options(const Deadlines& d) {
  auto dur = [](std::chrono::milliseconds v) { return format_duration(v); };
  return {
      {"concurrency", ValueType::Int, "0", {}, "Operations of this provider in flight at once (0: only --parallelism bounds it)."},
      {"rate", ValueType::Number, "0", {}, "Provider calls per second, as a token bucket (0: unlimited)."},
      {"burst", ValueType::Number, "1", {}, "Calls the rate limiter lets through at once."},
      {"retry_attempts", ValueType::Int, "5", {},
       "Attempts in a row without progress, the first included, for retryable errors (connection failures, 5xx, throttling)."},
      {"retry_base_ms", ValueType::Int, "250", {}, "First backoff ceiling in milliseconds (full jitter, doubling)."},
      {"retry_max_ms", ValueType::Int, "20000", {}, "Largest backoff in milliseconds (a server's Retry-After may ask for more)."},
      {"retry_throttle_base_ms", ValueType::Int, "1000", {},
       "Throttling without a Retry-After (a per-minute quota): first wait in milliseconds, doubling (jittered in its "
       "upper half); such retries are bounded by the operation's deadline, not retry_attempts."},
      {"retry_throttle_max_ms", ValueType::Int, "60000", {},
       "Throttling without a Retry-After: largest wait in milliseconds."},
      {"read_deadline", ValueType::Duration, dur(d.read), {}, "Longest a refresh read of one resource may take, retries included."},
      {"create_deadline", ValueType::Duration, dur(d.create), {}, "Longest a create may take, retries included."},
      {"update_deadline", ValueType::Duration, dur(d.update), {}, "Longest an update may take, retries included."},
      {"delete_deadline", ValueType::Duration, dur(d.remove), {}, "Longest a delete may take, retries included."},
  };
}

std::vector<OptionSpec> ProviderSchema::all_options() const {
  std::vector<OptionSpec> all = options;
  for (auto& o : common_options(deadlines)) all.push_back(std::move(o));
  return all;
}

std::optional<OptionSpec> ProviderSchema::option(const std::string& name) const {
  for (auto& o : all_options())
    if (o.name == name) return o;
  return std::nullopt;
}


const std::vector<std::string>& blueprint_sections() {
  static const std::vector<std::string> sections = {
      "stacks",          "networks.vlans",    "networks.fabrics", "storage.tiers",
      "storage.backups", "node_pools",        "burst_pools",      "access.namespaces",
      "access.roles",    "access.audit_logging", "access.transport", "monitoring",
      "clusters",
  };
  return sections;
}

bool render_sets_up_gpu_network(const std::string& gpu_network) {
  return gpu_network == "efa" || gpu_network == "infiniband";
}

namespace {

bool valid_word(std::string_view s, bool allow_dash) {
  if (s.empty() || !std::islower(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_' ||
           (allow_dash && c == '-');
  });
}

/// A path the render may write a provider's file at: absolute, no "..", and
/// only letters, digits, '/', '.', '_' and '-' (nothing YAML or a shell reads).
bool safe_file_path(const std::string& path) {
  return !path.empty() && path.front() == '/' && path.find("..") == std::string::npos &&
         path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == std::string::npos;
}

Status check_settings(const ProviderSchema& s, const std::string& where, const std::vector<SettingSpec>& settings) {
  std::set<std::string> seen;
  for (const auto& st : settings) {
    if (!valid_word(st.name, false))
      return Error::invalid("provider " + s.name + ": " + where + " setting '" + st.name +
                            "' is not a valid name (lower case letters, digits and '_')");
    if (!seen.insert(st.name).second)
      return Error::invalid("provider " + s.name + ": " + where + " declares setting '" + st.name + "' twice");
    if (!st.fields.empty()) {
      if (st.type != ValueType::Object)
        return Error::invalid("provider " + s.name + ": " + where + " setting '" + st.name +
                              "' has fields but is not of type object");
      if (auto r = check_settings(s, where + "." + st.name, st.fields); !r) return r;
    }
  }
  return {};
}

}  // namespace

Status check_schema(const ProviderSchema& s) {
  auto bad = [&](const std::string& m) { return Error::invalid("provider '" + s.name + "': " + m); };
  if (!valid_word(s.name, true)) return bad("the name must be lower case letters, digits, '-' and '_', starting with a letter");
  if (s.version.empty()) return bad("no version");
  std::set<std::string> types;
  for (const auto& t : s.resource_types) {
    auto dot = t.type.find('.');
    if (dot == std::string::npos || t.type.find('.', dot + 1) != std::string::npos ||
        !valid_word(t.type.substr(0, dot), false) || !valid_word(t.type.substr(dot + 1), false))
      return bad("resource type '" + t.type + "' is not PREFIX.KIND (two lower-case words)");
    if (!types.insert(t.type).second) return bad("resource type '" + t.type + "' is declared twice");
    std::set<std::string> attrs;
    for (const auto& a : t.attributes) {
      if (a.name.empty()) return bad("resource type '" + t.type + "' has an attribute without a name");
      if (!attrs.insert(a.name).second)
        return bad("resource type '" + t.type + "' declares attribute '" + a.name + "' twice");
    }
  }
  std::set<std::string> options;
  for (const auto& o : s.all_options()) {
    if (!valid_word(o.name, false)) return bad("option '" + o.name + "' is not lower case letters, digits and '_'");
    if (!options.insert(o.name).second) return bad("option '" + o.name + "' is declared twice (or is a common option)");
  }
  std::set<std::string> sections;
  for (const auto& sec : s.sections) {
    const auto& known = blueprint_sections();
    if (std::find(known.begin(), known.end(), sec.section) == known.end())
      return bad("serves unknown blueprint section '" + sec.section + "'");
    if (!sections.insert(sec.section).second) return bad("serves section '" + sec.section + "' twice");
    if (!types.count(sec.resource_type))
      return bad("section '" + sec.section + "' makes resource type '" + sec.resource_type +
                 "', which the provider does not declare");
    if (auto r = check_settings(s, sec.section, sec.settings); !r) return r;
    const ResourceType* made = s.resource_type(sec.resource_type);
    for (const auto& f : sec.fields) {
      if (f.from.empty() || f.from.front() == '.' || f.from.back() == '.')
        return bad("section '" + sec.section + "' has a field without a dotted 'from' path");
      if (!made->find(f.to))
        return bad("section '" + sec.section + "' fills attribute '" + f.to + "' from '" + f.from + "', but " +
                   sec.resource_type + " does not declare it");
    }
    if (!sec.fallback_types.empty() &&
        std::none_of(sec.settings.begin(), sec.settings.end(), [&](const SettingSpec& st) { return st.name == sec.fallback_types; }))
      return bad("section '" + sec.section + "' takes fallback types from setting '" + sec.fallback_types +
                 "', which it does not declare");
    auto declared = [&](const std::string& name) {
      return std::any_of(sec.settings.begin(), sec.settings.end(), [&](const SettingSpec& st) { return st.name == name; });
    };
    for (const auto& z : sec.zone_settings)
      if (!declared(z))
        return bad("section '" + sec.section + "' lists zones in setting '" + z + "', which it does not declare");
    for (const auto& [z, why] : sec.one_zone_settings)
      if (!declared(z))
        return bad("section '" + sec.section + "' keeps pools in one zone with setting '" + z +
                   "', which it does not declare");
    if (!sec.gpu_nic_setting.empty() &&
        std::none_of(sec.settings.begin(), sec.settings.end(), [&](const SettingSpec& st) {
          return st.name == sec.gpu_nic_setting && st.type == ValueType::StringList;
        }))
      return bad("section '" + sec.section + "' lists GPU NICs in setting '" + sec.gpu_nic_setting +
                 "', which it does not declare as a list of strings");
  }
  if (!s.instance_types.empty()) {
    const SectionSpec* burst = nullptr;
    for (const auto& sec : s.sections)
      if (sec.section == "burst_pools") burst = &sec;
    if (!burst) return bad("declares instance types but serves no burst_pools");
    const ResourceType* type = s.resource_type(burst->resource_type);
    std::set<std::string> names;
    for (const auto& t : s.instance_types) {
      const std::string what = "instance type '" + t.name + "'";
      if (t.name.empty()) return bad("an instance type has no name");
      if (!names.insert(t.name).second) return bad(what + " is declared twice");
      if (t.gpu.empty()) return bad(what + " names no GPU");
      if (t.gpu_count < 1) return bad(what + " must have a gpu_count of at least 1");
      if (t.vcpus < 0 || t.memory_gb < 0) return bad(what + " has a negative vcpus or memory_gb");
      if (t.fabric_manager && !t.nvswitch) return bad(what + " runs Fabric Manager but has no NVSwitch");
      if (!t.gpu_network.empty() && t.gpu_network != "efa" && t.gpu_network != "infiniband" &&
          t.gpu_network != "gpudirect-tcpx" && t.gpu_network != "gpudirect-tcpxo" && t.gpu_network != "gpudirect-rdma")
        return bad(what + " has gpu_network '" + t.gpu_network +
                   "' (expected efa, infiniband, gpudirect-tcpx, gpudirect-tcpxo or gpudirect-rdma)");
      if (t.gpu_nics < 0 || (t.gpu_network.empty() != (t.gpu_nics == 0)))
        return bad(what + " must give gpu_nics (at least 1) with a gpu_network, and neither without");
      if (t.nccl_topology_path.empty() != t.nccl_topology_xml.empty() ||
          (!t.nccl_topology_path.empty() && !safe_file_path(t.nccl_topology_path)))
        return bad(what + " must give nccl_topology_path (an absolute path of letters, digits, '/', '.', '_' and '-') "
                          "and nccl_topology_xml together");
      if (t.nccl_graph_path.empty() != t.nccl_graph_xml.empty() ||
          (!t.nccl_graph_path.empty() && (t.nccl_topology_path.empty() || !safe_file_path(t.nccl_graph_path))))
        return bad(what + " must give nccl_graph_path (an absolute path of letters, digits, '/', '.', '_' and '-') "
                          "and nccl_graph_xml together, and only with a topology");
      if (!t.facts.is_object()) return bad(what + ": 'facts' must be an object");
      for (const auto& [k, v] : t.facts.items())
        if (!type || !type->find(k))
          return bad(what + " has the fact '" + k + "', which is not an attribute of " + burst->resource_type);
    }
  }
  return {};
}

// ---- JSON ----

void to_json(Json& j, const AttributeSpec& a) {
  j = {{"name", a.name},
       {"type", to_string(a.type)},
       {"force_new", a.force_new},
       {"sensitive", a.sensitive},
       {"description", a.description}};
  if (!a.sends_to.empty()) j["sends_to"] = a.sends_to;
  if (a.disruptive) j["disruptive"] = true;
}

namespace {
ValueType type_field(const Json& j, const char* key, ValueType fallback) {
  if (!j.contains(key)) return fallback;
  const std::string text = j.at(key).get<std::string>();
  auto t = parse_value_type(text);
  if (!t)
    throw Json::type_error::create(302, "'" + std::string(key) + "' is '" + text +
                                            "', not one of any, string, bool, integer, number, duration, list, map, object",
                                   &j);
  return *t;
}
}  // namespace

void from_json(const Json& j, AttributeSpec& a) {
  a.name = j.at("name").get<std::string>();
  a.type = type_field(j, "type", ValueType::Any);
  a.force_new = j.value("force_new", false);
  a.sensitive = j.value("sensitive", false);
  a.description = j.value("description", "");
  a.sends_to = j.value("sends_to", "");
  a.disruptive = j.value("disruptive", false);
}

void to_json(Json& j, const ResourceType& t) {
  j = {{"type", t.type}, {"description", t.description}, {"attributes", t.attributes}};
  if (!t.import_id.empty()) j["import_id"] = t.import_id;
  if (t.inventory) j["inventory"] = true;
  if (!t.recorded_only.empty()) j["recorded_only"] = t.recorded_only;
  if (t.create_before_destroy) j["create_before_destroy"] = true;
  if (!t.placement.empty()) j["placement"] = t.placement;
  if (!t.identity.empty()) j["identity"] = t.identity;
}

void from_json(const Json& j, ResourceType& t) {
  t.type = j.at("type").get<std::string>();
  t.description = j.value("description", "");
  t.attributes = j.value("attributes", std::vector<AttributeSpec>{});
  t.import_id = j.value("import_id", "");
  t.inventory = j.value("inventory", false);
  t.recorded_only = j.value("recorded_only", "");
  t.create_before_destroy = j.value("create_before_destroy", false);
  t.placement = j.value("placement", std::vector<std::string>{});
  t.identity = j.value("identity", std::vector<std::string>{});
}

void to_json(Json& j, const OptionSpec& o) {
  j = {{"name", o.name},       {"type", to_string(o.type)}, {"default", o.default_value}, {"env", o.env},
       {"description", o.description}, {"secret", o.secret}, {"allowed", o.allowed}};
  if (o.operator_only) j["operator_only"] = true;
}

void from_json(const Json& j, OptionSpec& o) {
  o.name = j.at("name").get<std::string>();
  o.type = type_field(j, "type", ValueType::String);
  o.default_value = j.value("default", "");
  o.env = j.value("env", std::vector<std::string>{});
  o.description = j.value("description", "");
  o.secret = j.value("secret", false);
  o.allowed = j.value("allowed", std::vector<std::string>{});
  o.operator_only = j.value("operator_only", false);
}

void to_json(Json& j, const SettingSpec& s) {
  j = {{"name", s.name},       {"type", to_string(s.type)},     {"required", s.required},
       {"allowed", s.allowed}, {"description", s.description}, {"fields", s.fields}};
}

void from_json(const Json& j, SettingSpec& s) {
  s.name = j.at("name").get<std::string>();
  s.type = type_field(j, "type", ValueType::String);
  s.required = j.value("required", false);
  s.allowed = j.value("allowed", std::vector<std::string>{});
  s.description = j.value("description", "");
  s.fields = j.value("fields", std::vector<SettingSpec>{});
}

void to_json(Json& j, const SectionSpec& s) {
  j = {{"section", s.section}, {"resource_type", s.resource_type}, {"default", s.is_default}, {"settings", s.settings},
       {"fleet", s.fleet}};
  if (!s.fallback_types.empty()) j["fallback_types"] = s.fallback_types;
  if (!s.zone_settings.empty()) j["zone_settings"] = s.zone_settings;
  if (!s.one_zone_settings.empty()) j["one_zone_settings"] = s.one_zone_settings;
  if (!s.gpu_nic_setting.empty()) j["gpu_nic_setting"] = s.gpu_nic_setting;
  if (!s.fields.empty()) j["fields"] = s.fields;
}

void to_json(Json& j, const FieldSpec& f) {
  j = {{"from", f.from}, {"to", f.to}};
  if (!f.value.is_null()) j["value"] = f.value;
  if (!f.fallback.is_null()) j["fallback"] = f.fallback;
  if (f.per_member) j["per_member"] = true;
}

void from_json(const Json& j, FieldSpec& f) {
  f.from = j.at("from").get<std::string>();
  f.to = j.at("to").get<std::string>();
  f.value = j.value("value", Json());
  f.fallback = j.value("fallback", Json());
  f.per_member = j.value("per_member", false);
}

void from_json(const Json& j, SectionSpec& s) {
  s.section = j.at("section").get<std::string>();
  s.resource_type = j.at("resource_type").get<std::string>();
  s.is_default = j.value("default", false);
  s.settings = j.value("settings", std::vector<SettingSpec>{});
  s.fleet = j.value("fleet", false);
  s.fallback_types = j.value("fallback_types", "");
  s.zone_settings = j.value("zone_settings", std::vector<std::string>{});
  s.one_zone_settings = j.value("one_zone_settings", std::map<std::string, std::string>{});
  s.gpu_nic_setting = j.value("gpu_nic_setting", "");
  s.fields = j.value("fields", std::vector<FieldSpec>{});
}

void to_json(Json& j, const InstanceType& t) {
  j = {{"name", t.name},       {"gpu", t.gpu},         {"gpu_count", t.gpu_count},           {"vcpus", t.vcpus},
       {"memory_gb", t.memory_gb}, {"nvswitch", t.nvswitch}, {"fabric_manager", t.fabric_manager}};
  if (!t.gpu_network.empty()) {
    j["gpu_network"] = t.gpu_network;
    j["gpu_nics"] = t.gpu_nics;
  }
  if (!t.facts.empty()) j["facts"] = t.facts;
  if (!t.nccl_topology_path.empty()) {
    j["nccl_topology_path"] = t.nccl_topology_path;
    j["nccl_topology_xml"] = t.nccl_topology_xml;
  }
  if (!t.nccl_graph_path.empty()) {
    j["nccl_graph_path"] = t.nccl_graph_path;
    j["nccl_graph_xml"] = t.nccl_graph_xml;
  }
  if (!t.sources.empty()) j["sources"] = t.sources;
}

void from_json(const Json& j, InstanceType& t) {
  t.name = j.at("name").get<std::string>();
  t.gpu = j.at("gpu").get<std::string>();
  t.gpu_count = j.at("gpu_count").get<int>();
  t.vcpus = j.value("vcpus", 0);
  t.memory_gb = j.value("memory_gb", 0);
  t.nvswitch = j.value("nvswitch", false);
  t.fabric_manager = j.value("fabric_manager", false);
  t.gpu_network = j.value("gpu_network", "");
  t.gpu_nics = j.value("gpu_nics", 0);
  t.facts = j.value("facts", Json::object());
  t.nccl_topology_path = j.value("nccl_topology_path", "");
  t.nccl_topology_xml = j.value("nccl_topology_xml", "");
  t.nccl_graph_path = j.value("nccl_graph_path", "");
  t.nccl_graph_xml = j.value("nccl_graph_xml", "");
  t.sources = j.value("sources", std::vector<std::string>{});
}

void to_json(Json& j, const ProviderSchema& s) {
  j = {{"name", s.name},
       {"version", s.version},
       {"description", s.description},
       {"docs", s.docs},
       {"source", s.source},
       {"resource_types", s.resource_types},
       {"sections", s.sections},
       {"options", s.options},
       {"instance_types", s.instance_types},
       {"deadlines",
        {{"read", format_duration(s.deadlines.read)},
         {"create", format_duration(s.deadlines.create)},
         {"update", format_duration(s.deadlines.update)},
         {"delete", format_duration(s.deadlines.remove)}}}};
}

void from_json(const Json& j, ProviderSchema& s) {
  s.name = j.at("name").get<std::string>();
  s.version = j.at("version").get<std::string>();
  s.description = j.value("description", "");
  s.docs = j.value("docs", "");
  s.resource_types = j.value("resource_types", std::vector<ResourceType>{});
  s.sections = j.value("sections", std::vector<SectionSpec>{});
  s.options = j.value("options", std::vector<OptionSpec>{});
  s.instance_types = j.value("instance_types", std::vector<InstanceType>{});
  for (auto& t : s.resource_types) t.provider = s.name;
  if (j.contains("deadlines")) {
    const Json& d = j.at("deadlines");
    auto field = [&](const char* key, std::chrono::milliseconds& out) {
      if (!d.contains(key)) return;
      auto v = parse_duration(d.at(key).get<std::string>());
      if (!v) throw Json::type_error::create(302, "deadlines." + std::string(key) + ": " + v.error().message, &j);
      out = *v;
    };
    field("read", s.deadlines.read);
    field("create", s.deadlines.create);
    field("update", s.deadlines.update);
    field("delete", s.deadlines.remove);
  }
}

}  // namespace plinth
