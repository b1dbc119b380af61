// engine/state/encryption.h: keys, sealing sensitive values and whole
// documents, and the errors for a missing, wrong or tampered key.
#include "engine/state/encryption.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "tests/support/run.h"
#include "tests/support/workspace.h"

namespace plinth::test::state_encryption {

using namespace plinth::state;

namespace {

StateKey key(const std::string& hex) {
  auto k = parse_state_key(hex, "test key");
  REQUIRE(k.ok());
  return *k;
}

const std::string kHex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const std::string kHex2 = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

StateDocument sample() {
  StateDocument doc = new_document();
  doc.serial = 3;
  for (int i = 0; i < 2; ++i) {
    Resource r = make_resource("baremetal.node", "pool", i, "baremetal",
                               {{"bmc_credentials", "env:SECRET_REF_" + std::to_string(i)},
                                {"gpu", "H100"},
                                {"nested", {{"token", "nested-secret"}, {"plain", 1}}}});
    r.computed = {{"bmc_serial", "SN-" + std::to_string(i)}};
    doc.resources.push_back(r);
  }
  return doc;
}

EncryptionSettings settings(std::optional<StateKey> k, bool whole = false) {
  EncryptionSettings s;
  s.key = std::move(k);
  s.whole_document = whole;
  s.sensitive_paths = [](const Resource&) { return std::vector<std::string>{"bmc_credentials", "nested.token"}; };
  s.shown = "s.json";
  return s;
}

}  // namespace

TEST_CASE("state keys: 64 hex digits or base64 of 32 bytes, anything else is refused without echoing it") {
  CHECK(key(kHex).id.size() == 16);
  CHECK(key(kHex).id == key("  " + kHex + "\n").id);
  CHECK(key(kHex).id != key(kHex2).id);
  auto b64 = parse_state_key("ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3iJmqu8zd7v8=", "b64");
  REQUIRE(b64.ok());
  CHECK(b64->id == key(kHex).id);  // the same 32 bytes
  for (const std::string& bad : std::vector<std::string>{"", "short", "passphrase-not-a-key-passphrase-not-a-key-passphrase-not-a-key!",
                          kHex.substr(0, 62), "AAAA"}) {
    auto k = parse_state_key(bad, "PLINTH_STATE_KEY");
    REQUIRE_FALSE(k.ok());
    CHECK(k.error().message.find("PLINTH_STATE_KEY is not a 256-bit key") != std::string::npos);
    if (bad.size() > 4) CHECK(k.error().message.find(bad) == std::string::npos);
  }
}

TEST_CASE("a key file must be private") {
  test::TempDir dir;
  std::string f = dir.write("k", kHex + "\n");
  ::chmod(f.c_str(), 0640);
  auto k = read_state_key_file(f);
  REQUIRE_FALSE(k.ok());
  CHECK(k.error().message.find("chmod 600") != std::string::npos);
  ::chmod(f.c_str(), 0600);
  k = read_state_key_file(f);
  REQUIRE(k.ok());
  CHECK(k->origin == "key file " + f);
}

TEST_CASE("sensitive values are sealed, survive the text format and decrypt to the original") {
  const StateDocument doc = sample();
  auto enc = encrypt_document(doc, settings(key(kHex)));
  REQUIRE(enc.ok());
  CHECK(enc->format_version == 2);
  CHECK(is_encrypted(*enc));
  const std::string text = to_json_text(*enc);
  CHECK(text.find("SECRET_REF") == std::string::npos);
  CHECK(text.find("nested-secret") == std::string::npos);
  CHECK(text.find("\"gpu\": \"H100\"") != std::string::npos);  // the rest stays readable
  auto parsed = parse(text, "s.json");  // checksum and fields need no key
  REQUIRE(parsed.ok());
  auto dec = decrypt_document(*parsed, settings(key(kHex)), "s.json");
  REQUIRE(dec.ok());
  CHECK(dec->resources == doc.resources);
  // Without a key nothing is encrypted and the format stays 1.
  auto clear = encrypt_document(doc, settings(std::nullopt));
  REQUIRE(clear.ok());
  CHECK(clear->format_version == 1);
  CHECK_FALSE(is_encrypted(*clear));
}

TEST_CASE("a missing, wrong or old key, and a value moved to another resource, are errors, never a clear state") {
  auto enc = encrypt_document(sample(), settings(key(kHex)));
  REQUIRE(enc.ok());
  auto none = decrypt_document(*enc, settings(std::nullopt), "s.json");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("state s.json: cannot decrypt baremetal.node.pool[0] attributes.bmc_credentials: "
                                  "it is encrypted with key " + key(kHex).id + " and no key was given") == 0);
  auto wrong = decrypt_document(*enc, settings(key(kHex2)), "s.json");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().message.find("not with test key (key " + key(kHex2).id + ")") != std::string::npos);
  // rekey: the old key is accepted for reading.
  auto s = settings(key(kHex2));
  s.old_keys.push_back(key(kHex));
  CHECK(decrypt_document(*enc, s, "s.json").ok());
  // A ciphertext copied from node 1 to node 0 fails (it is bound to its address).
  StateDocument moved = *enc;
  moved.resources[0].attributes["bmc_credentials"] = moved.resources[1].attributes["bmc_credentials"];
  auto m = decrypt_document(moved, settings(key(kHex)), "s.json");
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().message.find("fails AES-256-GCM authentication") != std::string::npos);
}

TEST_CASE("whole-document encryption seals the resources and keeps lineage and serial in clear") {
  const StateDocument doc = sample();
  auto enc = encrypt_document(doc, settings(key(kHex), true));
  REQUIRE(enc.ok());
  CHECK(enc->resources.empty());
  CHECK_FALSE(enc->sealed.empty());
  const std::string text = to_json_text(*enc);
  CHECK(text.find("baremetal.node.pool") == std::string::npos);
  CHECK(text.find(doc.lineage) != std::string::npos);
  auto parsed = parse(text, "s.json");
  REQUIRE(parsed.ok());
  CHECK(parsed->serial == 3);
  auto dec = decrypt_document(*parsed, settings(key(kHex)), "s.json");
  REQUIRE(dec.ok());
  CHECK(dec->resources == doc.resources);
  CHECK(dec->sealed.empty());
  // Outputs are values of the resources: sealed with them.
  StateDocument with_outputs = doc;
  with_outputs.outputs = {{"serials", {{"value", {{"pool", {{"pool-0", "SN-0"}}}}}}}};
  auto sealed = encrypt_document(with_outputs, settings(key(kHex), true));
  REQUIRE(sealed.ok());
  CHECK(sealed->outputs.empty());
  CHECK(to_json_text(*sealed).find("SN-0") == std::string::npos);
  auto opened = decrypt_document(*parse(to_json_text(*sealed), "s.json"), settings(key(kHex)), "s.json");
  REQUIRE(opened.ok());
  CHECK(opened->outputs == with_outputs.outputs);
  CHECK(opened->resources == doc.resources);
  auto none = decrypt_document(*parsed, settings(std::nullopt), "s.json");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("cannot decrypt its resources (the whole state is encrypted)") != std::string::npos);
  // Sealed under another lineage: refused (the lineage is authenticated).
  StateDocument other = *parsed;
  other.lineage = new_document().lineage;
  CHECK_FALSE(decrypt_document(other, settings(key(kHex)), "s.json").ok());
}

TEST_CASE("the encrypting backend stores ciphertext and loads clear values, no key means an error, not an empty "
          "state") {
  test::TempDir dir;
  const std::string path = dir.path() + "/s.json";
  auto b = with_encryption(open_local(path), settings(key(kHex)));
  StateDocument doc = sample();
  doc.serial = 1;
  REQUIRE(b->save(doc).ok());
  CHECK(test::slurp(path).find("SECRET_REF") == std::string::npos);
  auto loaded = b->load();
  REQUIRE(loaded.ok());
  REQUIRE(*loaded);
  CHECK((*loaded)->resources == doc.resources);
  auto plain = with_encryption(open_local(path), settings(std::nullopt));
  auto refused = plain->load();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("state s.json: cannot decrypt") == 0);
}

TEST_CASE("deposed objects (create-before-destroy) are sealed with the resources and their sensitive values too") {
  StateDocument doc = sample();
  Resource old = doc.resources[1];
  old.computed["bmc_serial"] = "SN-OLD";
  doc.deposed.push_back(old);

  auto whole = encrypt_document(doc, settings(key(kHex), true));
  REQUIRE(whole.ok());
  CHECK(whole->deposed.empty());
  const std::string text = to_json_text(*whole);
  CHECK(text.find("SN-OLD") == std::string::npos);
  auto parsed = parse(text, "s.json");
  REQUIRE(parsed.ok());
  auto dec = decrypt_document(*parsed, settings(key(kHex)), "s.json");
  REQUIRE(dec.ok());
  CHECK(dec->resources == doc.resources);
  CHECK(dec->deposed == doc.deposed);

  auto values = encrypt_document(doc, settings(key(kHex)));
  REQUIRE(values.ok());
  REQUIRE(values->deposed.size() == 1);
  CHECK(to_json_text(*values).find("SECRET_REF_1") == std::string::npos);
  auto back = decrypt_document(*values, settings(key(kHex)), "s.json");
  REQUIRE(back.ok());
  CHECK(back->deposed == doc.deposed);
}

TEST_CASE("with a key set, a state written in clear or with a sensitive value in clear is refused, never used",
          "[security]") {
  test::TempDir dir;
  const std::string path = dir.path() + "/s.json";
  StateDocument doc = sample();
  doc.serial = 1;
  // An encrypted state is replaced by one in clear (format 1), as an attacker
  // with write access to the file would: the key is set, so it is refused.
  REQUIRE(with_encryption(open_local(path), settings(key(kHex)))->save(doc).ok());
  REQUIRE(open_local(path)->save([&] {
    StateDocument clear = doc;
    clear.serial = 2;
    clear.resources[1].attributes["bmc_credentials"] = "file:/etc/shadow";
    return clear;
  }()).ok());
  auto refused = with_encryption(open_local(path), settings(key(kHex)))->load();
  REQUIRE_FALSE(refused.ok());
  const std::string address = doc.resources[0].address;
  CHECK(refused.error().message.rfind("state s.json: " + address + " attributes.bmc_credentials is stored in clear, "
                                      "not encrypted with key " + key(kHex).id + "; with a state key set",
                                      0) == 0);
  CHECK(refused.error().message.find("run 'plinth state rekey' once") != std::string::npos);
  // Nested sensitive paths and whole-document mode are held to the same rule.
  StateDocument nested = doc;
  nested.resources[0].attributes["bmc_credentials"] = nullptr;
  auto n = decrypt_document(nested, settings(key(kHex)), "s.json");
  REQUIRE_FALSE(n.ok());
  CHECK(n.error().message.find(address + " attributes.nested.token is stored in clear") != std::string::npos);
  StateDocument no_secrets = doc;
  for (auto& r : no_secrets.resources) r.attributes = {{"gpu", "H100"}};
  CHECK(decrypt_document(no_secrets, settings(key(kHex)), "s.json").ok());
  auto unsealed = decrypt_document(no_secrets, settings(key(kHex), true), "s.json");
  REQUIRE_FALSE(unsealed.ok());
  CHECK(unsealed.error().message.rfind("state s.json is not sealed, but PLINTH_STATE_ENCRYPTION=document is set", 0) ==
        0);
  // Without a key nothing changes; `state rekey` (allow_cleartext) reads it to encrypt it.
  CHECK(with_encryption(open_local(path), settings(std::nullopt))->load().ok());
  EncryptionSettings rekey = settings(key(kHex));
  rekey.allow_cleartext = true;
  CHECK(with_encryption(open_local(path), rekey)->load().ok());
}

}  // namespace plinth::test::state_encryption
