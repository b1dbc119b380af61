#include "engine/plan/planfile.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "engine/core/hash.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
#include "tests/support/workspace.h"

namespace plinth::test::plan_planfile {

using namespace plinth::plan;

namespace {

Resource node(int index, Json attrs) {
  Resource r = make_resource("baremetal.node", "train-a", index, "baremetal", std::move(attrs));
  r.source = SourceLoc{"blueprints/a.yaml", 12, 5};
  return r;
}

/// A plan with every action, nested and sensitive attributes, a float and
/// computed values, so the round trip covers every field.
Plan sample_plan() {
  Plan p;
  Resource created = node(0, {{"gpu", "H100-80GB"}, {"bios", {{"SriovEnable", "Enabled"}}}, {"ratio", 0.75}});
  created.depends_on = {"net.vlan.ml-fabric"};
  ResourceChange create{created.address, created.type, Action::Create,
                        {{"gpu", std::nullopt, Json("H100-80GB"), false, false}}, std::nullopt, created};
  Resource old1 = node(1, {{"stack", "train"}, {"password", "s3cret"}});
  old1.computed = {{"serial", "BMC-0001"}};
  Resource new1 = old1;
  new1.attributes["stack"] = "infer";
  ResourceChange replace{old1.address, old1.type, Action::Replace,
                         {{"stack", Json("train"), Json("infer"), true, false}}, old1, new1};
  Resource gone = node(2, {{"gpu", "A100"}});
  ResourceChange remove{gone.address, gone.type, Action::Delete,
                        {{"gpu", Json("A100"), std::nullopt, false, false}}, gone, std::nullopt};
  Resource same = node(3, {{"gpu", "H100-80GB"}, {"nothing", nullptr}});
  ResourceChange noop{same.address, same.type, Action::NoOp, {}, same, same};
  p.changes = {create, replace, remove, noop};
  return p;
}

/// Blueprint and policy files on disk, and a state at lineage L / serial 5.
struct Inputs {
  TempDir tmp;
  std::string bp_a, bp_b, policy;
  state::StateDocument state;
  std::string location = "prod.state.json";
  Inputs() {
    bp_a = tmp.write("blueprints/a.yaml", "apiVersion: plinth/v1\n");
    bp_b = tmp.write("blueprints/b.yaml", "kind: Blueprint\n");
    policy = tmp.write("policies/enc.lua", "policy { id = 'ENC-001' }\n");
    state.lineage = "6d3c1f9e-8a1b-4c7d-9e2f-0a1b2c3d4e5f";
    state.serial = 5;
  }
  Bindings bindings(const std::string& commit = "3f2a9c1d0b7e4f6a8c9d0e1f2a3b4c5d6e7f8091", bool dirty = false) const {
    auto b = make_bindings({bp_a, bp_b}, {policy}, {location, true, state}, commit, dirty);
    REQUIRE(b.ok());
    return b.value();
  }
  PlanFile planfile() const { return make_planfile(sample_plan(), bindings()); }
};

std::string pem(EVP_PKEY* key, bool private_key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  int ok = private_key ? PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr)
                       : PEM_write_bio_PUBKEY(bio.get(), key);
  REQUIRE(ok == 1);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

/// A fresh Ed25519 key pair made with EVP_PKEY_keygen: (private PEM, public PEM).
std::pair<std::string, std::string> ed25519_pair() {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr),
                                                                   &EVP_PKEY_CTX_free);
  REQUIRE(EVP_PKEY_keygen_init(ctx.get()) == 1);
  EVP_PKEY* raw = nullptr;
  REQUIRE(EVP_PKEY_keygen(ctx.get(), &raw) == 1);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(raw, &EVP_PKEY_free);
  return {pem(key.get(), true), pem(key.get(), false)};
}

PlanKey key_from(const std::string& content, const std::string& name = "test.key") {
  auto k = PlanKey::parse(content, name);
  INFO((k.ok() ? "" : k.error().message));
  REQUIRE(k.ok());
  return std::move(k.value());
}

std::string verify_error(const PlanFile& pf, const Bindings& now) {
  Status st = verify(pf, now);
  REQUIRE_FALSE(st.ok());
  return st.error().message;
}

std::string parse_error(const std::string& text, const PlanKey* key = nullptr) {
  auto r = parse_planfile(text, "plan.out", key);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

const std::string kHmacSecret = "4f1c2a7e9b3d5f608192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8";

}  // namespace

TEST_CASE("a plan file round-trips every field of the plan and its bindings") {
  Inputs in;
  PlanFile pf = in.planfile();
  CHECK(pf.bindings.blueprints == std::map<std::string, std::string>{
                                      {in.bp_a, sha256_hex("apiVersion: plinth/v1\n")},
                                      {in.bp_b, sha256_hex("kind: Blueprint\n")}});
  CHECK(pf.bindings.policies.at(in.policy) == sha256_hex("policy { id = 'ENC-001' }\n"));
  CHECK(pf.bindings.plinth_version == PLINTH_VERSION);
  CHECK(pf.created_at.size() == 20);
  CHECK(pf.created_at.back() == 'Z');

  auto text = to_text(pf);
  REQUIRE(text.ok());
  auto back = parse_planfile(*text, "plan.out");
  REQUIRE(back.ok());
  CHECK(*back == pf);
  CHECK(back->plan.changes[3].after->attributes["nothing"].is_null());
  CHECK_FALSE(back->plan.changes[0].changes[0].before.has_value());

  Json j = Json::parse(*text);
  CHECK(j["format"] == "plinth-plan");
  CHECK(j["format_version"] == 2);
  CHECK(j["bindings"]["state"] ==
        Json{{"location", "prod.state.json"}, {"existed", true}, {"lineage", in.state.lineage}, {"serial", 5}});
  CHECK(j["plan"]["summary"] == Json{{"create", 1}, {"update", 0}, {"replace", 1}, {"delete", 1}, {"no_op", 1}});
  CHECK(j["plan"]["resource_changes"][1]["action"] == "replace");
  CHECK_FALSE(j.contains("signature"));
}

TEST_CASE("a plan file is its canonical JSON, written without a tree of the whole plan") {
  // to_text writes one resource change at a time; the bytes must be what
  // nlohmann's dump of the whole document prints, or signatures made over
  // them would not verify against the document read back.
  Inputs in;
  PlanFile pf = in.planfile();
  ResourceChange odd = pf.plan.changes[0];
  odd.address = "baremetal.node.train-a[4]";
  odd.reasons = {"replace requested: \"quoted\"\n\u00e9t\u00e9 \u2014 \U0001F680"};
  odd.deposed = true;
  odd.action = Action::Replace;
  odd.replace_requested = true;
  odd.changes.push_back({"bios.SriovEnable", Json("Disabled"), Json(nullptr), true, true});
  odd.changes.push_back({"tags", Json::array({1, 2.5, "x"}), std::nullopt, false, true});
  Resource before = *odd.after;
  before.source = SourceLoc{};
  before.depends_on = {"a", "b\u00e9"};
  odd.before = before;
  Resource r = *odd.after;
  r.attributes["note"] = "caf\u00e9 \t tab \\ back\u0001";
  r.attributes["big"] = 18446744073709551615ULL;
  r.attributes["neg"] = -42;
  r.attributes["tiny"] = 1e-300;
  odd.after = r;
  pf.plan.changes.push_back(odd);
  pf.plan.changes.push_back(ResourceChange{"net.vlan.empty", "net.vlan", Action::NoOp, {}, std::nullopt, std::nullopt});
  auto canonical = [](const std::string& text) { return Json::parse(text).dump() + "\n"; };

  std::string unsigned_text = to_text(pf).value();
  CHECK(unsigned_text == canonical(unsigned_text));
  // The changes written field by field are the plan's wire format (to_json).
  CHECK(Json::parse(unsigned_text)["plan"].dump() == Json(pf.plan).dump());
  auto [priv_pem, pub_pem] = ed25519_pair();
  PlanKey priv = key_from(priv_pem), pub = key_from(pub_pem), hmac = key_from(kHmacSecret);
  for (const PlanKey* key : {&priv, &hmac}) {
    std::string text = to_text(pf, key).value();
    CHECK(text == canonical(text));
    auto back = parse_planfile(text, "plan.out", key == &priv ? &pub : key);
    REQUIRE(back.ok());
    CHECK(back->plan == pf.plan);
    // A plan read back and written again keeps its signature, byte for byte.
    CHECK(to_text(*back).value() == text);
  }
  PlanFile empty = make_planfile(Plan{}, in.bindings());
  std::string text = to_text(empty).value();
  CHECK(text == canonical(text));
  CHECK(parse_planfile(text, "plan.out").value() == empty);
}

TEST_CASE("a large plan file is read in pieces: the same plan, the same signatures, the same errors") {
  // From 256 KiB the resource changes are read a piece at a time; whatever
  // the pieces cannot read is read whole, so every answer is the whole's.
  Inputs in;
  PlanFile pf = in.planfile();
  const std::vector<ResourceChange> sample = pf.plan.changes;
  pf.plan.changes.clear();
  for (int n = 0; n < 400; ++n)
    for (ResourceChange rc : sample) {
      rc.address += "#" + std::to_string(n);
      pf.plan.changes.push_back(std::move(rc));
    }
  std::string text = to_text(pf).value();
  REQUIRE(text.size() > (512u << 10));
  auto back = parse_planfile(text, "plan.out");
  REQUIRE(back.ok());
  CHECK(*back == pf);
  std::string path = in.tmp.path() + "/big.out";
  REQUIRE(write_planfile(path, pf).ok());
  CHECK(read_planfile(path).value() == pf);
  // Re-indented, keys in another order: the same plan.
  Json j = Json::parse(text);
  CHECK(parse_planfile(j.dump(2), "plan.out").value() == pf);

  auto [priv_pem, pub_pem] = ed25519_pair();
  PlanKey priv = key_from(priv_pem), pub = key_from(pub_pem), hmac = key_from(kHmacSecret);
  for (const PlanKey* key : {&priv, &hmac}) {
    const PlanKey* verify = key == &priv ? &pub : key;
    std::string signed_text = to_text(pf, key).value();
    auto read = parse_planfile(signed_text, "plan.out", verify);
    REQUIRE(read.ok());
    CHECK(read->plan == pf.plan);
    CHECK(parse_planfile(Json::parse(signed_text).dump(1), "plan.out", verify).ok());
    // Altered in a middle piece, or in the last one.
    std::string middle = signed_text;
    const size_t at = middle.find("\"stack\":\"infer\"", middle.size() / 2);
    REQUIRE(at != std::string::npos);
    middle.replace(at, 15, "\"stack\":\"train\"");
    CHECK(parse_error(middle, verify) ==
          "plan file plan.out does not match its signature: it was altered after it was signed; refusing to apply it");
    CHECK(parse_planfile(middle, "plan.out").ok());
    std::string summary = replace_once(signed_text, "\"no_op\":400", "\"no_op\":401");
    CHECK(parse_error(summary, verify) ==
          "plan file plan.out does not match its signature: it was altered after it was signed; refusing to apply it");
    PlanKey other = key_from(ed25519_pair().second);
    if (key == &priv)
      CHECK(parse_error(signed_text, &other) == "plan file plan.out was signed with key " + pub.id() +
                                                    " but the verification key is " + other.id() +
                                                    "; the signature does not verify");
  }
  CHECK(parse_error(text, &pub) == "plan file plan.out is not signed, and --verify-key requires a signed plan; make "
                                   "it with plinth plan -out FILE --sign-key KEY");

  // Damage is named as when the file is read whole: the change's index, the truncation.
  Json damaged = j;
  damaged["plan"]["resource_changes"][1001]["action"] = "rebuild";
  CHECK(parse_error(damaged.dump()) ==
        "plan file plan.out is damaged: in 'plan', resource_changes[1001]: 'action' is 'rebuild', not one of no-op, "
        "create, update, replace, delete; make a new one with plinth plan -out");
  CHECK(parse_error(text.substr(0, text.size() - 40)) ==
        "plan file plan.out ends early (truncated at byte " + std::to_string(text.size() - 40) +
            "); make a new one with plinth plan -out");
  std::string doubled = replace_once(text, "\"format_version\":2", "\"format_version\":2,\"format\":\"plinth-plan\"");
  CHECK(parse_planfile(doubled, "plan.out").value() == pf);  // read whole: nlohmann keeps the last of a repeated key
  std::string version = replace_once(text, "\"format_version\":2", "\"format_version\":3");
  CHECK(parse_error(version).find("has format_version 3") != std::string::npos);
  CHECK_FALSE(detail::read_in_pieces(version, nullptr, 4096));
  CHECK_FALSE(detail::read_in_pieces(damaged.dump(), nullptr, 4096));
}

TEST_CASE("pieces of any size read the plan file the whole reads") {
  Inputs in;
  PlanFile pf = in.planfile();
  PlanKey hmac = key_from(kHmacSecret);
  const std::string plain = to_text(pf).value(), signed_text = to_text(pf, &hmac).value();
  for (size_t piece : {1, 40, 300, 1000, 100000}) {
    INFO("pieces of " << piece << " bytes");
    auto read = detail::read_in_pieces(plain, nullptr, piece);
    REQUIRE(read);
    CHECK(*read == pf);
    auto verified = detail::read_in_pieces(signed_text, &hmac, piece);
    REQUIRE(verified);
    CHECK(verified->plan == pf.plan);
    CHECK_FALSE(detail::read_in_pieces(replace_once(signed_text, "\"gpu\":\"A100\"", "\"gpu\":\"B200\""), &hmac, piece));
    CHECK_FALSE(detail::read_in_pieces(plain, &hmac, piece));  // not signed
    CHECK_FALSE(detail::read_in_pieces(plain.substr(0, plain.size() - 3), nullptr, piece));
  }
}

TEST_CASE("write_planfile writes atomically with mode 0600 and read_planfile reads it back") {
  Inputs in;
  PlanFile pf = in.planfile();
  std::string path = in.tmp.path() + "/plan.out";
  REQUIRE(write_planfile(path, pf).ok());
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto back = read_planfile(path);
  REQUIRE(back.ok());
  CHECK(*back == pf);
  // Unsigned, it is written as it is made; signed, from the whole text: to_text's bytes both ways.
  CHECK(test::slurp(path) == to_text(pf).value());
  PlanKey hmac = key_from(kHmacSecret);
  REQUIRE(write_planfile(path, pf, &hmac).ok());
  CHECK(test::slurp(path) == to_text(pf, &hmac).value());
  // A value that is not UTF-8: refused, and the file as it was.
  PlanFile bad = pf;
  Resource r = *bad.plan.changes[0].after;
  r.attributes["note"] = std::string("\xff\xfe");
  bad.plan.changes[0].after = r;
  const std::string kept = test::slurp(path);
  auto refused = write_planfile(path, bad);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("cannot write the plan as JSON") == 0);
  CHECK(test::slurp(path) == kept);
  for (const auto& e : std::filesystem::directory_iterator(in.tmp.path()))
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);  // no temporary left

  auto missing = read_planfile(in.tmp.path() + "/nope.plan");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "cannot read " + in.tmp.path() + "/nope.plan: No such file or directory");
}

TEST_CASE("verify accepts unchanged bindings") {
  Inputs in;
  PlanFile pf = in.planfile();
  CHECK(verify(pf, in.bindings()).ok());
}

TEST_CASE("verify names each binding that changed") {
  Inputs in;
  PlanFile pf = in.planfile();

  SECTION("a blueprint file edited") {
    in.tmp.write("blueprints/b.yaml", "kind: Blueprint\nmetadata: {name: x}\n");
    CHECK(verify_error(pf, in.bindings()) ==
          "blueprint " + in.bp_b + " changed since the plan was made (sha256 " +
              sha256_hex("kind: Blueprint\n").substr(0, 12) + "… → " +
              sha256_hex("kind: Blueprint\nmetadata: {name: x}\n").substr(0, 12) + "…); run plinth plan again");
  }
  SECTION("a blueprint file added or dropped") {
    std::string c = in.tmp.write("blueprints/c.yaml", "x\n");
    auto now = make_bindings({in.bp_a, c}, {in.policy}, {in.location, true, in.state}, pf.bindings.git_commit, false);
    REQUIRE(now.ok());
    CHECK(verify_error(pf, *now) == "blueprint " + in.bp_b + " was part of the plan but is not used now; blueprint " +
                                        c + " was added since the plan was made; run plinth plan again");
  }
  SECTION("a policy file edited") {
    in.tmp.write("policies/enc.lua", "policy { id = 'ENC-002' }\n");
    CHECK(verify_error(pf, in.bindings()) ==
          "policy " + in.policy + " changed since the plan was made (sha256 " +
              sha256_hex("policy { id = 'ENC-001' }\n").substr(0, 12) + "… → " +
              sha256_hex("policy { id = 'ENC-002' }\n").substr(0, 12) + "…); run plinth plan again");
  }
  SECTION("the state serial moved on") {
    in.state.serial = 7;
    CHECK(verify_error(pf, in.bindings()) ==
          "state serial is 7 but the plan was made at serial 5 (the state changed since, or this plan was already "
          "applied); run plinth plan again");
  }
  SECTION("a state at another location") {
    in.location = "staging.state.json";
    CHECK(verify_error(pf, in.bindings()) ==
          "the plan was made against the state prod.state.json, not staging.state.json (pass --state "
          "prod.state.json); run plinth plan again");
  }
  SECTION("the state it was made against is gone") {
    auto now = make_bindings({in.bp_a, in.bp_b}, {in.policy}, {in.location, false, in.state}, pf.bindings.git_commit,
                             false);
    REQUIRE(now.ok());
    CHECK(verify_error(pf, *now) ==
          "the plan was made against the state at prod.state.json (serial 5), and there is no state there now; run "
          "plinth plan again");
  }
  SECTION("another state") {
    in.state.lineage = "00000000-1111-4222-8333-444444444444";
    CHECK(verify_error(pf, in.bindings()) ==
          "the state has lineage 00000000-1111-4222-8333-444444444444 but the plan was made against lineage "
          "6d3c1f9e-8a1b-4c7d-9e2f-0a1b2c3d4e5f (a different state); run plinth plan again");
  }
  SECTION("another git commit carrying the same files (a merge commit, a squash) is no change") {
    CHECK(verify(pf, in.bindings("aaaabbbbccccddddeeeeffff0000111122223333")).ok());
    CHECK(verify(pf, in.bindings(pf.bindings.git_commit, true)).ok());  // apply refuses dirty files itself
  }
  SECTION("another plinth version") {
    pf.bindings.plinth_version = "0.0.9";
    CHECK(verify_error(pf, in.bindings()) == "the plan was made by plinth 0.0.9 but this is plinth " +
                                           std::string(PLINTH_VERSION) + "; run plinth plan again");
  }
  SECTION("several at once, in a fixed order") {
    in.state.serial = 6;
    in.tmp.write("blueprints/a.yaml", "changed\n");
    std::string msg = verify_error(pf, in.bindings("", false));
    CHECK(msg.rfind("state serial is 6 but the plan was made at serial 5", 0) == 0);
    CHECK(msg.find("; blueprint " + in.bp_a + " changed since the plan was made") != std::string::npos);
    CHECK(msg.find("git commit") == std::string::npos);
    CHECK(msg.substr(msg.size() - 23) == "; run plinth plan again");
  }
}

TEST_CASE("a plan made against an empty state applies once and is refused the second time") {
  Inputs in;
  std::string state_path = in.tmp.path() + "/plinth.state.json";
  auto backend = state::open_local(state_path);
  auto stored = backend->load();
  REQUIRE(stored.ok());
  REQUIRE_FALSE(stored->has_value());

  // plan: no state yet, so the plan starts a lineage of its own.
  state::StateDocument fresh = state::new_document();
  REQUIRE_FALSE(fresh.lineage.empty());
  auto planned = make_bindings({in.bp_a}, {}, {state_path, false, fresh}, "", false);
  REQUIRE(planned.ok());
  PlanFile pf = make_planfile(sample_plan(), *planned);
  CHECK(pf.bindings.state_lineage == fresh.lineage);
  CHECK(pf.bindings.state_serial == 0);

  // first apply: still no state; it starts from the plan's lineage.
  state::StateDocument start = starting_state(pf, *stored);
  CHECK(start.lineage == fresh.lineage);
  CHECK(start.serial == 0);
  auto now = make_bindings({in.bp_a}, {}, {state_path, false, start}, "", false);
  REQUIRE(now.ok());
  REQUIRE(verify(pf, *now).ok());
  start.serial += 1;
  REQUIRE(backend->save(start).ok());

  // second apply of the same file: the stored state has moved on.
  auto again = backend->load();
  REQUIRE(again.ok());
  REQUIRE(again->has_value());
  state::StateDocument second = starting_state(pf, *again);
  CHECK(second.serial == 1);
  auto then = make_bindings({in.bp_a}, {}, {state_path, true, second}, "", false);
  REQUIRE(then.ok());
  CHECK(verify_error(pf, *then) ==
        "the plan was made when there was no state at " + state_path +
            ", and there is one now (this plan was already applied, or another run created it); run plinth plan "
            "again");

  // Nor to another state location that has no state yet either.
  auto elsewhere = make_bindings({in.bp_a}, {}, {in.tmp.path() + "/other.state.json", false, start}, "", false);
  REQUIRE(elsewhere.ok());
  CHECK(verify_error(pf, *elsewhere) == "the plan was made against the state " + state_path + ", not " +
                                            in.tmp.path() + "/other.state.json (pass --state " + state_path +
                                            "); run plinth plan again");
}

TEST_CASE("make_bindings names a file it cannot read") {
  Inputs in;
  auto b = make_bindings({in.bp_a, in.tmp.path() + "/missing.yaml"}, {}, {in.location, true, in.state}, "", false);
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().message == "cannot read " + in.tmp.path() + "/missing.yaml: No such file or directory");
}

TEST_CASE("damaged plan files are refused with the reason") {
  Inputs in;
  std::string text = to_text(in.planfile()).value();

  CHECK(parse_error(text.substr(0, text.size() / 2)) ==
        "plan file plan.out ends early (truncated at byte " + std::to_string(text.size() / 2) +
            "); make a new one with plinth plan -out");
  CHECK(parse_error("") == "plan file plan.out is empty; make a new one with plinth plan -out");
  CHECK(parse_error("{\"format\": \"plinth-plan\",, }") ==
        "plan file plan.out is not valid JSON (error at byte 26); make a new one with plinth plan -out");
  CHECK(parse_error(replace_once(text, "\"format_version\":2", "\"format_version\":1")) ==
        "plan file plan.out has format_version 1, but plinth " + std::string(PLINTH_VERSION) +
            " reads format_version 2; apply it with the plinth version that made it, or make a new plan with "
            "plinth plan -out");
  CHECK(parse_error(state::to_json_text(in.state)) ==
        "plan.out is not a plinth plan file (no \"format\": \"plinth-plan\")");
  // A number too large for a double is nlohmann's out_of_range.406, not a
  // parse_error: it used to escape parse_planfile and abort the process.
  CHECK(parse_error(replace_once(text, "\"serial\":5", "\"serial\": 1e400")) ==
        "plan file plan.out is not valid JSON ([json.exception.out_of_range.406] number overflow parsing '1e400'); "
        "make a new one with plinth plan -out");
  CHECK(parse_error(replace_once(text, "\"serial\":5", "\"serial\": \"5\"")) ==
        "plan file plan.out is damaged: 'bindings.state.serial' is not a non-negative integer; make a new one with "
        "plinth plan -out");
  CHECK(parse_error(replace_once(text, "\"action\":\"replace\"", "\"action\": \"rebuild\"")) ==
        "plan file plan.out is damaged: in 'plan', resource_changes[1]: 'action' is 'rebuild', not one of no-op, "
        "create, update, replace, delete; make a new one with plinth plan -out");
  Json j = Json::parse(text);
  j["plan"]["resource_changes"][0]["after"].erase("provider");
  CHECK(parse_error(j.dump()) ==
        "plan file plan.out is damaged: in 'plan', resource_changes[0]: after: 'provider' is missing; make a new "
        "one with plinth plan -out");
}

TEST_CASE("an Ed25519-signed plan verifies with its public or private key and survives reformatting") {
  Inputs in;
  auto [priv_pem, pub_pem] = ed25519_pair();
  PlanKey priv = key_from(priv_pem), pub = key_from(pub_pem, "test.pub");
  CHECK(priv.kind() == PlanKey::Kind::Ed25519Private);
  CHECK(pub.kind() == PlanKey::Kind::Ed25519Public);
  CHECK(priv.id() == pub.id());
  CHECK(priv.id().size() == 16);

  PlanFile pf = in.planfile();
  std::string text = to_text(pf, &priv).value();
  Json j = Json::parse(text);
  CHECK(j["signature"]["algorithm"] == "ed25519");
  CHECK(j["signature"]["key_id"] == priv.id());
  CHECK(j["signature"]["value"].get<std::string>().size() == 128);

  auto checked = parse_planfile(text, "plan.out", &pub);
  REQUIRE(checked.ok());
  CHECK(checked->plan == pf.plan);
  CHECK(checked->bindings == pf.bindings);
  REQUIRE(checked->signature);
  CHECK(parse_planfile(text, "plan.out", &priv).ok());
  CHECK(parse_planfile(j.dump(), "plan.out", &pub).ok());     // whitespace does not matter
  CHECK(parse_planfile(j.dump(8), "plan.out", &pub).ok());
  CHECK(parse_planfile(to_text(*checked).value(), "plan.out", &pub).ok());  // re-saved with its signature

  auto cannot = PlanKey::parse(pub_pem, "plan.pub").value().sign("x");
  REQUIRE_FALSE(cannot.ok());
  CHECK(cannot.error().message ==
        "an Ed25519 public key cannot sign; give the private key (plan.key) to --sign-key and the public key "
        "(plan.pub) to --verify-key");
}

TEST_CASE("a signed plan that was altered, signed by another key or not signed is refused") {
  Inputs in;
  auto [priv_pem, pub_pem] = ed25519_pair();
  PlanKey priv = key_from(priv_pem), pub = key_from(pub_pem);
  std::string text = to_text(in.planfile(), &priv).value();

  SECTION("altered content") {
    std::string tampered = replace_once(text, "\"gpu\":\"A100\"", "\"gpu\": \"B200\"");
    CHECK(parse_error(tampered, &pub) ==
          "plan file plan.out does not match its signature: it was altered after it was signed; refusing to apply it");
    CHECK(parse_planfile(tampered, "plan.out").ok());  // without --verify-key nothing is checked
  }
  SECTION("altered bindings") {
    std::string tampered = replace_once(text, "\"serial\":5", "\"serial\": 6");
    CHECK(parse_error(tampered, &pub) ==
          "plan file plan.out does not match its signature: it was altered after it was signed; refusing to apply it");
  }
  SECTION("another key") {
    PlanKey other = key_from(ed25519_pair().second);
    CHECK(parse_error(text, &other) == "plan file plan.out was signed with key " + pub.id() +
                                           " but the verification key is " + other.id() +
                                           "; the signature does not verify");
  }
  SECTION("another kind of key") {
    PlanKey hmac = key_from(kHmacSecret);
    CHECK(parse_error(text, &hmac) ==
          "plan file plan.out is signed with ed25519 but the verification key is hmac-sha256; use the matching key");
  }
  SECTION("unsigned") {
    CHECK(parse_error(to_text(in.planfile()).value(), &pub) ==
          "plan file plan.out is not signed, and --verify-key requires a signed plan; make it with plinth plan -out "
          "FILE --sign-key KEY");
  }
  SECTION("the key id shown by plinth show, altered") {
    Json j = Json::parse(text);
    j["signature"]["key_id"] = "0123456789abcdef";
    CHECK(parse_error(j.dump(), &pub) == "plan file plan.out was signed with key 0123456789abcdef but the "
                                         "verification key is " + pub.id() + "; the signature does not verify");
    j["signature"]["key_id"] = pub.id();  // put back: it verifies again
    CHECK(parse_planfile(j.dump(), "plan.out", &pub).ok());
  }
  SECTION("the state location, altered") {
    std::string tampered = replace_once(text, "\"location\":\"prod.state.json\"", "\"location\": \"x.json\"");
    REQUIRE(tampered != text);
    CHECK(parse_error(tampered, &pub) ==
          "plan file plan.out does not match its signature: it was altered after it was signed; refusing to apply it");
  }
  SECTION("a forged signature value") {
    Json j = Json::parse(text);
    j["signature"]["value"] = "zz";
    CHECK(parse_error(j.dump(), &pub) ==
          "plan file plan.out does not match its signature: it was altered after it was signed; refusing to apply it");
  }
}

TEST_CASE("an HMAC-SHA256-signed plan verifies with the same secret only") {
  Inputs in;
  PlanKey key = key_from(kHmacSecret + "\n");
  CHECK(key.kind() == PlanKey::Kind::Hmac);
  CHECK(key.algorithm() == "hmac-sha256");
  std::string text = to_text(in.planfile(), &key).value();
  CHECK(Json::parse(text)["signature"]["value"].get<std::string>().size() == 64);
  CHECK(parse_planfile(text, "plan.out", &key).ok());

  PlanKey other = key_from(std::string(kHmacSecret).replace(0, 1, "5"));
  CHECK(parse_error(text, &other) == "plan file plan.out was signed with key " + key.id() +
                                         " but the verification key is " + other.id() +
                                         "; the signature does not verify");
  CHECK(parse_error(replace_once(text, "H100-80GB", "H200-141GB"), &key) ==
        "plan file plan.out does not match its signature: it was altered after it was signed; refusing to apply it");
}

TEST_CASE("key files that are not plan keys are refused with what is accepted") {
  const std::string accepted =
      "; plan keys are an Ed25519 PEM key (openssl genpkey -algorithm ed25519 -out plan.key, and openssl pkey -in "
      "plan.key -pubout -out plan.pub) or an HMAC secret (openssl rand -hex 32 > plan.hmac)";
  auto short_secret = PlanKey::parse("tooshort\n", "plan.hmac");
  REQUIRE_FALSE(short_secret.ok());
  CHECK(short_secret.error().message == "HMAC key file plan.hmac holds 8 byte(s); a plan HMAC secret needs at least 32" + accepted);
  auto empty = PlanKey::parse("", "plan.hmac");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message == "HMAC key file plan.hmac holds 0 byte(s); a plan HMAC secret needs at least 32" + accepted);
  auto junk = PlanKey::parse("-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n", "x.pem");
  REQUIRE_FALSE(junk.ok());
  CHECK(junk.error().message == "key file x.pem is PEM but not a private or public key OpenSSL can read" + accepted);
  auto missing = PlanKey::load("/nonexistent/plan.key");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "cannot read /nonexistent/plan.key: No such file or directory");
}

TEST_CASE("keys made by the openssl command line work") {
  TempDir tmp;
  auto run = [&](std::vector<std::string> argv) {
    auto r = test::run_program(argv, tmp.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  run({"openssl", "genpkey", "-algorithm", "ed25519", "-out", "plan.key"});
  run({"openssl", "pkey", "-in", "plan.key", "-pubout", "-out", "plan.pub"});
  test::run_program({"sh", "-c", "openssl rand -hex 32 > plan.hmac"}, tmp.path());
  run({"openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.key"});
  run({"openssl", "genpkey", "-algorithm", "ed25519", "-aes-256-cbc", "-pass", "pass:secret", "-out", "enc.key"});

  auto sign = PlanKey::load(tmp.path() + "/plan.key");
  auto check = PlanKey::load(tmp.path() + "/plan.pub");
  auto hmac = PlanKey::load(tmp.path() + "/plan.hmac");
  REQUIRE(sign.ok());
  REQUIRE(check.ok());
  REQUIRE(hmac.ok());
  CHECK(sign->kind() == PlanKey::Kind::Ed25519Private);
  CHECK(check->kind() == PlanKey::Kind::Ed25519Public);
  CHECK(hmac->kind() == PlanKey::Kind::Hmac);

  Inputs in;
  std::string path = tmp.path() + "/signed.plan";
  REQUIRE(write_planfile(path, in.planfile(), &sign.value()).ok());
  CHECK(read_planfile(path, &check.value()).ok());
  REQUIRE(write_planfile(path, in.planfile(), &hmac.value()).ok());
  CHECK(read_planfile(path, &hmac.value()).ok());

  // A signature made by OpenSSL itself over the signed bytes verifies too.
  Json doc = Json::parse(test::slurp(path));
  doc["signature"].erase("value");  // the signature covers its algorithm and key id
  tmp.write("payload", doc.dump());
  run({"openssl", "pkeyutl", "-sign", "-inkey", "plan.key", "-rawin", "-in", "payload", "-out", "payload.sig"});
  std::string sig = test::slurp(tmp.path() + "/payload.sig");
  std::string hex;
  for (unsigned char c : sig) {
    static const char* d = "0123456789abcdef";
    hex += d[c >> 4];
    hex += d[c & 0xf];
  }
  CHECK(check->verify(doc.dump(), hex));

  auto ec = PlanKey::load(tmp.path() + "/ec.key");
  REQUIRE_FALSE(ec.ok());
  CHECK(ec.error().message.rfind("key file " + tmp.path() + "/ec.key holds a key of type EC, not Ed25519;", 0) == 0);
  auto enc = PlanKey::load(tmp.path() + "/enc.key");
  REQUIRE_FALSE(enc.ok());
  CHECK(enc.error().message.rfind("key file " + tmp.path() + "/enc.key is encrypted; plan keys must be unencrypted PEM;", 0) == 0);
}

TEST_CASE("a plan binds the state's location as resolved, normalised and without its password") {
  CHECK(bound_location("./states/../prod.state.json") == "prod.state.json");
  CHECK(bound_location("/srv/plinth//prod.state.json") == "/srv/plinth/prod.state.json");
  // A database: server, database and workspace; not the role or the password.
  CHECK(bound_location("postgres://plinth:s3cret@db.example:5432/infra?sslmode=require&workspace=prod") ==
        "postgres://db.example:5432/infra?workspace=prod");
  CHECK(bound_location("postgresql://plinth_ro@db.example/infra?workspace=prod") ==
        "postgresql://db.example/infra?workspace=prod");
  CHECK(bound_location("postgres://db.example/infra") == "postgres://db.example/infra");
}

}  // namespace plinth::test::plan_planfile
