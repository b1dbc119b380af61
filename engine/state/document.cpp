// The state document: JSON text <-> StateDocument, with a checksum so a
// damaged or truncated file is refused instead of being trusted.
#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "engine/core/hash.h"
#include "engine/core/json_reader.h"
#include "engine/core/wire.h"
#include "engine/state/state.h"

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
/// written (a large fleet's state is tens of megabytes of it). With
/// `hashed`, the object's members are written one by one, as dump() writes
/// them, and `hashed` counts the elements of its "resources" array written so
/// far: another thread may take an element apart once it is counted.
std::string checksum_of(const Json& canonical, std::atomic<uint32_t>* hashed = nullptr) {
  Sha256 digest;
  auto out = std::make_shared<DigestOutput>(digest);
  nlohmann::detail::serializer<Json> s(out, ' ', nlohmann::detail::error_handler_t::strict);
  if (!hashed || !canonical.is_object() || canonical.empty()) {
    s.dump(canonical, false, false, 0);
  } else {
    char separator = '{';
    for (const auto& [key, value] : canonical.items()) {
      out->write_character(separator);
      separator = ',';
      s.dump(Json(key), false, false, 0);
      out->write_character(':');
      if (key != "resources" || !value.is_array() || value.empty()) {
        s.dump(value, false, false, 0);
        continue;
      }
      uint32_t done = 0;
      for (const auto& element : value) {
        out->write_character(done == 0 ? '[' : ',');
        s.dump(element, false, false, 0);
        hashed->store(++done, std::memory_order_release);
        if (done % 256 == 0) hashed->notify_one();
      }
      out->write_character(']');
    }
    out->write_character('}');
  }
  out->flush();
  return "sha256:" + digest.hex();
}

/// The state's resources taken out of the parsed document, and its checksum.
struct Taken {
  std::string checksum;
  std::vector<Resource> resources;
  std::string problem;  ///< the first malformed resource, for damaged(); empty if none
};

/// Computes the checksum of `j` (the document without its checksum field)
/// and takes its resources out of it. For a large state the checksum is
/// computed on another thread and each resource taken once it was hashed: the
/// two cost about the same, so the pair costs about half.
Taken hash_and_take(Json& j) {
  static constexpr size_t kThreadFrom = 16384;
  static constexpr uint32_t kAll = std::numeric_limits<uint32_t>::max();
  Taken t;
  auto found = j.find("resources");
  Json* all = found != j.end() && found->is_array() ? &*found : nullptr;
  std::atomic<uint32_t> hashed{0};  // the size of a futex: waiting on it is one system call
  std::exception_ptr failed;
  std::thread hasher;
  struct Joiner {
    std::thread& thread;
    ~Joiner() {
      if (thread.joinable()) thread.join();
    }
  } joiner{hasher};
  if (all && all->size() >= kThreadFrom && all->size() < kAll && std::thread::hardware_concurrency() > 1) {
    try {
      hasher = std::thread([&] {
        try {
          t.checksum = checksum_of(j, &hashed);
        } catch (...) {
          failed = std::current_exception();
        }
        hashed.store(kAll, std::memory_order_release);
        hashed.notify_one();
      });
    } catch (const std::system_error&) {  // no thread to be had: in turn
    }
  }
  if (!hasher.joinable()) {
    t.checksum = checksum_of(j);
    hashed = kAll;
  }
  if (all) {
    t.resources.reserve(all->size());
    for (size_t i = 0; i < all->size(); ++i) {
      for (uint32_t h; (h = hashed.load(std::memory_order_acquire)) <= i;) hashed.wait(h, std::memory_order_acquire);
      Json& rj = (*all)[i];
      auto where = [i] { return "resources[" + std::to_string(i) + "]"; };
      if (!rj.is_object()) {
        t.problem = "has a field '" + where() + "' that is not an object";
        break;
      }
      try {
        t.resources.push_back(take_resource(rj));
      } catch (const WireError& e) {
        t.problem = "has a malformed '" + where() + "': " + e.what();
        break;
      }
      if (t.resources.back().address.empty()) {
        t.problem = "has an empty address in '" + where() + "'";
        break;
      }
    }
  }
  if (hasher.joinable()) hasher.join();
  if (failed) std::rethrow_exception(failed);
  return t;
}

}  // namespace

namespace detail {

std::vector<size_t> resources_splits(std::string_view text, size_t every) {
  return json_array_splits(text, {"resources"}, every);
}

}  // namespace detail

namespace {

/// Json::parse of a large state document in pieces cut at the commas
/// `splits` found, read by JsonReader, on two threads with `two_threads`:
/// the first piece closed with "]}", the middle ones as arrays, the last
/// opened with {"resources":[, and their resources appended in order. Small
/// pieces keep simdjson's buffers (up to about 14 times the text they read) small.
/// nullopt when a piece does not parse; the caller then parses the whole
/// text, which names the error.
std::optional<Json> parse_in_pieces(std::string_view text, const std::vector<size_t>& splits, bool two_threads) {
  static constexpr std::string_view kClose = "]}", kOpen = "{\"resources\":[", kArrayOpen = "[", kArrayClose = "]";
  const size_t count = splits.size() + 1;
  std::vector<std::optional<Json>> parsed(count);
  std::atomic<size_t> next{0};
  auto work = [&] {
    JsonReader reader;
    for (size_t k; (k = next.fetch_add(1)) < count;) {
      const size_t from = k == 0 ? 0 : splits[k - 1] + 1;
      const size_t to = k + 1 == count ? text.size() : splits[k];
      const std::string_view piece = text.substr(from, to - from);
      try {
        if (k == 0)
          parsed[k] = reader.parse({piece, kClose});
        else if (k + 1 == count)
          parsed[k] = reader.parse({kOpen, piece});
        else
          parsed[k] = reader.parse({kArrayOpen, piece, kArrayClose});
      } catch (const std::exception&) {
        next = count;  // the whole text is parsed again for the error
        return;
      }
    }
  };
  std::thread worker;
  if (two_threads) {
    try {
      worker = std::thread(work);
    } catch (const std::system_error&) {  // no thread to be had: this one reads them all
    }
  }
  work();
  if (worker.joinable()) worker.join();
  if (std::any_of(parsed.begin(), parsed.end(), [](const std::optional<Json>& p) { return !p; })) return std::nullopt;
  Json& first = *parsed.front();
  Json& last = *parsed.back();
  auto rest = last.find("resources");
  auto resources = first.find("resources");
  if (rest == last.end() || resources == first.end() || !resources->is_array()) return std::nullopt;
  // The resources of pieces 1..count-1: the middle pieces, then the last one's array.
  auto part = [&](size_t k) -> Json& { return k + 1 == count ? *rest : *parsed[k]; };
  size_t total = resources->size();
  for (size_t k = 1; k < count; ++k) {
    // A trailing comma ("[{...}, ]") leaves a piece's array empty.
    if (!part(k).is_array() || part(k).empty()) return std::nullopt;
    total += part(k).size();
  }
  auto& into = resources->get_ref<Json::array_t&>();
  into.reserve(total);
  for (size_t k = 1; k < count; ++k) {
    auto& from = part(k).get_ref<Json::array_t&>();
    std::move(from.begin(), from.end(), std::back_inserter(into));
  }
  for (auto& [key, value] : last.items())
    if (key != "resources") first[key] = std::move(value);
  return std::move(first);
}

/// A state file's text parsed with simdjson (engine/core/json_reader.h): from
/// 256 KiB in pieces of about 64 KiB, from 4 MiB on two threads (the 86 MB of
/// a 100,000-node fleet take most of a no-change plan's time otherwise; below
/// that a second thread's memory costs more than the time it saves).
Json parse_text(const std::string& text) {
  static constexpr size_t kPiece = 64 << 10, kPiecesFrom = 4 * kPiece, kThreadsFrom = 4 << 20;
  if (text.size() >= kPiecesFrom)
    if (auto splits = detail::resources_splits(text, kPiece); !splits.empty())
      if (auto j = parse_in_pieces(text, splits,
                                   text.size() >= kThreadsFrom && std::thread::hardware_concurrency() > 1))
        return std::move(*j);
  return parse_json_text(text);
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
    j = parse_text(text);
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
  Taken taken = hash_and_take(j);
  if (stored_sum != taken.checksum)
    return damaged(source, "fails its checksum (stored " + stored_sum + ", computed " + taken.checksum +
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

  if (!taken.problem.empty()) return damaged(source, taken.problem);
  doc.resources = std::move(taken.resources);
  // As plinth writes them, the addresses ascend: none repeats and no sort is needed.
  const auto ascends = [](const Resource& a, const Resource& b) { return a.address < b.address; };
  if (std::adjacent_find(doc.resources.begin(), doc.resources.end(), std::not_fn(ascends)) != doc.resources.end()) {
    std::map<std::string_view, size_t> seen;
    for (size_t i = 0; i < doc.resources.size(); ++i)
      if (auto [it, fresh] = seen.emplace(doc.resources[i].address, i); !fresh)
        return damaged(source, "lists address '" + doc.resources[i].address + "' twice (resources[" +
                                   std::to_string(it->second) + "] and resources[" + std::to_string(i) + "])");
    std::sort(doc.resources.begin(), doc.resources.end(), ascends);
  }
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
