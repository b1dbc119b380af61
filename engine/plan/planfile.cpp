#include "engine/plan/planfile.h"

#include <openssl/crypto.h>
#include <openssl/pem.h>

#include <array>
#include <cctype>
#include <ctime>
#include <filesystem>

#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/json_reader.h"
#include "engine/core/strings.h"
#include "engine/core/wire.h"

namespace plinth::plan {
namespace {

constexpr const char* kDocumentKind = "plinth-plan";

std::string to_hex(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 0xf];
  }
  return out;
}

std::optional<std::string> from_hex(const std::string& hex) {
  if (hex.size() % 2) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// ---- Plan files (lossless: apply executes the plan from the file; plan.h wire format) ----

Json bindings_json(const Bindings& b) {
  return {{"plinth_version", b.plinth_version},
          {"blueprints", b.blueprints},
          {"policies", b.policies},
          {"state",
           {{"location", b.state_location},
            {"existed", b.state_existed},
            {"lineage", b.state_lineage},
            {"serial", b.state_serial}}},
          {"git", {{"commit", b.git_commit}, {"dirty", b.git_dirty}}}};
}

// The canonical JSON of a resource change, written field by field in the
// order nlohmann::json sorts keys: what Json(change).dump() prints (plan.h's
// wire format), without building the change's tree first.

template <typename Append>
void write_json_value(const Json& j, Append& append) {
  append(j.dump());
}

template <typename Append>
void write_json_string(const std::string& s, Append& append) {
  append(Json(s).dump());  // nlohmann's escaping; throws on text that is not UTF-8
}

template <typename Append>
void write_resource(const Resource& r, Append& append) {
  append("{\"address\":");
  write_json_string(r.address, append);
  append(",\"attributes\":");
  write_json_value(r.attributes, append);
  append(",\"computed\":");
  write_json_value(r.computed, append);
  append(",\"depends_on\":[");
  for (size_t i = 0; i < r.depends_on.size(); ++i) {
    if (i) append(",");
    write_json_string(r.depends_on[i], append);
  }
  append("],\"index\":");
  append(std::to_string(r.index));
  append(",\"name\":");
  write_json_string(r.name, append);
  append(",\"provider\":");
  write_json_string(r.provider, append);
  append(",\"source\":");
  write_json_string(r.source.str(), append);
  append(",\"type\":");
  write_json_string(r.type, append);
  append("}");
}

template <typename Append>
void write_resource_change(const ResourceChange& rc, Append& append) {
  append("{\"action\":");
  write_json_string(to_string(rc.action), append);
  append(",\"address\":");
  write_json_string(rc.address, append);
  if (rc.after) {
    append(",\"after\":");
    write_resource(*rc.after, append);
  }
  if (rc.before) {
    append(",\"before\":");
    write_resource(*rc.before, append);
  }
  append(",\"changes\":[");
  for (size_t i = 0; i < rc.changes.size(); ++i) {
    const AttributeChange& c = rc.changes[i];
    append(i ? ",{" : "{");
    if (c.after) {
      append("\"after\":");
      write_json_value(*c.after, append);
      append(",");
    }
    if (c.before) {
      append("\"before\":");
      write_json_value(*c.before, append);
      append(",");
    }
    append(c.forces_replacement ? "\"forces_replacement\":true,\"path\":" : "\"forces_replacement\":false,\"path\":");
    write_json_string(c.path, append);
    append(c.sensitive ? ",\"sensitive\":true}" : ",\"sensitive\":false}");
  }
  append("]");
  if (rc.deposed) append(",\"deposed\":true");
  if (!rc.reasons.empty()) {
    append(",\"reasons\":[");
    for (size_t i = 0; i < rc.reasons.size(); ++i) {
      if (i) append(",");
      write_json_string(rc.reasons[i], append);
    }
    append("]");
  }
  if (rc.replace_requested) append(",\"replace_requested\":true");
  append(",\"type\":");
  write_json_string(rc.type, append);
  append("}");
}

/// Writes the document's canonical JSON (docs/plan-files.md: keys sorted at
/// every level, no whitespace), what `Json(document).dump()` would print, with
/// `signature` as given (or none), through `append`. Written one resource
/// change at a time and field by field: the tree of a 100,000-node plan is
/// some gigabytes. The top-level keys are written in their
/// sorted order. `written(n)` is called after each of the first n changes.
template <typename Append, typename Progress>
void write_canonical(const PlanFile& pf, const Json* signature, Append&& append, Progress&& written) {
  append("{\"bindings\":");
  append(bindings_json(pf.bindings).dump());
  append(",\"created_at\":");
  append(Json(pf.created_at).dump());
  append(",\"format\":");
  append(Json(kDocumentKind).dump());
  append(",\"format_version\":" + std::to_string(kPlanFileFormatVersion));
  append(",\"plan\":{\"resource_changes\":[");  // to_json(Plan): resource_changes, then summary
  const size_t count = pf.plan.changes.size();
  for (size_t i = 0; i < count; ++i) {
    if (i) append(",");
    write_resource_change(pf.plan.changes[i], append);
    written(i + 1);
  }
  append("],\"summary\":");
  append(Json(pf.plan.summary()).dump());
  append("}");
  if (signature) {
    append(",\"signature\":");
    append(signature->dump());
  }
  append("}");
}

/// write_canonical into a string.
std::string canonical_text(const PlanFile& pf, const Json* signature) {
  std::string out;
  const size_t count = pf.plan.changes.size();
  write_canonical(pf, signature, [&](std::string_view piece) { out += piece; }, [&](size_t n) {
    // Room for the rest at 1.5 times the first 64 changes' mean: the string
    // does not double and copy itself at 300 MB, and the pages reserved but
    // never written cost no memory.
    if (n == 64 && count > 64) out.reserve(out.size() + (out.size() / 64) * (count - 64) * 3 / 2);
  });
  return out;
}

/// Thrown inside the parser for a missing or mistyped field; caught in parse_planfile.
struct Malformed {
  std::string what;
};

/// Typed access to `parent[key]`, naming the dotted path in errors.
class Field {
 public:
  Field(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}
  Field operator[](const char* key) const {
    if (!j_.is_object()) throw Malformed{"'" + path_ + "' is not an object"};
    auto it = j_.find(key);
    if (it == j_.end()) throw Malformed{"'" + child(key) + "' is missing"};
    return Field(*it, child(key));
  }
  bool has(const char* key) const { return j_.is_object() && j_.contains(key); }
  const Json& json() const { return j_; }
  const std::string& path() const { return path_; }
  std::string str() const { return expect(j_.is_string(), "a string"), j_.get<std::string>(); }
  bool boolean() const { return expect(j_.is_boolean(), "true or false"), j_.get<bool>(); }
  int integer() const { return expect(j_.is_number_integer(), "an integer"), j_.get<int>(); }
  uint64_t unsigned_integer() const {
    return expect(j_.is_number_unsigned() || (j_.is_number_integer() && j_.get<int64_t>() >= 0), "a non-negative integer"),
           j_.get<uint64_t>();
  }
  const Json& object() const { return expect(j_.is_object(), "an object"), j_; }
  std::vector<Field> items() const {
    expect(j_.is_array(), "an array");
    std::vector<Field> out;
    for (size_t i = 0; i < j_.size(); ++i) out.emplace_back(j_[i], path_ + "[" + std::to_string(i) + "]");
    return out;
  }
  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    for (const auto& f : items()) out.push_back(f.str());
    return out;
  }
  std::map<std::string, std::string> string_map() const {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : object().items()) out[k] = Field(v, child(k.c_str())).str();
    return out;
  }

 private:
  std::string child(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  void expect(bool ok, const char* what) const {
    if (!ok) throw Malformed{"'" + path_ + "' is not " + what};
  }
  const Json& j_;
  std::string path_;
};

/// The plan, moved out of the document (doc["plan"] is left emptied).
Plan take_plan(Json& doc) {
  try {
    return plan::take_plan(doc["plan"]);
  } catch (const WireError& e) {
    throw Malformed{std::string("in 'plan', ") + e.what()};
  }
}

/// Everything but the plan, which is taken once the signature is checked.
PlanFile parse_document(const Field& doc) {
  PlanFile pf;
  pf.created_at = doc["created_at"].str();
  Field b = doc["bindings"];
  pf.bindings.plinth_version = b["plinth_version"].str();
  pf.bindings.blueprints = b["blueprints"].string_map();
  pf.bindings.policies = b["policies"].string_map();
  pf.bindings.state_location = b["state"]["location"].str();
  pf.bindings.state_existed = b["state"]["existed"].boolean();
  pf.bindings.state_lineage = b["state"]["lineage"].str();
  pf.bindings.state_serial = b["state"]["serial"].unsigned_integer();
  pf.bindings.git_commit = b["git"]["commit"].str();
  pf.bindings.git_dirty = b["git"]["dirty"].boolean();
  doc["plan"].object();
  if (doc.has("signature")) {
    Field s = doc["signature"];
    pf.signature = PlanSignature{s["algorithm"].str(), s["key_id"].str(), s["value"].str()};
  }
  return pf;
}

/// The bytes a signature covers: the document with "signature" holding only
/// its algorithm and key id, compact, keys sorted (nlohmann::json keeps object
/// keys sorted). Reads `doc` and leaves it as it was.
std::string signed_bytes(Json& doc, const std::string& algorithm, const std::string& key_id) {
  Json kept = Json::object();
  if (auto it = doc.find("signature"); it != doc.end()) kept = std::move(*it);
  doc["signature"] = {{"algorithm", algorithm}, {"key_id", key_id}};
  std::string bytes = doc.dump();
  doc["signature"] = std::move(kept);
  return bytes;
}

std::string short_hash(const std::string& h) { return h.size() > 12 ? h.substr(0, 12) + "…" : h; }

void compare_files(const char* kind, const std::map<std::string, std::string>& planned,
                   const std::map<std::string, std::string>& now, std::vector<std::string>& out) {
  for (const auto& [path, hash] : planned) {
    auto it = now.find(path);
    if (it == now.end())
      out.push_back(std::string(kind) + " " + path + " was part of the plan but is not used now");
    else if (it->second != hash)
      out.push_back(std::string(kind) + " " + path + " changed since the plan was made (sha256 " + short_hash(hash) +
                    " → " + short_hash(it->second) + ")");
  }
  for (const auto& [path, hash] : now)
    if (!planned.count(path)) out.push_back(std::string(kind) + " " + path + " was added since the plan was made");
}

}  // namespace

// ---- Bindings ----

Result<Bindings> make_bindings(const std::vector<std::string>& blueprint_files,
                               const std::vector<std::string>& policy_files, const StateBinding& state,
                               const std::string& git_commit, bool git_dirty) {
  Bindings b;
  for (const auto& [files, out] : {std::pair{&blueprint_files, &b.blueprints}, std::pair{&policy_files, &b.policies}}) {
    for (const auto& f : *files) {
      auto text = read_file(f);
      if (!text) return text.error();
      (*out)[f] = sha256_hex(*text);
    }
  }
  b.state_location = state.location;
  b.state_existed = state.existed;
  b.state_lineage = state.doc.lineage;
  b.state_serial = state.doc.serial;
  b.git_commit = git_commit;
  b.git_dirty = git_dirty;
  return b;
}

std::string bound_location(const std::string& location) {
  const size_t scheme = location.find("://");
  if (scheme == std::string::npos) {
    std::string normal = std::filesystem::path(location).lexically_normal().generic_string();
    return normal.empty() ? location : normal;
  }
  // A database URL: which server, database and workspace, not which role
  // connects (a pull request's plan may read with a read-only role).
  const size_t auth = scheme + 3;
  size_t auth_end = location.find_first_of("/?", auth);
  if (auth_end == std::string::npos) auth_end = location.size();
  const size_t at = location.rfind('@', auth_end);
  const size_t host = at != std::string::npos && at >= auth ? at + 1 : auth;
  const size_t query = location.find('?', auth_end);
  std::string out = location.substr(0, auth) + location.substr(host, (query == std::string::npos ? location.size() : query) - host);
  if (query != std::string::npos)
    for (size_t p = query + 1; p < location.size();) {
      size_t amp = location.find('&', p);
      if (amp == std::string::npos) amp = location.size();
      if (location.compare(p, 10, "workspace=") == 0) out += "?" + location.substr(p, amp - p);
      p = amp + 1;
    }
  return out;
}

PlanFile make_planfile(Plan plan, Bindings bindings) {
  return PlanFile{std::move(plan), std::move(bindings), utc_now(), std::nullopt};
}

Status verify(const PlanFile& pf, const Bindings& current) {
  const Bindings& p = pf.bindings;
  std::vector<std::string> changed;
  if (p.plinth_version != current.plinth_version)
    changed.push_back("the plan was made by plinth " + p.plinth_version + " but this is plinth " +
                      current.plinth_version);
  if (p.state_location != current.state_location)
    changed.push_back("the plan was made against the state " + p.state_location + ", not " +
                      current.state_location + " (pass --state " + p.state_location + ")");
  else if (!p.state_existed && current.state_existed)
    changed.push_back("the plan was made when there was no state at " + p.state_location +
                      ", and there is one now (this plan was already applied, or another run created it)");
  else if (p.state_existed && !current.state_existed)
    changed.push_back("the plan was made against the state at " + p.state_location +
                      " (serial " + std::to_string(p.state_serial) + "), and there is no state there now");
  else if (p.state_lineage != current.state_lineage)
    changed.push_back("the state has lineage " + current.state_lineage + " but the plan was made against lineage " +
                      p.state_lineage + " (a different state)");
  else if (p.state_serial != current.state_serial)
    changed.push_back("state serial is " + std::to_string(current.state_serial) + " but the plan was made at serial " +
                      std::to_string(p.state_serial) + " (the state changed since, or this plan was already applied)");
  compare_files("blueprint", p.blueprints, current.blueprints, changed);
  compare_files("policy", p.policies, current.policies, changed);
  // The commit is provenance, not a binding: a merge commit or a squash that
  // carries the same blueprint and policy files applies the reviewed plan
  // (their content is compared above); apply refuses uncommitted files itself.
  if (changed.empty()) return {};
  return Error::invalid(join(changed, "; ") + "; run plinth plan again");
}

state::StateDocument starting_state(const PlanFile& pf, const std::optional<state::StateDocument>& stored) {
  if (stored) return *stored;
  state::StateDocument doc;
  doc.format_version = state::kFormatVersion;
  doc.lineage = pf.bindings.state_lineage;
  doc.serial = 0;
  doc.plinth_version = PLINTH_VERSION;
  return doc;
}

// ---- Keys ----

PlanKey::PlanKey(Kind kind, std::unique_ptr<EVP_PKEY, PkeyFree> pkey, std::string secret)
    : kind_(kind), pkey_(std::move(pkey)), secret_(std::move(secret)) {
  if (kind_ == Kind::Hmac) {
    id_ = sha256_hex("plinth plan hmac key id\n" + secret_).substr(0, 16);
  } else {
    unsigned char pub[32];
    size_t len = sizeof pub;
    EVP_PKEY_get_raw_public_key(pkey_.get(), pub, &len);
    id_ = sha256_hex(std::string(reinterpret_cast<char*>(pub), len)).substr(0, 16);
  }
}

std::string PlanKey::algorithm() const { return kind_ == Kind::Hmac ? "hmac-sha256" : "ed25519"; }

Result<PlanKey> PlanKey::load(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse(*text, path);
}

Result<PlanKey> PlanKey::parse(const std::string& content, const std::string& source) {
  const std::string accepted =
      "; plan keys are an Ed25519 PEM key (openssl genpkey -algorithm ed25519 -out plan.key, and "
      "openssl pkey -in plan.key -pubout -out plan.pub) or an HMAC secret (openssl rand -hex 32 > plan.hmac)";
  if (content.find("-----BEGIN") != std::string::npos) {
    using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
    auto read = [&](bool priv) {
      Bio bio(BIO_new_mem_buf(content.data(), static_cast<int>(content.size())), &BIO_free);
      // An empty passphrase callback: an encrypted key fails instead of prompting.
      pem_password_cb* no_pass = [](char*, int, int, void*) { return 0; };
      return std::unique_ptr<EVP_PKEY, PkeyFree>(priv ? PEM_read_bio_PrivateKey(bio.get(), nullptr, no_pass, nullptr)
                                                      : PEM_read_bio_PUBKEY(bio.get(), nullptr, no_pass, nullptr));
    };
    Kind kind = Kind::Ed25519Private;
    auto key = read(true);
    if (!key) {
      kind = Kind::Ed25519Public;
      key = read(false);
    }
    if (!key) {
      if (content.find("ENCRYPTED") != std::string::npos)
        return Error::invalid("key file " + source + " is encrypted; plan keys must be unencrypted PEM" + accepted);
      return Error::invalid("key file " + source + " is PEM but not a private or public key OpenSSL can read" +
                            accepted);
    }
    if (EVP_PKEY_get_id(key.get()) != EVP_PKEY_ED25519)
      return Error::invalid("key file " + source + " holds a key of type " + EVP_PKEY_get0_type_name(key.get()) +
                            ", not Ed25519" + accepted);
    return PlanKey(kind, std::move(key), "");
  }
  std::string secret = content;
  while (!secret.empty() && std::isspace(static_cast<unsigned char>(secret.back()))) secret.pop_back();
  if (secret.size() < 32)
    return Error::invalid("HMAC key file " + source + " holds " + std::to_string(secret.size()) +
                          " byte(s); a plan HMAC secret needs at least 32" + accepted);
  return PlanKey(Kind::Hmac, nullptr, std::move(secret));
}

Result<std::string> PlanKey::sign(const std::string& data) const {
  if (kind_ == Kind::Ed25519Public)
    return Error::invalid("an Ed25519 public key cannot sign; give the private key (plan.key) to --sign-key and "
                          "the public key (plan.pub) to --verify-key");
  if (kind_ == Kind::Hmac) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    size_t len = 0;
    if (!EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, secret_.data(), secret_.size(),
                   reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, sizeof mac, &len))
      return Error::fatal("HMAC-SHA256 signing failed (OpenSSL)");
    return to_hex(mac, len);
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  unsigned char sig[64];
  size_t len = sizeof sig;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, pkey_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig, &len, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1)
    return Error::fatal("Ed25519 signing failed (OpenSSL)");
  return to_hex(sig, len);
}

bool PlanKey::verify(const std::string& data, const std::string& signature_hex) const {
  auto sig = from_hex(signature_hex);
  if (!sig) return false;
  if (kind_ == Kind::Hmac) {
    auto expected = sign(data);
    return expected && expected->size() == signature_hex.size() &&
           CRYPTO_memcmp(expected->data(), signature_hex.data(), signature_hex.size()) == 0;
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  return ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey_.get()) == 1 &&
         EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()), sig->size(),
                          reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
}

// ---- Files ----

Result<std::string> to_text(const PlanFile& pf, const PlanKey* sign_key) try {
  if (sign_key) {
    // The file is the signed bytes with the signature's value added: "value"
    // sorts after "algorithm" and "key_id", and "signature" after every other key.
    const Json head = {{"algorithm", sign_key->algorithm()}, {"key_id", sign_key->id()}};
    std::string text = canonical_text(pf, &head);
    auto sig = sign_key->sign(text);
    if (!sig) return sig.error();
    text.resize(text.size() - 2);  // "}}"
    text += ",\"value\":";
    text += Json(*sig).dump();
    text += "}}\n";
    return text;
  }
  Json kept;
  if (pf.signature)
    kept = {{"algorithm", pf.signature->algorithm}, {"key_id", pf.signature->key_id}, {"value", pf.signature->value}};
  std::string text = canonical_text(pf, pf.signature ? &kept : nullptr);
  text += '\n';
  return text;
} catch (const Json::exception& e) {  // a string that is not UTF-8
  return Error::invalid(std::string("cannot write the plan as JSON: ") + e.what());
}

namespace {

const std::string kMakeAgain = "; make a new one with plinth plan -out";

/// Why `doc` is not a plan file this plinth reads: another kind of document,
/// or another format_version; nullopt when it is one.
std::optional<Error> kind_problem(Json& doc, const std::string& source) {
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kDocumentKind)
    return Error::invalid(source + " is not a plinth plan file (no \"format\": \"" + kDocumentKind + "\")");
  const Json& version = doc["format_version"];
  if (!version.is_number_integer() || version.get<int>() != kPlanFileFormatVersion)
    return Error::invalid("plan file " + source + " has format_version " + version.dump() + ", but plinth " +
                          PLINTH_VERSION + " reads format_version " + std::to_string(kPlanFileFormatVersion) +
                          "; apply it with the plinth version that made it, or make a new plan" +
                          " with plinth plan -out");
  return std::nullopt;
}

/// The document of a plan file: complete JSON of the plinth-plan kind and
/// this format_version.
Result<Json> read_document(const std::string& text, const std::string& source) {
  const std::string& again = kMakeAgain;
  if (text.empty()) return Error::invalid("plan file " + source + " is empty" + again);
  if (auto problem = json_shape_problem(text))
    return Error::invalid("plan file " + source + " " + *problem + "; plinth never writes such a plan" + again);
  Json doc;
  try {
    doc = parse_json_text(text);
  } catch (const Json::parse_error& e) {
    std::string why = e.byte >= text.size() ? "ends early (truncated at byte " + std::to_string(text.size()) + ")"
                                            : "is not valid JSON (error at byte " + std::to_string(e.byte) + ")";
    return Error::invalid("plan file " + source + " " + why + again);
  } catch (const Json::exception& e) {  // out_of_range.406: a number too large for a double (1e400)
    return Error::invalid("plan file " + source + " is not valid JSON (" + e.what() + ")" + again);
  }
  if (auto problem = kind_problem(doc, source)) return *problem;
  return doc;
}

/// The PlanFile of a document read_document accepted; moves the plan out of `doc`.
Result<PlanFile> from_document(Json& doc, const std::string& source, const PlanKey* verify_key) {
  auto damaged = [&](const Malformed& m) {
    return Error::invalid("plan file " + source + " is damaged: " + m.what + kMakeAgain);
  };
  PlanFile pf;
  try {
    pf = parse_document(Field(doc, ""));
  } catch (const Malformed& m) {
    return damaged(m);
  }
  auto take = [&]() -> Result<PlanFile> {
    try {
      pf.plan = take_plan(doc);
    } catch (const Malformed& m) {
      return damaged(m);
    }
    return std::move(pf);
  };
  if (!verify_key) return take();
  if (!pf.signature)
    return Error::invalid("plan file " + source + " is not signed, and --verify-key requires a signed plan; make it with plinth plan -out FILE --sign-key KEY");
  if (pf.signature->algorithm != verify_key->algorithm())
    return Error::invalid("plan file " + source + " is signed with " + pf.signature->algorithm +
                          " but the verification key is " + verify_key->algorithm() + "; use the matching key");
  if (!verify_key->verify(signed_bytes(doc, pf.signature->algorithm, pf.signature->key_id), pf.signature->value)) {
    if (pf.signature->key_id != verify_key->id())
      return Error::invalid("plan file " + source + " was signed with key " + pf.signature->key_id +
                            " but the verification key is " + verify_key->id() + "; the signature does not verify");
    return Error::invalid("plan file " + source +
                          " does not match its signature: it was altered after it was signed; refusing to apply it");
  }
  return take();
}

}  // namespace

namespace detail {

// Each piece's changes are taken into the plan as soon as it is parsed: the
// tree of a 100,000-node plan's whole document is some gigabytes, a piece's
// about a megabyte. With `verify_key` the signed bytes are written as the
// changes are read: the document's canonical JSON is the rest of it, compact,
// with the changes' own canonical JSON in its array. Anything but a readable
// plan gives nullopt; the whole text is then read, and its reading names the
// problem.
std::optional<PlanFile> read_in_pieces(std::string_view text, const PlanKey* verify_key, size_t piece) {
  if (json_shape_problem(text)) return std::nullopt;  // as read_document refuses it
  const std::vector<size_t> splits = json_array_splits(text, {"plan", "resource_changes"}, piece);
  if (splits.empty()) return std::nullopt;
  try {
    JsonReader reader;
    // The first piece, closed, holds the keys before the changes; the last,
    // opened, the keys after them.
    Json doc = reader.parse({text.substr(0, splits.front()), "]}}"});
    Json last = reader.parse({"{\"plan\":{\"resource_changes\":[", text.substr(splits.back() + 1)});
    if (!doc.is_object() || !last.is_object() || !doc.contains("plan") || !last.contains("plan")) return std::nullopt;
    Json& plan = doc["plan"];
    Json& last_plan = last["plan"];
    if (!plan.is_object() || !last_plan.is_object()) return std::nullopt;
    Json pieces[2] = {std::move(plan["resource_changes"]), std::move(last_plan["resource_changes"])};
    plan["resource_changes"] = Json::array();
    for (auto& [key, value] : last_plan.items())
      if (key != "resource_changes") plan[key] = std::move(value);
    for (auto& [key, value] : last.items())
      if (key != "plan") doc[key] = std::move(value);
    if (kind_problem(doc, "")) return std::nullopt;
    PlanFile pf = parse_document(Field(doc, ""));
    std::string signed_text, after_changes;
    if (verify_key) {
      if (!pf.signature || pf.signature->algorithm != verify_key->algorithm()) return std::nullopt;
      std::string skeleton = signed_bytes(doc, pf.signature->algorithm, pf.signature->key_id);
      // "plan" is the last key but "signature" at the top: the last such text is its empty array.
      static constexpr std::string_view kEmpty = "\"plan\":{\"resource_changes\":[]";
      const size_t at = skeleton.rfind(kEmpty);
      if (at == std::string::npos) return std::nullopt;
      after_changes = skeleton.substr(at + kEmpty.size() - 1);
      skeleton.resize(at + kEmpty.size() - 1);
      signed_text = std::move(skeleton);
      signed_text.reserve(text.size());
    }
    size_t taken = 0;
    auto take = [&](Json& changes) {
      if (!changes.is_array() || changes.empty()) return false;
      if (verify_key)
        for (const Json& c : changes) {
          if (taken++) signed_text += ',';
          signed_text += c.dump();
        }
      Json wrapped = Json::object();
      wrapped["resource_changes"] = std::move(changes);
      std::vector<ResourceChange> more = plan::take_plan(wrapped).changes;
      std::move(more.begin(), more.end(), std::back_inserter(pf.plan.changes));
      return true;
    };
    if (!take(pieces[0])) return std::nullopt;
    for (size_t k = 1; k < splits.size(); ++k) {
      const std::string_view part = text.substr(splits[k - 1] + 1, splits[k] - splits[k - 1] - 1);
      Json changes = reader.parse({"[", part, "]"});
      if (!take(changes)) return std::nullopt;
    }
    if (!take(pieces[1])) return std::nullopt;
    if (verify_key) {
      signed_text += after_changes;
      if (!verify_key->verify(signed_text, pf.signature->value)) return std::nullopt;
    }
    return pf;
  } catch (const Malformed&) {
  } catch (const std::exception&) {  // Json's, WireError
  }
  return std::nullopt;
}

}  // namespace detail

namespace {

/// A file of 256 KiB or more read in pieces of about 64 KiB (detail::read_in_pieces).
std::optional<PlanFile> read_large_in_pieces(std::string_view text, const PlanKey* verify_key) {
  static constexpr size_t kPiece = 64 << 10, kPiecesFrom = 4 * kPiece;
  if (text.size() < kPiecesFrom) return std::nullopt;
  return detail::read_in_pieces(text, verify_key, kPiece);
}

}  // namespace

Result<PlanFile> parse_planfile(const std::string& text, const std::string& source, const PlanKey* verify_key) {
  if (auto pf = read_large_in_pieces(text, verify_key)) return std::move(*pf);
  auto doc = read_document(text, source);
  if (!doc) return doc.error();
  return from_document(*doc, source, verify_key);
}

Status write_planfile(const std::string& path, const PlanFile& pf, const PlanKey* sign_key) {
  if (sign_key || pf.signature) {  // signed over the whole text at once (Ed25519)
    auto text = to_text(pf, sign_key);
    if (!text) return text.error();
    return write_file_atomic(path, *text, 0600);
  }
  // Unsigned: to_text's bytes, written as they are made.
  return write_file_atomic_from(path, 0600, [&](const FileAppend& append) -> Status {
    try {
      write_canonical(pf, nullptr, append, [](size_t) {});
    } catch (const Json::exception& e) {  // a string that is not UTF-8
      return Error::invalid(std::string("cannot write the plan as JSON: ") + e.what());
    }
    append("\n");
    return {};
  });
}

Result<PlanFile> read_planfile(const std::string& path, const PlanKey* verify_key) {
  Json doc;
  {
    auto text = read_file(path);  // freed before the plan is taken out of the tree
    if (!text) return text.error();
    if (auto pf = read_large_in_pieces(*text, verify_key)) return std::move(*pf);
    auto read = read_document(*text, path);
    if (!read) return read.error();
    doc = std::move(*read);
  }
  return from_document(doc, path, verify_key);
}

}  // namespace plinth::plan
