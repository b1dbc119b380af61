// The state document: JSON text <-> StateDocument, with a checksum so a
// damaged or truncated file is refused instead of being trusted.
#include <openssl/rand.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>

#include "engine/core/hash.h"
#include "engine/state/state.h"
#include "engine/core/wire.h"

namespace plinth::state {

namespace {

using OrderedJson = nlohmann::ordered_json;

std::string recovery_hint(const std::string& source) {
  return " Plinth left the file untouched. Restore a good version with 'plinth state history' and "
         "'plinth state restore SERIAL' (or from your backup of " +
         source + "), then run again.";
}

Error damaged(const std::string& source, const std::string& what) {
  return Error::invalid("state file " + source + " " + what + "." + recovery_hint(source));
}

/// The document without its checksum, keys sorted: the text the checksum covers.
Json canonical_json(const StateDocument& doc, const std::string& plinth_version) {
  std::vector<const Resource*> sorted;
  sorted.reserve(doc.resources.size());
  for (const auto& r : doc.resources) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](const Resource* a, const Resource* b) { return a->address < b->address; });
  Json resources = Json::array();
  resources.get_ref<Json::array_t&>().reserve(sorted.size());
  for (const Resource* r : sorted) resources.push_back(*r);
  Json out{{"format_version", doc.format_version},
           {"lineage", doc.lineage},
           {"serial", doc.serial},
           {"plinth_version", plinth_version},
           {"resources", std::move(resources)}};
  if (!doc.deposed.empty()) out["deposed"] = doc.deposed;  // absent otherwise: older files keep their checksum
  if (!doc.outputs.empty()) out["outputs"] = doc.outputs;  // likewise
  if (!doc.sealed.empty()) out["sealed"] = doc.sealed;
  return out;
}

/// Feeds the text nlohmann's serializer writes to a digest, in 64 KiB pieces.
class DigestOutput final : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  explicit DigestOutput(Sha256& digest) : digest_(digest) { buf_.reserve(kPiece); }
  void write_character(char c) override {
    buf_.push_back(c);
    if (buf_.size() >= kPiece) flush();
  }
  void write_characters(const char* s, std::size_t n) override {
    buf_.append(s, n);
    if (buf_.size() >= kPiece) flush();
  }
  void flush() {
    digest_.update(buf_);
    buf_.clear();
  }

 private:
  static constexpr size_t kPiece = 65536;
  Sha256& digest_;
  std::string buf_;
};

/// "sha256:" and the SHA-256 of canonical.dump(), computed as the text is
/// written (a large fleet's state is tens of megabytes of it).
std::string checksum_of(const Json& canonical) {
  Sha256 digest;
  auto out = std::make_shared<DigestOutput>(digest);
  nlohmann::detail::serializer<Json> s(out, ' ', nlohmann::detail::error_handler_t::strict);
  s.dump(canonical, false, false, 0);
  out->flush();
  return "sha256:" + digest.hex();
}

/// Copies `j` with keys in the order a person reads them, `order` first.
OrderedJson ordered(const Json& j, const std::vector<std::string>& order) {
  OrderedJson out = OrderedJson::object();
  for (const auto& k : order)
    if (j.contains(k)) out[k] = OrderedJson(j.at(k));
  for (const auto& [k, v] : j.items())
    if (!out.contains(k)) out[k] = OrderedJson(v);
  return out;
}

/// Reads typed fields from one JSON object, reporting the first problem as
/// "field 'resources[2].type' is missing".
class Fields {
 public:
  Fields(const Json& j, std::string prefix) : j_(j), prefix_(std::move(prefix)) {}

  const Json* get(const std::string& key, bool (Json::*is)() const, const char* what) {
    if (!error_.empty()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      error_ = "has no field '" + prefix_ + key + "'";
      return nullptr;
    }
    if (!((*it).*is)()) {
      error_ = "has a field '" + prefix_ + key + "' that is not " + what;
      return nullptr;
    }
    return &*it;
  }
  std::string str(const std::string& key) {
    const Json* v = get(key, &Json::is_string, "a string");
    return v ? v->get<std::string>() : "";
  }
  const Json* object(const std::string& key) { return get(key, &Json::is_object, "an object"); }
  const Json* array(const std::string& key) { return get(key, &Json::is_array, "an array"); }
  const Json* integer(const std::string& key) { return get(key, &Json::is_number_integer, "an integer"); }
  const std::string& error() const { return error_; }
  void fail(std::string e) {
    if (error_.empty()) error_ = std::move(e);
  }

 private:
  const Json& j_;
  std::string prefix_;
  std::string error_;
};

}  // namespace

const Resource* StateDocument::find(const std::string& address) const {
  auto it = std::lower_bound(resources.begin(), resources.end(), address,
                             [](const Resource& r, const std::string& a) { return r.address < a; });
  if (it != resources.end() && it->address == address) return &*it;
  // Callers may have appended without sorting; fall back to a scan.
  for (const auto& r : resources)
    if (r.address == address) return &r;
  return nullptr;
}

StateDocument new_document() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("OpenSSL RAND_bytes failed: no randomness for a lineage");
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  char uuid[37];
  std::snprintf(uuid, sizeof uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  StateDocument doc;
  doc.lineage = uuid;
  doc.plinth_version = PLINTH_VERSION;
  return doc;
}

std::string to_json_text(const StateDocument& doc) { return to_json_text(doc, doc.plinth_version); }

std::string to_json_text(const StateDocument& doc, const std::string& plinth_version) {
  Json canonical = canonical_json(doc, plinth_version);
  std::string sum = checksum_of(canonical);
  OrderedJson out = OrderedJson::object();
  out["format_version"] = doc.format_version;
  out["lineage"] = doc.lineage;
  out["serial"] = doc.serial;
  out["plinth_version"] = plinth_version;
  out["checksum"] = sum;
  if (!doc.sealed.empty()) out["sealed"] = doc.sealed;
  out["resources"] = OrderedJson::array();
  for (const auto& r : canonical["resources"])
    out["resources"].push_back(ordered(
        r, {"address", "type", "name", "index", "provider", "source", "depends_on", "attributes", "computed"}));
  if (canonical.contains("deposed")) {
    out["deposed"] = OrderedJson::array();
    for (const auto& r : canonical["deposed"])
      out["deposed"].push_back(ordered(
          r, {"address", "type", "name", "index", "provider", "source", "depends_on", "attributes", "computed"}));
  }
  if (canonical.contains("outputs")) out["outputs"] = OrderedJson(canonical["outputs"]);
  return out.dump(2) + "\n";
}

Result<StateDocument> parse(const std::string& text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return damaged(source, text.empty() ? "is empty (0 bytes)" : "contains only whitespace");
  if (auto problem = json_shape_problem(text)) return damaged(source, *problem + "; plinth never writes such a state");
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte is the 1-based index of the last character read.
    size_t pos = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
    size_t nl = text.rfind('\n', pos == 0 ? std::string::npos : pos - 1);
    size_t col = nl == std::string::npos || pos == 0 ? pos + 1 : pos - nl;
    std::string where = source + ":" + std::to_string(line) + ":" + std::to_string(col);
    std::string what = e.what();
    // The parser ran past the last byte: the document stops mid-way.
    if (e.byte > text.size() || what.find("unexpected end of input") != std::string::npos)
      return Error::invalid("state file " + source + " is truncated: the JSON ends at " + where +
                            " before the document is complete." + recovery_hint(source));
    std::string reason = what;
    if (auto p = reason.find("syntax error while parsing "); p != std::string::npos) reason = reason.substr(p + 27);
    if (auto p = reason.find("; last read"); p != std::string::npos) reason = reason.substr(0, p);
    return Error::invalid("state file " + where + " is not valid JSON (" + reason + ")." + recovery_hint(source));
  } catch (const Json::exception& e) {  // out_of_range.406: a number too large for a double (1e400)
    std::string reason = e.what();
    if (auto p = reason.find("] "); p != std::string::npos) reason = reason.substr(p + 2);
    return Error::invalid("state file " + source + " is not valid JSON (" + reason + ")." + recovery_hint(source));
  }
  if (!j.is_object()) return damaged(source, "is not a JSON object");

  Fields top(j, "");
  const Json* fv = top.integer("format_version");
  if (!fv) return damaged(source, top.error());
  int format_version = fv->get<int>();
  if (format_version > kFormatVersion)
    return Error::invalid("state file " + source + " has format_version " + std::to_string(format_version) +
                          ", but this plinth (" PLINTH_VERSION ") reads format_version " +
                          std::to_string(kFormatVersion) +
                          " and older; upgrade plinth to use this state. Plinth left the file untouched.");
  if (format_version < 1) return damaged(source, "has an invalid format_version " + std::to_string(format_version));

  std::string stored_sum = top.str("checksum");
  if (!top.error().empty()) return damaged(source, top.error());
  j.erase("checksum");  // the checksum covers the rest (no copy of the document for it)
  std::string computed_sum = checksum_of(j);
  if (stored_sum != computed_sum)
    return damaged(source, "fails its checksum (stored " + stored_sum + ", computed " + computed_sum +
                               "): it was damaged or edited by hand");

  StateDocument doc;
  doc.format_version = format_version;
  doc.lineage = top.str("lineage");
  const Json* serial = top.get("serial", &Json::is_number_unsigned, "a non-negative integer");
  doc.plinth_version = top.str("plinth_version");
  const Json* resources = top.array("resources");
  if (!top.error().empty()) return damaged(source, top.error());
  if (doc.lineage.empty()) return damaged(source, "has an empty lineage");
  doc.serial = serial->get<uint64_t>();
  if (auto it = j.find("sealed"); it != j.end()) {
    if (!it->is_string() || it->get<std::string>().empty())
      return damaged(source, "has a field 'sealed' that is not a non-empty string");
    if (!resources->empty()) return damaged(source, "has both sealed and clear resources");
    doc.sealed = it->get<std::string>();
  }

  std::map<std::string, size_t> seen;
  Json& all = j["resources"];  // `resources`, to move the resources' values out of
  for (size_t i = 0; i < all.size(); ++i) {
    Json& rj = all[i];
    if (!rj.is_object()) return damaged(source, "has a field 'resources[" + std::to_string(i) + "]' that is not an object");
    Resource r;
    try {
      r = take_resource(rj);
    } catch (const WireError& e) {
      return damaged(source, "has a malformed 'resources[" + std::to_string(i) + "]': " + e.what());
    }
    if (r.address.empty()) return damaged(source, "has an empty address in 'resources[" + std::to_string(i) + "]'");
    if (auto [it, fresh] = seen.emplace(r.address, i); !fresh)
      return damaged(source, "lists address '" + r.address + "' twice (resources[" + std::to_string(it->second) +
                                 "] and resources[" + std::to_string(i) + "])");
    doc.resources.push_back(std::move(r));
  }
  std::sort(doc.resources.begin(), doc.resources.end(),
            [](const Resource& a, const Resource& b) { return a.address < b.address; });
  if (j.contains("deposed")) {
    Json& dj = j["deposed"];
    if (!dj.is_array()) return damaged(source, "has a field 'deposed' that is not an array");
    for (size_t i = 0; i < dj.size(); ++i) {
      try {
        doc.deposed.push_back(take_resource(dj[i]));
      } catch (const std::exception& e) {
        return damaged(source, "has a malformed 'deposed[" + std::to_string(i) + "]': " + e.what());
      }
    }
  }
  if (auto it = j.find("outputs"); it != j.end()) {
    if (!it->is_object()) return damaged(source, "has a field 'outputs' that is not an object");
    if (!doc.sealed.empty() && !it->empty()) return damaged(source, "has both sealed and clear outputs");
    doc.outputs = std::move(*it);
  }
  return doc;
}

}  // namespace plinth::state
