#include "providers/aws/ec2_protocol.h"

#include <openssl/evp.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "providers/aws/sigv4.h"
#include "engine/core/wire.h"

namespace plinth::aws::ec2 {
namespace {

/// A resolved shape reference: the shape and the member reference that
/// points at it (member traits override shape traits, as in botocore).
struct Ref {
  const Json* shape = nullptr;
  const Json* member = nullptr;  ///< null for a top-level shape
  std::string name;              ///< shape name

  const Json* trait(const char* key) const {
    if (member && member->contains(key)) return &(*member)[key];
    if (shape->contains(key)) return &(*shape)[key];
    return nullptr;
  }
  std::string str_trait(const char* key) const {
    const Json* t = trait(key);
    return t && t->is_string() ? t->get<std::string>() : "";
  }
  bool bool_trait(const char* key) const {
    const Json* t = trait(key);
    return t && t->is_boolean() && t->get<bool>();
  }
  std::string type() const { return shape->value("type", ""); }
};

/// Internal failure carrying a message; caught at each exported function.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Ref resolve(const Model& m, const Json& member_ref) {
  std::string name = member_ref.value("shape", "");
  const Json* shape = m.shape(name);
  if (!shape) throw ProtocolError("the model has no shape '" + name + "'");
  return Ref{shape, &member_ref, name};
}

Ref top(const Model& m, std::string_view name) {
  const Json* shape = m.shape(name);
  if (!shape) throw ProtocolError("the model has no shape '" + std::string(name) + "'");
  return Ref{shape, nullptr, std::string(name)};
}

/// The parameter name of a member on input: queryName, else the locationName
/// or member name with its first letter capitalised (botocore's EC2Serializer).
std::string query_name(const Ref& ref, const std::string& member) {
  if (auto q = ref.str_trait("queryName"); !q.empty()) return q;
  std::string name = ref.str_trait("locationName");
  if (name.empty()) name = member;
  if (!name.empty()) name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  return name;
}

/// The element name of a member on output: its locationName, else the member
/// name. A flattened list repeats that element (the list member's own
/// locationName is not used, as the AWS protocol tests require; EC2's model
/// has no flattened lists).
std::string xml_name(const Ref& ref, const std::string& member) {
  if (auto l = ref.str_trait("locationName"); !l.empty()) return l;
  return member;
}

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::string format_double(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return ec == std::errc() ? std::string(buf, p) : std::to_string(d);
}

std::string iso8601_seconds(double epoch) {  // botocore's query input format: no fraction unless needed
  double whole = std::floor(epoch);
  std::time_t t = static_cast<std::time_t>(whole);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out = buf;
  if (epoch != whole) {
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%06d", static_cast<int>(std::lround((epoch - whole) * 1e6)));
    out += frac;
  }
  return out + "Z";
}

// ---- serialize_query ---------------------------------------------------------

void serialize_value(const Model& m, const Ref& ref, const Json& v, const std::string& prefix, QueryParams& out,
                     const SerializeOptions& options);

void serialize_structure(const Model& m, const Ref& ref, const Json& v, const std::string& prefix, QueryParams& out,
                         const SerializeOptions& options) {
  if (!v.is_object()) throw ProtocolError(prefix + ": expected an object for structure " + ref.name);
  const Json& members = (*ref.shape)["members"];
  for (auto it = v.begin(); it != v.end(); ++it)
    if (!members.contains(it.key()))
      throw ProtocolError(join(prefix, it.key()) + ": " + ref.name + " has no member '" + it.key() + "'");
  for (auto it = members.begin(); it != members.end(); ++it) {
    Ref child = resolve(m, it.value());
    std::string name = join(prefix, query_name(child, it.key()));
    if (v.contains(it.key()) && !v[it.key()].is_null()) {
      serialize_value(m, child, v[it.key()], name, out, options);
    } else if (it.value().value("idempotencyToken", false) && options.idempotency_token) {
      out.emplace_back(name, options.idempotency_token());
    }
  }
}

void serialize_value(const Model& m, const Ref& ref, const Json& v, const std::string& prefix, QueryParams& out,
                     const SerializeOptions& options) {
  std::string type = ref.type();
  auto wrong = [&](const char* want) {
    return ProtocolError(prefix + ": expected " + want + " for " + ref.name + ", got " + v.dump());
  };
  if (type == "structure") {
    serialize_structure(m, ref, v, prefix, out, options);
  } else if (type == "list") {
    if (!v.is_array()) throw wrong("an array");
    Ref item = resolve(m, (*ref.shape)["member"]);
    for (size_t i = 0; i < v.size(); ++i)
      serialize_value(m, item, v[i], prefix + "." + std::to_string(i + 1), out, options);
  } else if (type == "map") {
    if (!v.is_object()) throw wrong("an object");
    std::string base = ref.bool_trait("flattened") ? prefix : prefix + ".entry";
    Ref key = resolve(m, (*ref.shape)["key"]), value = resolve(m, (*ref.shape)["value"]);
    size_t i = 1;
    for (auto it = v.begin(); it != v.end(); ++it, ++i) {
      std::string at = base + "." + std::to_string(i) + ".";
      out.emplace_back(at + query_name(key, "key"), it.key());
      serialize_value(m, value, it.value(), at + query_name(value, "value"), out, options);
    }
  } else if (type == "boolean") {
    if (!v.is_boolean()) throw wrong("true or false");
    out.emplace_back(prefix, v.get<bool>() ? "true" : "false");
  } else if (type == "integer" || type == "long") {
    if (!v.is_number_integer()) throw wrong("a whole number");
    out.emplace_back(prefix, v.dump());
  } else if (type == "float" || type == "double") {
    if (v.is_number())
      out.emplace_back(prefix, format_double(v.get<double>()));
    else if (v.is_string() && (v == "NaN" || v == "Infinity" || v == "-Infinity"))
      out.emplace_back(prefix, v.get<std::string>());
    else
      throw wrong("a number");
  } else if (type == "timestamp") {
    if (v.is_string()) {
      out.emplace_back(prefix, v.get<std::string>());
    } else if (v.is_number()) {
      if (ref.str_trait("timestampFormat") == "unixTimestamp")
        out.emplace_back(prefix, v.is_number_integer() ? v.dump() : format_double(v.get<double>()));
      else
        out.emplace_back(prefix, iso8601_seconds(v.get<double>()));
    } else {
      throw wrong("a timestamp");
    }
  } else if (type == "blob") {
    if (!v.is_string()) throw wrong("a string");
    out.emplace_back(prefix, base64_encode(v.get<std::string>()));
  } else if (type == "string") {
    if (!v.is_string()) throw wrong("a string");
    out.emplace_back(prefix, v.get<std::string>());
  } else {
    throw ProtocolError(prefix + ": shape " + ref.name + " has unsupported type '" + type + "'");
  }
}

// ---- parse_query -------------------------------------------------------------

struct QueryReader {
  const Model& m;
  const std::map<std::string, std::string>& params;
  std::set<std::string> used;

  struct Failure {
    ParameterError error;
  };

  bool has_prefix(const std::string& prefix) const {
    auto it = params.lower_bound(prefix);
    return it != params.end() && it->first.compare(0, prefix.size(), prefix) == 0;
  }

  /// Numeric indices N of "prefix.N" / "prefix.N.x" parameters, ascending.
  std::vector<long long> indices(const std::string& key) const {
    std::set<long long> out;
    std::string prefix = key + ".";
    for (auto it = params.lower_bound(prefix); it != params.end() && it->first.compare(0, prefix.size(), prefix) == 0;
         ++it) {
      std::string rest = it->first.substr(prefix.size());
      std::string seg = rest.substr(0, rest.find('.'));
      long long n = 0;
      auto [p, ec] = std::from_chars(seg.data(), seg.data() + seg.size(), n);
      if (ec == std::errc() && p == seg.data() + seg.size() && !seg.empty()) out.insert(n);
    }
    return {out.begin(), out.end()};
  }

  [[noreturn]] void invalid(const std::string& key, const std::string& value, const std::string& why) {
    throw Failure{{"InvalidParameterValue", "Invalid value '" + value + "' for " + key + ". " + why}};
  }

  std::optional<Json> value(const Ref& ref, const std::string& key) {
    std::string type = ref.type();
    if (type == "structure") {
      if (!has_prefix(key + ".")) return std::nullopt;
      return structure(ref, key + ".");
    }
    if (type == "list") {
      Ref item = resolve(m, (*ref.shape)["member"]);
      Json arr = Json::array();
      for (long long i : indices(key))
        if (auto v = value(item, key + "." + std::to_string(i))) arr.push_back(*v);
      if (arr.empty()) {
        // "Name=" with no index: some clients send an empty list this way.
        auto it = params.find(key);
        if (it == params.end()) return std::nullopt;
        used.insert(key);
        if (!it->second.empty()) invalid(key, it->second, "Expected a list: " + key + ".1, " + key + ".2, ...");
      }
      return arr;
    }
    if (type == "map") {
      std::string base = ref.bool_trait("flattened") ? key : key + ".entry";
      Ref k = resolve(m, (*ref.shape)["key"]), v = resolve(m, (*ref.shape)["value"]);
      Json obj = Json::object();
      for (long long i : indices(base)) {
        std::string at = base + "." + std::to_string(i) + ".";
        auto kv = value(k, at + query_name(k, "key"));
        auto vv = value(v, at + query_name(v, "value"));
        if (kv && kv->is_string()) obj[kv->get<std::string>()] = vv ? *vv : Json(nullptr);
      }
      if (obj.empty()) return std::nullopt;
      return obj;
    }
    auto it = params.find(key);
    if (it == params.end()) return std::nullopt;
    used.insert(key);
    const std::string& s = it->second;
    if (type == "string") {
      if (const Json* e = ref.shape->contains("enum") ? &(*ref.shape)["enum"] : nullptr) {
        if (std::find(e->begin(), e->end(), Json(s)) == e->end())
          invalid(key, s, "It is not one of the values EC2 accepts.");
      }
      return Json(s);
    }
    if (type == "boolean") {
      std::string l = s;
      for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (l == "true") return Json(true);
      if (l == "false") return Json(false);
      invalid(key, s, "Expected true or false.");
    }
    if (type == "integer" || type == "long") {
      long long n = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
      if (ec != std::errc() || p != s.data() + s.size() || s.empty()) invalid(key, s, "Expected a whole number.");
      return Json(n);
    }
    if (type == "float" || type == "double") {
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0') invalid(key, s, "Expected a number.");
      return Json(d);
    }
    if (type == "timestamp") {
      if (!parse_timestamp(s)) invalid(key, s, "Expected an ISO 8601 timestamp such as 2016-11-15T00:00:00Z.");
      return Json(s);
    }
    if (type == "blob") {
      auto d = base64_decode(s);
      if (!d) invalid(key, s, "Expected base64.");
      return Json(*d);
    }
    throw ProtocolError(key + ": shape " + ref.name + " has unsupported type '" + type + "'");
  }

  Json structure(const Ref& ref, const std::string& prefix) {
    Json out = Json::object();
    const Json& members = (*ref.shape)["members"];
    for (auto it = members.begin(); it != members.end(); ++it) {
      Ref child = resolve(m, it.value());
      if (auto v = value(child, prefix + query_name(child, it.key()))) out[it.key()] = *v;
    }
    if (ref.shape->contains("required"))
      for (const auto& r : (*ref.shape)["required"]) {
        std::string name = r.get<std::string>();
        if (!out.contains(name)) {
          Ref child = resolve(m, members[name]);
          throw Failure{
              {"MissingParameter", "The request must contain the parameter " + prefix + query_name(child, name)}};
        }
      }
    return out;
  }
};

// ---- XML out ---------------------------------------------------------------

struct Writer {
  bool strict_enums = true;
};

void write_value(const Model& m, const Ref& ref, const Json& v, pugi::xml_node node, const std::string& path,
                 const Writer& w);

void write_structure(const Model& m, const Ref& ref, const Json& v, pugi::xml_node node, const std::string& path,
                     const Writer& w) {
  if (!v.is_object())
    throw ProtocolError(path + ": expected an object for structure " + ref.name + ", got " + v.dump());
  const Json& members = (*ref.shape)["members"];
  for (auto it = v.begin(); it != v.end(); ++it)
    if (!members.contains(it.key()))
      throw ProtocolError(join(path, it.key()) + ": " + ref.name + " has no member '" + it.key() + "'");
  for (auto it = members.begin(); it != members.end(); ++it) {
    if (!v.contains(it.key()) || v[it.key()].is_null()) continue;
    Ref child = resolve(m, it.value());
    std::string name = xml_name(child, it.key());
    const Json& value = v[it.key()];
    if (child.type() == "list" && child.bool_trait("flattened")) {
      if (!value.is_array()) throw ProtocolError(join(path, it.key()) + ": expected an array");
      Ref item = resolve(m, (*child.shape)["member"]);
      for (size_t i = 0; i < value.size(); ++i)
        write_value(m, item, value[i], node.append_child(name.c_str()),
                    join(path, it.key()) + "[" + std::to_string(i) + "]", w);
    } else {
      write_value(m, child, value, node.append_child(name.c_str()), join(path, it.key()), w);
    }
  }
}

void write_value(const Model& m, const Ref& ref, const Json& v, pugi::xml_node node, const std::string& path,
                 const Writer& w) {
  std::string type = ref.type();
  auto wrong = [&](const char* want) {
    return ProtocolError(path + ": expected " + want + " for " + ref.name + ", got " + v.dump());
  };
  if (type == "structure") {
    write_structure(m, ref, v, node, path, w);
  } else if (type == "list") {
    if (!v.is_array()) throw wrong("an array");
    Ref item = resolve(m, (*ref.shape)["member"]);
    std::string item_name = item.member->value("locationName", "member");
    for (size_t i = 0; i < v.size(); ++i)
      write_value(m, item, v[i], node.append_child(item_name.c_str()), path + "[" + std::to_string(i) + "]", w);
  } else if (type == "map") {
    if (!v.is_object()) throw wrong("an object");
    Ref key = resolve(m, (*ref.shape)["key"]), value = resolve(m, (*ref.shape)["value"]);
    for (auto it = v.begin(); it != v.end(); ++it) {
      pugi::xml_node entry = node.append_child("entry");
      entry.append_child(key.member->value("locationName", "key").c_str()).text().set(it.key().c_str());
      write_value(m, value, it.value(), entry.append_child(value.member->value("locationName", "value").c_str()),
                  path + "." + it.key(), w);
    }
  } else if (type == "boolean") {
    if (!v.is_boolean()) throw wrong("true or false");
    node.text().set(v.get<bool>() ? "true" : "false");
  } else if (type == "integer" || type == "long") {
    if (!v.is_number_integer()) throw wrong("a whole number");
    node.text().set(v.dump().c_str());
  } else if (type == "float" || type == "double") {
    if (!v.is_number()) throw wrong("a number");
    node.text().set(format_double(v.get<double>()).c_str());
  } else if (type == "timestamp") {
    if (v.is_string())
      node.text().set(v.get<std::string>().c_str());
    else if (v.is_number())
      node.text().set(iso8601(v.get<double>()).c_str());
    else
      throw wrong("a timestamp");
  } else if (type == "blob") {
    if (!v.is_string()) throw wrong("a string");
    node.text().set(base64_encode(v.get<std::string>()).c_str());
  } else if (type == "string") {
    if (!v.is_string()) throw wrong("a string");
    if (w.strict_enums && ref.shape->contains("enum")) {
      const Json& e = (*ref.shape)["enum"];
      if (std::find(e.begin(), e.end(), v) == e.end())
        throw ProtocolError(path + ": '" + v.get<std::string>() + "' is not a value of enum " + ref.name);
    }
    node.text().set(v.get<std::string>().c_str());
  } else {
    throw ProtocolError(path + ": shape " + ref.name + " has unsupported type '" + type + "'");
  }
}

std::string to_string(const pugi::xml_document& doc) {
  std::ostringstream out;
  doc.save(out, "    ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

void add_declaration(pugi::xml_document& doc) {
  auto decl = doc.prepend_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
}

// ---- XML in ----------------------------------------------------------------

std::string local_name(const pugi::xml_node& n) {
  std::string name = n.name();
  auto colon = name.find(':');
  return colon == std::string::npos ? name : name.substr(colon + 1);
}

Json read_value(const Model& m, const Ref& ref, const std::vector<pugi::xml_node>& nodes, Timestamps ts,
                const std::string& path);

Json read_structure(const Model& m, const Ref& ref, pugi::xml_node node, Timestamps ts, const std::string& path) {
  std::map<std::string, std::vector<pugi::xml_node>> children;
  for (pugi::xml_node c = node.first_child(); c; c = c.next_sibling())
    if (c.type() == pugi::node_element) children[local_name(c)].push_back(c);
  Json out = Json::object();
  const Json& members = (*ref.shape)["members"];
  for (auto it = members.begin(); it != members.end(); ++it) {
    Ref child = resolve(m, it.value());
    if (child.trait("location")) continue;  // headers / status code: not in the body
    auto found = children.find(xml_name(child, it.key()));
    if (found == children.end()) continue;
    out[it.key()] = read_value(m, child, found->second, ts, join(path, it.key()));
  }
  return out;
}

Json read_scalar(const Ref& ref, const std::string& text, Timestamps ts, const std::string& path) {
  std::string type = ref.type();
  auto bad = [&](const char* want) { return ProtocolError(path + ": expected " + want + ", got '" + text + "'"); };
  if (type == "string") return Json(text);
  if (type == "boolean") {
    if (text == "true") return Json(true);
    if (text == "false") return Json(false);
    throw bad("true or false");
  }
  if (type == "integer" || type == "long") {
    long long n = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || p != text.data() + text.size()) throw bad("a whole number");
    return Json(n);
  }
  if (type == "float" || type == "double") {
    if (text == "NaN" || text == "Infinity" || text == "-Infinity") return Json(text);
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') throw bad("a number");
    return Json(d);
  }
  if (type == "timestamp") {
    if (ts == Timestamps::AsSent) return Json(text);
    auto t = parse_timestamp(text);
    if (!t) throw bad("a timestamp");
    if (*t == std::floor(*t)) return Json(static_cast<long long>(*t));
    return Json(*t);
  }
  if (type == "blob") {
    auto d = base64_decode(text);
    if (!d) throw bad("base64");
    return Json(*d);
  }
  throw ProtocolError(path + ": shape " + ref.name + " has unsupported type '" + type + "'");
}

Json read_value(const Model& m, const Ref& ref, const std::vector<pugi::xml_node>& nodes, Timestamps ts,
                const std::string& path) {
  std::string type = ref.type();
  if (type == "list") {
    Ref item = resolve(m, (*ref.shape)["member"]);
    Json arr = Json::array();
    if (ref.bool_trait("flattened")) {
      for (size_t i = 0; i < nodes.size(); ++i)
        arr.push_back(read_value(m, item, {nodes[i]}, ts, path + "[" + std::to_string(i) + "]"));
    } else {
      size_t i = 0;
      for (pugi::xml_node c = nodes.front().first_child(); c; c = c.next_sibling())
        if (c.type() == pugi::node_element)
          arr.push_back(read_value(m, item, {c}, ts, path + "[" + std::to_string(i++) + "]"));
    }
    return arr;
  }
  if (type == "map") {
    Ref key = resolve(m, (*ref.shape)["key"]), value = resolve(m, (*ref.shape)["value"]);
    std::string kname = key.member->value("locationName", "key"), vname = value.member->value("locationName", "value");
    std::vector<pugi::xml_node> entries;
    if (ref.bool_trait("flattened")) {
      entries = nodes;
    } else {
      for (pugi::xml_node c = nodes.front().first_child(); c; c = c.next_sibling())
        if (c.type() == pugi::node_element) entries.push_back(c);
    }
    Json obj = Json::object();
    for (const auto& e : entries) {
      pugi::xml_node k, v;
      for (pugi::xml_node c = e.first_child(); c; c = c.next_sibling()) {
        if (local_name(c) == kname) k = c;
        if (local_name(c) == vname) v = c;
      }
      if (!k) continue;
      std::string name = k.text().get();
      obj[name] = v ? read_value(m, value, {v}, ts, path + "." + name) : Json(nullptr);
    }
    return obj;
  }
  if (type == "structure") return read_structure(m, ref, nodes.front(), ts, path);
  return read_scalar(ref, nodes.front().text().get(), ts, path);
}

Result<pugi::xml_document*> parse_xml(pugi::xml_document& doc, std::string_view xml) {
  pugi::xml_parse_result r =
      doc.load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_ws_pcdata_single);
  if (!r)
    return Error::invalid(std::string("the answer is not well-formed XML: ") + r.description() + " at byte " +
                          std::to_string(r.offset));
  if (!doc.document_element()) return Error::invalid("the answer has no XML root element");
  return &doc;
}

}  // namespace

// ---- Model -------------------------------------------------------------------

Result<Model> Model::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::fatal("cannot read the service model " + path + " (is tests/data/third_party present?)");
  Json j = Json::parse(in, nullptr, false);  // the operator's own model file
  if (j.is_discarded()) return Error::invalid(path + ": not valid JSON");
  auto m = from_json(std::move(j));
  if (!m.ok()) return Error::invalid(path + ": " + m.error().message);
  return m;
}

Result<Model> Model::from_json(Json model) {
  if (!model.is_object() || !model.contains("shapes") || !model["shapes"].is_object())
    return Error::invalid("a service model needs a \"shapes\" object");
  Model m;
  m.model_ = std::move(model);
  return m;
}

const Json* Model::shape(std::string_view name) const {
  const Json& shapes = model_["shapes"];
  auto it = shapes.find(std::string(name));
  return it == shapes.end() ? nullptr : &*it;
}

const Json* Model::operation(std::string_view name) const {
  if (!model_.contains("operations")) return nullptr;
  const Json& ops = model_["operations"];
  auto it = ops.find(std::string(name));
  return it == ops.end() ? nullptr : &*it;
}

std::string Model::input_shape(std::string_view operation) const {
  const Json* op = this->operation(operation);
  return op && op->contains("input") ? (*op)["input"].value("shape", "") : "";
}

std::string Model::output_shape(std::string_view operation) const {
  const Json* op = this->operation(operation);
  return op && op->contains("output") ? (*op)["output"].value("shape", "") : "";
}

std::string Model::api_version() const {
  return model_.contains("metadata") ? model_["metadata"].value("apiVersion", "") : "";
}

std::string Model::xml_namespace() const {
  std::string ns = model_.contains("metadata") ? model_["metadata"].value("xmlNamespace", "") : "";
  if (!ns.empty() && ns.back() != '/') ns += '/';
  return ns;
}

// ---- Requests ------------------------------------------------------------------

Result<QueryParams> serialize_query(const Model& model, std::string_view input_shape, const Json& params,
                                    const SerializeOptions& options) {
  QueryParams out;
  try {
    serialize_structure(model, top(model, input_shape), params.is_null() ? Json::object() : params, "", out, options);
  } catch (const ProtocolError& e) {
    return Error::invalid(std::string("EC2 request: ") + e.what());
  }
  return out;
}

std::string form_body(std::string_view action, std::string_view version, const QueryParams& params) {
  std::string out = "Action=" + uri_encode(action, false) + "&Version=" + uri_encode(version, false);
  for (const auto& [k, v] : params) out += "&" + uri_encode(k, false) + "=" + uri_encode(v, false);
  return out;
}

std::map<std::string, std::string> parse_form(std::string_view body) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start <= body.size()) {
    size_t amp = body.find('&', start);
    if (amp == std::string_view::npos) amp = body.size();
    std::string_view piece = body.substr(start, amp - start);
    if (!piece.empty()) {
      size_t eq = piece.find('=');
      std::string k = uri_decode(piece.substr(0, eq), true);
      out[k] = eq == std::string_view::npos ? "" : uri_decode(piece.substr(eq + 1), true);
    }
    start = amp + 1;
  }
  return out;
}

std::variant<Json, ParameterError> parse_query(const Model& model, std::string_view input_shape,
                                               const std::map<std::string, std::string>& params) {
  QueryReader reader{model, params, {}};
  Json out;
  try {
    out = reader.structure(top(model, input_shape), "");
  } catch (const QueryReader::Failure& f) {
    return f.error;
  } catch (const ProtocolError& e) {
    return ParameterError{"InvalidParameterValue", e.what()};
  }
  for (const auto& [k, v] : params)
    if (!reader.used.count(k)) return ParameterError{"UnknownParameter", "The parameter " + k + " is not recognized"};
  return out;
}

// ---- Responses -----------------------------------------------------------------

Result<std::string> serialize_response(const Model& model, std::string_view operation, const Json& value,
                                       std::string_view request_id, bool strict_enums) {
  if (!model.operation(operation))
    return Error::invalid("EC2 answer: the model has no operation '" + std::string(operation) + "'");
  pugi::xml_document doc;
  add_declaration(doc);
  std::string root_name = std::string(operation) + "Response";
  pugi::xml_node root = doc.append_child(root_name.c_str());
  root.append_attribute("xmlns") = model.xml_namespace().c_str();
  root.append_child("requestId").text().set(std::string(request_id).c_str());
  std::string output = model.output_shape(operation);
  try {
    if (output.empty()) {
      if (!value.is_null() && !(value.is_object() && value.empty()))
        throw ProtocolError(std::string(operation) + " has no output shape, yet a value was given");
      root.append_child("return").text().set("true");
    } else {
      write_structure(model, top(model, output), value.is_null() ? Json::object() : value, root, "",
                      Writer{strict_enums});
    }
  } catch (const ProtocolError& e) {
    return Error::invalid("EC2 answer of " + std::string(operation) + ": " + e.what());
  }
  return to_string(doc);
}

Result<Json> parse_response(const Model& model, std::string_view output_shape, std::string_view xml,
                            Timestamps timestamps) {
  pugi::xml_document doc;
  auto parsed = parse_xml(doc, xml);
  if (!parsed) return parsed.error();
  try {
    return read_structure(model, top(model, output_shape), doc.document_element(), timestamps, "");
  } catch (const ProtocolError& e) {
    return Error::invalid(std::string("EC2 answer: ") + e.what());
  }
}

std::string request_id_of(std::string_view xml) {
  pugi::xml_document doc;
  if (!parse_xml(doc, xml).ok()) return "";
  for (pugi::xml_node c = doc.document_element().first_child(); c; c = c.next_sibling()) {
    std::string n = local_name(c);
    if (n == "requestId" || n == "RequestID" || n == "RequestId") return c.text().get();
  }
  return "";
}

std::string error_xml(std::string_view code, std::string_view message, std::string_view request_id) {
  pugi::xml_document doc;
  add_declaration(doc);
  pugi::xml_node root = doc.append_child("Response");
  pugi::xml_node error = root.append_child("Errors").append_child("Error");
  error.append_child("Code").text().set(std::string(code).c_str());
  error.append_child("Message").text().set(std::string(message).c_str());
  root.append_child("RequestID").text().set(std::string(request_id).c_str());
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw, pugi::encoding_utf8);  // EC2 sends errors on one line
  return out.str();
}

Result<ErrorResponse> parse_error(const Model& model, std::string_view xml, Timestamps timestamps) {
  pugi::xml_document doc;
  auto parsed = parse_xml(doc, xml);
  if (!parsed) return parsed.error();
  pugi::xml_node root = doc.document_element();
  pugi::xml_node error;
  ErrorResponse out;
  for (pugi::xml_node c = root.first_child(); c; c = c.next_sibling()) {
    std::string n = local_name(c);
    if (n == "Errors") {
      for (pugi::xml_node e = c.first_child(); e; e = e.next_sibling())
        if (local_name(e) == "Error") {
          error = e;
          break;
        }
    } else if (n == "Error") {
      error = c;
    } else if (n == "RequestID" || n == "RequestId" || n == "requestId") {
      out.request_id = c.text().get();
    }
  }
  if (!error)
    return Error::invalid("not an EC2 error answer: no <Errors><Error> under <" + std::string(root.name()) + ">");
  for (pugi::xml_node c = error.first_child(); c; c = c.next_sibling()) {
    if (local_name(c) == "Code") out.code = c.text().get();
    if (local_name(c) == "Message") out.message = c.text().get();
  }
  const Json* shape = model.shape(out.code);
  if (shape && shape->value("exception", false)) {
    try {
      out.details = read_structure(model, top(model, out.code), error, timestamps, "");
    } catch (const ProtocolError& e) {
      return Error::invalid(std::string("EC2 error answer: ") + e.what());
    }
  } else {
    out.details = {{"Code", out.code}, {"Message", out.message}};
  }
  return out;
}

// ---- Encodings ---------------------------------------------------------------

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string clean;
  for (char c : text)
    if (c != '\n' && c != '\r' && c != ' ') clean += c;
  if (clean.size() % 4 != 0) return std::nullopt;
  for (size_t i = 0; i < clean.size(); ++i) {
    char c = clean[i];
    bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || (c == '=' && i + 2 >= clean.size());
    if (!ok) return std::nullopt;
  }
  std::string out(3 * clean.size() / 4, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(clean.data()), static_cast<int>(clean.size()));
  if (n < 0) return std::nullopt;
  size_t pad = 0;
  if (!clean.empty() && clean.back() == '=') ++pad;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::string iso8601(double epoch_seconds) {
  double whole = std::floor(epoch_seconds);
  int ms = static_cast<int>(std::lround((epoch_seconds - whole) * 1000));
  if (ms == 1000) {
    whole += 1;
    ms = 0;
  }
  std::time_t t = static_cast<std::time_t>(whole);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", ms);
  return std::string(buf) + frac;
}

std::optional<double> parse_timestamp(std::string_view text) {
  std::string s(text);
  if (s.empty()) return std::nullopt;
  // Plain epoch seconds.
  {
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (*end == '\0' && s.find_first_not_of("0123456789.") == std::string::npos) return d;
  }
  // ISO 8601: YYYY-MM-DDTHH:MM:SS[.fff](Z|+HH:MM|-HH:MM)
  int Y, M, D, h, mi, sec;
  int used = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &Y, &M, &D, &h, &mi, &sec, &used) == 6) {
    std::tm tm{};
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    std::string seconds = std::to_string(static_cast<long long>(timegm(&tm)));
    size_t pos = static_cast<size_t>(used);
    std::string fraction;
    if (pos < s.size() && s[pos] == '.') {
      size_t end = s.find_first_not_of("0123456789", pos + 1);
      fraction = s.substr(pos, end - pos);
      pos = end == std::string::npos ? s.size() : end;
    }
    long offset = 0;
    std::string zone = s.substr(pos);
    if (zone == "Z" || zone == "z") {
      offset = 0;
    } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
      offset = (std::stol(zone.substr(1, 2)) * 3600 + std::stol(zone.substr(4, 2)) * 60) * (zone[0] == '+' ? 1 : -1);
    } else if (!zone.empty()) {
      return std::nullopt;
    }
    // Parse "seconds.fraction" as one literal so 946845296.123 is exactly that double.
    if (offset != 0) seconds = std::to_string(std::stoll(seconds) - offset);
    return std::strtod((seconds + fraction).c_str(), nullptr);
  }
  // HTTP date: Tue, 29 Apr 2014 18:30:38 GMT
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end && *end == '\0') return static_cast<double>(timegm(&tm));
  return std::nullopt;
}

}  // namespace plinth::aws::ec2
