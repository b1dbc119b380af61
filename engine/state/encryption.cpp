// Encrypted state: AES-256-GCM of sensitive values or of the whole list of
// resources (docs/state.md, "Encryption").
#include "engine/state/encryption.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/core/hash.h"
#include "engine/core/json_reader.h"

namespace plinth::state {
namespace {

/// The marker of an encrypted value: {"plinth_encrypted": "aes-256-gcm:KEYID:BASE64(nonce | ciphertext | tag)"}.
constexpr const char* kMarker = "plinth_encrypted";
constexpr const char* kScheme = "aes-256-gcm";
constexpr size_t kNonce = 12, kTag = 16;

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using Ctx = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> unbase64(const std::string& text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * text.size() / 4, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  size_t pad = text.size() >= 2 && text[text.size() - 1] == '=' ? (text[text.size() - 2] == '=' ? 2 : 1) : 0;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::string key_id(const std::array<unsigned char, 32>& k) {
  return sha256_hex("plinth state key id\n" + std::string(reinterpret_cast<const char*>(k.data()), k.size()))
      .substr(0, 16);
}

/// AES-256-GCM of `plain` with a fresh random nonce; `aad` is authenticated, not stored.
std::string seal(const StateKey& key, const std::string& plain, const std::string& aad) {
  unsigned char nonce[kNonce];
  if (RAND_bytes(nonce, sizeof nonce) != 1) throw std::runtime_error("OpenSSL RAND_bytes failed: no nonce");
  Ctx ctx(EVP_CIPHER_CTX_new());
  std::string out(kNonce + plain.size() + kTag, '\0');
  std::memcpy(out.data(), nonce, kNonce);
  int len = 0;
  auto* o = reinterpret_cast<unsigned char*>(out.data()) + kNonce;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key.bytes.data(), nonce) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(aad.data()),
                        static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), o, &len, reinterpret_cast<const unsigned char*>(plain.data()),
                        static_cast<int>(plain.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), o + len, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTag, o + plain.size()) != 1)
    throw std::runtime_error("OpenSSL AES-256-GCM encryption failed");
  return std::string(kScheme) + ":" + key.id + ":" + base64(out);
}

/// What went wrong opening one sealed value.
enum class OpenFailure { Malformed, NoKey, WrongKey, Tampered };

struct Opened {
  std::optional<std::string> plain;
  OpenFailure failure = OpenFailure::Malformed;
  std::string key_id;  ///< the key the value names
};

Opened open_sealed(const std::string& sealed, const std::optional<StateKey>& key, const std::vector<StateKey>& old,
                   const std::string& aad) {
  Opened r;
  const std::string prefix = std::string(kScheme) + ":";
  if (sealed.rfind(prefix, 0) != 0) return r;
  size_t colon = sealed.find(':', prefix.size());
  if (colon == std::string::npos) return r;
  r.key_id = sealed.substr(prefix.size(), colon - prefix.size());
  auto bytes = unbase64(sealed.substr(colon + 1));
  if (!bytes || bytes->size() < kNonce + kTag) return r;
  const StateKey* k = nullptr;
  if (key && key->id == r.key_id) k = &*key;
  for (const auto& o : old)
    if (!k && o.id == r.key_id) k = &o;
  if (!k) {
    r.failure = key || !old.empty() ? OpenFailure::WrongKey : OpenFailure::NoKey;
    return r;
  }
  const size_t n = bytes->size() - kNonce - kTag;
  auto* in = reinterpret_cast<unsigned char*>(bytes->data());
  std::string plain(n, '\0');
  Ctx ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  auto* p = reinterpret_cast<unsigned char*>(plain.data());
  bool ok = ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, k->bytes.data(), in) == 1 &&
            EVP_DecryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(aad.data()),
                              static_cast<int>(aad.size())) == 1 &&
            EVP_DecryptUpdate(ctx.get(), p, &len, in + kNonce, static_cast<int>(n)) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTag, in + kNonce + n) == 1 &&
            EVP_DecryptFinal_ex(ctx.get(), p + len, &len) == 1;
  if (!ok) {
    r.failure = OpenFailure::Tampered;
    return r;
  }
  r.plain = std::move(plain);
  return r;
}

std::string key_names(const EncryptionSettings& s) {
  std::string out;
  if (s.key) out = s.key->origin + " (key " + s.key->id + ")";
  for (const auto& o : s.old_keys) out += (out.empty() ? "" : ", ") + o.origin + " (key " + o.id + ")";
  return out;
}

Error open_error(const Opened& o, const EncryptionSettings& s, const std::string& source, const std::string& what) {
  const std::string head = "state " + source + ": cannot decrypt " + what + ": ";
  const std::string tail = ". Plinth read nothing from it and changed nothing; the state is untouched.";
  switch (o.failure) {
    case OpenFailure::NoKey:
      return Error::invalid(head + "it is encrypted with key " + o.key_id +
                            " and no key was given; set PLINTH_STATE_KEY, PLINTH_STATE_KEY_FILE or pass "
                            "--state-key-file FILE" + tail);
    case OpenFailure::WrongKey:
      return Error::invalid(head + "it is encrypted with key " + o.key_id + ", not with " + key_names(s) +
                            "; give the key it was written with" + tail);
    case OpenFailure::Tampered:
      return Error::invalid(head + "it fails AES-256-GCM authentication under key " + o.key_id +
                            ": it was damaged or edited. Restore a good version ('plinth state history', "
                            "'plinth state restore SERIAL')" + tail);
    case OpenFailure::Malformed:
      break;
  }
  return Error::invalid(head + "the encrypted value is malformed (expected " + std::string(kScheme) +
                        ":KEYID:BASE64). Restore a good version ('plinth state history', 'plinth state restore "
                        "SERIAL')" + tail);
}

bool is_marker(const Json& v) {
  return v.is_object() && v.size() == 1 && v.contains(kMarker) && v.at(kMarker).is_string();
}

bool has_marker(const Json& v) {
  if (is_marker(v)) return true;
  if (v.is_object() || v.is_array())
    for (const auto& x : v)
      if (has_marker(x)) return true;
  return false;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) out.push_back(part);
  return out;
}

/// What a value's ciphertext is bound to: the state, the resource and where
/// the value sits, so a value copied to another resource or attribute fails.
std::string value_aad(const std::string& lineage, const std::string& address, const std::string& where) {
  return "plinth state value\n" + lineage + "\n" + address + "\n" + where;
}

void encrypt_path(Json& obj, const std::vector<std::string>& parts, size_t i, const std::string& where,
                  const StateKey& key, const std::string& lineage, const std::string& address) {
  if (!obj.is_object()) return;
  auto it = obj.find(parts[i]);
  if (it == obj.end()) return;
  if (i + 1 < parts.size()) return encrypt_path(*it, parts, i + 1, where, key, lineage, address);
  if (is_marker(*it) || it->is_null()) return;
  *it = Json{{kMarker, seal(key, it->dump(), value_aad(lineage, address, where))}};
}

/// True when `v` or a value inside it is an encrypted value.
bool holds_marker(const Json& v) {
  if (is_marker(v)) return true;
  if (v.is_structured())
    for (const auto& x : v)
      if (holds_marker(x)) return true;
  return false;
}

Status decrypt_values(Json& v, const std::string& where, const EncryptionSettings& s, const std::string& lineage,
                      const std::string& address, const std::string& source) {
  if (is_marker(v)) {
    auto o = open_sealed(v.at(kMarker).get<std::string>(), s.key, s.old_keys, value_aad(lineage, address, where));
    if (!o.plain) return open_error(o, s, source, address + " " + where);
    try {
      v = parse_json_text(*o.plain);
    } catch (const Json::exception&) {
      return Error::invalid("state " + source + ": the decrypted value of " + address + " " + where +
                            " is not JSON; restore a good version ('plinth state restore SERIAL')");
    }
    return {};
  }
  if (v.is_object()) {
    for (auto& [k, x] : v.items())
      if (auto st = decrypt_values(x, where + "." + k, s, lineage, address, source); !st) return st;
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      if (auto st = decrypt_values(v[i], where + "[" + std::to_string(i) + "]", s, lineage, address, source); !st)
        return st;
  }
  return {};
}

std::string sealed_aad(const std::string& lineage) { return "plinth state resources\n" + lineage; }

class EncryptedBackend final : public Backend {
 public:
  EncryptedBackend(std::unique_ptr<Backend> inner, EncryptionSettings s) : inner_(std::move(inner)), s_(std::move(s)) {}

  std::string describe() const override { return inner_->describe(); }
  Status lock(const std::string& operation, std::chrono::milliseconds timeout) override {
    return inner_->lock(operation, timeout);
  }
  void unlock() override { inner_->unlock(); }

  Result<std::optional<StateDocument>> load() override {
    auto doc = inner_->load();
    if (!doc || !*doc) return doc;
    was_sealed_ = !(*doc)->sealed.empty();
    auto plain = decrypt_document(std::move(**doc), s_, s_.shown.empty() ? inner_->describe() : s_.shown);
    if (!plain) return plain.error();
    return std::optional<StateDocument>(std::move(*plain));
  }

  Status save(const StateDocument& doc) override {
    EncryptionSettings s = s_;
    s.whole_document = s.whole_document || was_sealed_;
    // Without a key nothing is encrypted: save the document as it is (no
    // copy) when its format version already says so.
    if (!s.key && doc.format_version == (is_encrypted(doc) ? 2 : 1)) return inner_->save(doc);
    auto out = encrypt_document(doc, s);
    if (!out) return out.error();
    return inner_->save(*out);
  }

  // Changes are stored as they are only in clear: with a key, every save
  // encrypts (or seals) a whole document, as before.
  bool stores_changes() const override { return !s_.key && !was_sealed_ && inner_->stores_changes(); }
  Status save_changes(const StateChanges& changes) override {
    if (!stores_changes()) return Backend::save_changes(changes);
    return inner_->save_changes(changes);
  }
  Status settle() override { return inner_->settle(); }
  uint64_t bytes_written() const override { return inner_->bytes_written(); }

  Result<std::vector<HistoryEntry>> history() override { return inner_->history(); }
  Result<std::string> restore(uint64_t serial) override { return inner_->restore(serial); }
  Result<std::string> break_lock(bool force) override { return inner_->break_lock(force); }
  Result<StateDocument> saved_version(uint64_t serial) override { return inner_->saved_version(serial); }
  Status rewrite_version(const StateDocument& doc) override { return inner_->rewrite_version(doc); }
  Status adopt(const std::vector<std::pair<HistoryEntry, StateDocument>>& versions,
               const StateDocument& current) override {
    return inner_->adopt(versions, current);
  }

 private:
  std::unique_ptr<Backend> inner_;
  EncryptionSettings s_;
  bool was_sealed_ = false;  ///< the stored state is sealed: keep it so
};

}  // namespace

Result<StateKey> parse_state_key(const std::string& text, const std::string& origin) {
  size_t b = text.find_first_not_of(" \t\r\n"), e = text.find_last_not_of(" \t\r\n");
  std::string t = b == std::string::npos ? "" : text.substr(b, e - b + 1);
  StateKey key;
  key.origin = origin;
  auto hexval = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  bool done = false;
  if (t.size() == 64 && std::all_of(t.begin(), t.end(), [&](char c) { return hexval(c) >= 0; })) {
    for (size_t i = 0; i < 32; ++i) key.bytes[i] = static_cast<unsigned char>(hexval(t[2 * i]) * 16 + hexval(t[2 * i + 1]));
    done = true;
  } else if (auto raw = unbase64(t); raw && raw->size() == 32) {
    std::memcpy(key.bytes.data(), raw->data(), 32);
    done = true;
  }
  if (!done)
    return Error::invalid("the state key in " + origin +
                          " is not a 256-bit key: write 64 hex digits or the base64 of 32 bytes "
                          "(e.g. the output of 'openssl rand -hex 32')");
  key.id = key_id(key.bytes);
  return key;
}

Result<StateKey> read_state_key_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Error::invalid("cannot read the state key file " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Error::invalid("the state key file " + path + " is not a regular file");
  if (st.st_mode & 077)
    return Error::invalid("the state key file " + path +
                          " can be read by other users; run 'chmod 600 " + path + "' and try again");
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) return Error::invalid("cannot read the state key file " + path);
  return parse_state_key(ss.str(), "key file " + path);
}

Result<std::optional<StateKey>> state_key_from(const std::optional<std::string>& flag) {
  if (flag) {
    auto k = read_state_key_file(*flag);
    if (!k) return k.error();
    return std::optional<StateKey>(*k);
  }
  if (const char* v = std::getenv("PLINTH_STATE_KEY"); v && *v) {
    auto k = parse_state_key(v, "PLINTH_STATE_KEY");
    if (!k) return k.error();
    return std::optional<StateKey>(*k);
  }
  if (const char* f = std::getenv("PLINTH_STATE_KEY_FILE"); f && *f) {
    auto k = read_state_key_file(f);
    if (!k) return k.error();
    return std::optional<StateKey>(*k);
  }
  return std::optional<StateKey>{};
}

bool is_encrypted(const StateDocument& doc) {
  if (!doc.sealed.empty()) return true;
  for (const auto* list : {&doc.resources, &doc.deposed})
    for (const auto& r : *list)
      if (has_marker(r.attributes) || has_marker(r.computed)) return true;
  return false;
}

Result<StateDocument> encrypt_document(const StateDocument& doc, const EncryptionSettings& s) {
  StateDocument out = doc;
  if (!s.key) {
    out.format_version = is_encrypted(out) ? 2 : 1;
    return out;
  }
  if (s.whole_document) {
    if (!out.sealed.empty()) return out;  // still sealed (never decrypted): keep as it is
    // The resources as an array; with deposed objects, both in one object.
    Json resources = Json::array();
    for (const auto& r : out.resources) resources.push_back(r);
    Json plain = resources;
    if (!out.deposed.empty() || !out.outputs.empty()) {
      plain = Json{{"resources", std::move(resources)}};
      if (!out.deposed.empty()) plain["deposed"] = out.deposed;
      if (!out.outputs.empty()) plain["outputs"] = out.outputs;  // they are values of the resources
    }
    out.sealed = seal(*s.key, plain.dump(), sealed_aad(out.lineage));
    out.resources.clear();
    out.deposed.clear();
    out.outputs = Json::object();
    out.format_version = 2;
    return out;
  }
  for (auto* list : {&out.resources, &out.deposed})
  for (auto& r : *list) {
    if (!s.sensitive_paths) break;
    for (const auto& path : s.sensitive_paths(r)) {
      auto parts = split_path(path);
      if (parts.empty()) continue;
      encrypt_path(r.attributes, parts, 0, "attributes." + path, *s.key, out.lineage, r.address);
      encrypt_path(r.computed, parts, 0, "computed." + path, *s.key, out.lineage, r.address);
    }
  }
  out.format_version = is_encrypted(out) ? 2 : 1;
  return out;
}

/// With a key: every sensitive value must be sealed, and with whole_document
/// the resources too. A value in clear was not written by plinth under a key.
Status refuse_cleartext(const StateDocument& doc, const EncryptionSettings& s, const std::string& source) {
  if (!s.key || s.allow_cleartext) return {};
  const std::string how = "; with a state key set, plinth reads only values it encrypted itself, so a value in "
                          "clear may have been planted in the state (docs/security.md). Restore a good version "
                          "('plinth state history', 'plinth state restore SERIAL'), or, to encrypt a state that was "
                          "written without a key, run 'plinth state rekey' once";
  if (s.whole_document && doc.sealed.empty() && !(doc.resources.empty() && doc.deposed.empty()))
    return Error::invalid("state " + source + " is not sealed, but PLINTH_STATE_ENCRYPTION=document is set" + how);
  if (!s.sensitive_paths) return {};
  for (const auto* list : {&doc.resources, &doc.deposed})
    for (const Resource& r : *list)
      for (const std::string& path : s.sensitive_paths(r))
        for (const auto& [where, values] : {std::pair{"attributes", &r.attributes}, std::pair{"computed", &r.computed}}) {
          const Json* v = at_path(*values, path);
          if (!v || v->is_null() || (v->is_string() && v->get_ref<const std::string&>().empty()) || is_marker(*v))
            continue;
          return Error::invalid("state " + source + ": " + r.address + " " + where + "." + path +
                                " is stored in clear, not encrypted with key " + s.key->id + how);
        }
  return {};
}

Result<StateDocument> decrypt_document(StateDocument out, const EncryptionSettings& s, const std::string& source) {
  if (auto st = refuse_cleartext(out, s, source); !st) return st.error();
  if (!out.sealed.empty()) {
    auto o = open_sealed(out.sealed, s.key, s.old_keys, sealed_aad(out.lineage));
    if (!o.plain) return open_error(o, s, source, "its resources (the whole state is encrypted)");
    try {
      Json plain = parse_json_text(*o.plain);
      const Json& resources = plain.is_object() ? plain.at("resources") : plain;
      out.resources.clear();
      for (const auto& r : resources) out.resources.push_back(r.get<Resource>());
      if (plain.is_object() && plain.contains("deposed"))
        out.deposed = plain.at("deposed").get<std::vector<Resource>>();
      if (plain.is_object() && plain.contains("outputs")) out.outputs = plain.at("outputs");
    } catch (const std::exception& e) {
      return Error::invalid("state " + source + ": the decrypted resources do not parse (" + std::string(e.what()) +
                            "); restore a good version ('plinth state restore SERIAL')");
    }
    std::sort(out.resources.begin(), out.resources.end(),
              [](const Resource& a, const Resource& b) { return a.address < b.address; });
    out.sealed.clear();
  }
  for (auto* list : {&out.resources, &out.deposed})
  for (auto& r : *list) {
    // Most values hold nothing encrypted: found without building a path for every value.
    if (holds_marker(r.attributes))
      if (auto st = decrypt_values(r.attributes, "attributes", s, out.lineage, r.address, source); !st) return st.error();
    if (holds_marker(r.computed))
      if (auto st = decrypt_values(r.computed, "computed", s, out.lineage, r.address, source); !st) return st.error();
  }
  return out;
}

std::unique_ptr<Backend> with_encryption(std::unique_ptr<Backend> inner, EncryptionSettings settings) {
  return std::make_unique<EncryptedBackend>(std::move(inner), std::move(settings));
}

}  // namespace plinth::state
