// Encrypted state (docs/state.md, "Encryption") and secrets that never leave
// the process: distinctive values for every credential source are set, and
// every output and file a run produces is searched for them.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/provider/registry.h"
#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/postgres.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"

namespace plinth::test::e2e_secrets {

namespace fs = std::filesystem;

namespace {

/// A pool `name` of `count` nodes on the emulator at `endpoint`, logging in with `credentials`.
std::string secrets_pool(const std::string& name, int count, const std::string& endpoint,
                         const std::string& credentials, const std::string& ca) {
  return baremetal_pool({.name = name,
                         .count = count,
                         .role = "inference",
                         .endpoints = bmc_endpoints(endpoint),
                         .ca = ca,
                         .credentials = credentials});
}

std::string secrets_blueprint(const std::string& pools) { return baremetal_blueprint("secrets", pools); }

/// `bmcs` emulated servers whose BMCs take `password`, powering on at once.
std::vector<std::string> bmcs_with_password(int bmcs, const std::string& password) {
  return h100_emulator_args(bmcs, {"--power-delay-ms", "0", "--password", password});
}

constexpr const char* kKeyHex = "8f3a0c6e5b1d47a29e6c3f0b7d2a5e8c1f4b7a0d3e6c9f2b5a8d1e4c7f0a3b6d";
constexpr const char* kOtherKeyHex = "0000000000000000000000000000000000000000000000000000000000000001";

/// Every file under `dir`, with its text.
std::map<std::string, std::string> files_under(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = slurp(e.path().string());
  return out;
}

std::string write_private(const TempDir& dir, const std::string& name, const std::string& text) {
  std::string p = dir.write(name, text);
  ::chmod(p.c_str(), 0600);
  return p;
}

}  // namespace

TEST_CASE("state rekey re-encrypts every kept version: afterwards the old key opens nothing, the new one everything, "
          "and the history keeps its serials and times",
          "[e2e][encryption]") {
  Emulator emu(bmcs_with_password(3, "admin"));
  TempDir dir;
  std::string st = dir.path() + "/plinth.state.json";
  SECTION("local file") {}
  SECTION("PostgreSQL") { st = test::postgres_workspace_url("rekey-history"); }
  const std::string bp = dir.write("bp.yaml", secrets_blueprint(secrets_pool("enc", 3, emu.base(), "env:BMC_CREDENTIALS", emu.ca())));
  const std::map<std::string, std::string> old_key = {{"BMC_CREDENTIALS", "admin:admin"},
                                                      {"PLINTH_STATE_KEY", kKeyHex}};
  auto r = run_plinth({"apply", bp, "--state", st, "--auto-approve", "--parallelism", "1"}, "", old_key);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // "  SERIAL  SAVED (UTC)  RESOURCES  [(current)]" lines, by serial, without the marks.
  auto history = [&] {
    auto h = run_plinth({"state", "history", "--state", st}, "", old_key);
    INFO(h.err);
    REQUIRE(h.exit_code == 0);
    std::map<uint64_t, std::string> out;
    std::istringstream lines(h.out);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      uint64_t serial = 0;
      std::string saved, count;
      if (words >> serial >> saved >> count) out[serial] = saved + " " + count;
    }
    return out;
  };
  const auto before = history();
  REQUIRE(before.size() >= 3);

  const std::string key2 = write_private(dir, "new.key", "q3Zr0cNqV7mBq3wq3yJ4m3b0mF1s2c3d4e5f6g7h8i0=\n");
  r = run_plinth({"state", "rekey", "--state", st, "--new-key-file", key2}, "", old_key);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Re-encrypted " + std::to_string(before.size()) + " kept version(s) with key ") !=
        std::string::npos);
  // The same versions at the same times, plus the rekey's own.
  auto after = history();
  CHECK(after.size() == before.size() + 1);
  after.erase(after.rbegin()->first);
  CHECK(after == before);

  // Every kept version, restored, opens with the new key and not with the old one.
  auto new_key = old_key;
  new_key.erase("PLINTH_STATE_KEY");
  new_key["PLINTH_STATE_KEY_FILE"] = key2;
  int sealed = 0;
  for (const auto& [serial, what] : before) {
    r = run_plinth({"state", "restore", std::to_string(serial), "--state", st}, "", new_key);
    INFO("restore " << serial << ": " << r.out << r.err);
    REQUIRE(r.exit_code == 0);
    r = run_plinth({"state", "list", "--state", st}, "", new_key);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    if (r.out.find("baremetal.node.enc") == std::string::npos) continue;  // nothing sensitive in it yet
    ++sealed;
    r = run_plinth({"state", "list", "--state", st}, "", old_key);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("it is encrypted with key ") != std::string::npos);
  }
  CHECK(sealed >= 2);
}

TEST_CASE("encrypted state: sensitive values sealed with AES-256-GCM, a missing or wrong key is an error naming the "
          "state and its key, never an empty state - rekey and whole-document encryption",
          "[e2e][encryption]") {
  Emulator emu(bmcs_with_password(3, "admin"));
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  const std::string bp = dir.write("bp.yaml", secrets_blueprint(secrets_pool("enc", 3, emu.base(), "env:BMC_CREDENTIALS", emu.ca())));
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"}, {"PLINTH_STATE_KEY", kKeyHex}};

  auto r = run_plinth({"apply", bp, "--state", st, "--auto-approve"}, "", env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = slurp(st);
  // The reference is sealed; the rest of the state stays readable and checked.
  CHECK(text.find("env:BMC_CREDENTIALS") == std::string::npos);
  CHECK(text.find("\"plinth_encrypted\": \"aes-256-gcm:") != std::string::npos);
  CHECK(text.find("\"format_version\": 2") != std::string::npos);
  auto raw = state::parse(text, st);
  REQUIRE(raw.ok());
  CHECK(raw->resources.size() == 4);  // three nodes and the stack
  for (const auto& f : fs::directory_iterator(dir.path() + "/plinth.state.json.d/history"))
    CHECK(slurp(f.path().string()).find("env:BMC_CREDENTIALS") == std::string::npos);

  // With the key: a clean plan, and show hides the value as before.
  r = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);

  // Without it, or with another: an error naming the state and the key; no plan, file untouched.
  auto no_key = env;
  no_key.erase("PLINTH_STATE_KEY");
  r = run_plinth({"plan", bp, "--state", st}, "", no_key);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("to add") == std::string::npos);
  CHECK(r.err.find("state " + st + ": cannot decrypt baremetal.node.enc[0] attributes.bmc_credentials: it is "
                   "encrypted with key ") != std::string::npos);
  CHECK(r.err.find("no key was given; set PLINTH_STATE_KEY, PLINTH_STATE_KEY_FILE or pass --state-key-file FILE") !=
        std::string::npos);
  auto wrong = env;
  wrong["PLINTH_STATE_KEY"] = kOtherKeyHex;
  r = run_plinth({"apply", bp, "--state", st, "--auto-approve"}, "", wrong);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(", not with PLINTH_STATE_KEY (key ") != std::string::npos);
  r = run_plinth({"state", "list", "--state", st}, "", wrong);
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(slurp(st) == text);

  // A tampered value fails authentication (the checksum is recomputed to get past it).
  {
    auto doc = state::parse(text, st);
    REQUIRE(doc.ok());
    auto& v = doc->resources[1].attributes["bmc_credentials"]["plinth_encrypted"];
    std::string s = v.get<std::string>();
    s[s.size() - 5] = s[s.size() - 5] == 'A' ? 'B' : 'A';
    v = s;
    TempDir t;
    const std::string tampered = t.write("s.json", state::to_json_text(*doc));
    r = run_plinth({"state", "list", "--state", tampered}, "", env);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("fails AES-256-GCM authentication") != std::string::npos);
  }

  // rekey: the new key (a key file) reads it, the old one no longer does.
  const std::string key2 = write_private(dir, "new.key", "q3Zr0cNqV7mBq3wq3yJ4m3b0mF1s2c3d4e5f6g7h8i0=\n");
  r = run_plinth({"state", "rekey", "--state", st, "--new-key-file", key2}, "", env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("encrypted with key ") != std::string::npos);
  r = run_plinth({"plan", bp, "--state", st, "--state-key-file", key2, "--detailed-exitcode"}, "", no_key);
  CHECK(r.exit_code == 0);
  r = run_plinth({"state", "list", "--state", st}, "", env);
  CHECK(r.exit_code == 1);
  // A key file others can read is refused.
  ::chmod(key2.c_str(), 0644);
  r = run_plinth({"state", "list", "--state", st, "--state-key-file", key2}, "", no_key);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("can be read by other users; run 'chmod 600 " + key2) != std::string::npos);
  ::chmod(key2.c_str(), 0600);

  // The whole document: addresses and attributes sealed; a plan without the key stops.
  auto doc_env = no_key;
  doc_env["PLINTH_STATE_ENCRYPTION"] = "document";
  doc_env["PLINTH_STATE_KEY_FILE"] = key2;
  r = run_plinth({"state", "rekey", "--state", st, "--new-key-file", key2}, "", doc_env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string sealed = slurp(st);
  CHECK(sealed.find("baremetal.node.enc") == std::string::npos);
  CHECK(sealed.find("\"sealed\": \"aes-256-gcm:") != std::string::npos);
  // It stays sealed when saved again without PLINTH_STATE_ENCRYPTION.
  auto keyed = no_key;
  keyed["PLINTH_STATE_KEY_FILE"] = key2;
  r = run_plinth({"refresh", bp, "--state", st}, "", keyed);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(slurp(st).find("baremetal.node.enc") == std::string::npos);
  r = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", keyed);
  CHECK(r.exit_code == 0);
  r = run_plinth({"plan", bp, "--state", st}, "", no_key);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot decrypt its resources (the whole state is encrypted): it is encrypted with key ") !=
        std::string::npos);
  CHECK(r.out.find("to add") == std::string::npos);
  r = run_plinth({"state", "history", "--state", st}, "", no_key);
  CHECK(r.exit_code == 0);  // history needs no key
}

TEST_CASE("secrets never appear in plan text or JSON, plan files, state, reports, logs or errors, for every "
          "credential source",
          "[e2e][encryption][secrets]") {
  // Distinctive values, one per source.
  const std::string env_password = "Zq7-ENV-bmc-pw-4f1c9a";
  const std::string file_password = "Xk3-FILE-bmc-pw-8e2d7b";
  Emulator env_bmc(bmcs_with_password(2, env_password));
  Emulator file_bmc(bmcs_with_password(2, file_password));
  TempDir dir;
  const std::string cred_file = write_private(dir, "bmc.cred", "admin:" + file_password + "\n");
  const std::string bp = dir.write(
      "bp.yaml", secrets_blueprint(secrets_pool("envpool", 2, env_bmc.base(), "env:BMC_SECRET_CREDS", env_bmc.ca()) +
                                   secrets_pool("filepool", 2, file_bmc.base(), "file:" + cred_file, file_bmc.ca())));
  std::vector<std::string> secrets = {env_password, file_password, kKeyHex};
  // Every run at the trace level: each HTTP request is on stderr too (docs/logging.md).
  std::map<std::string, std::string> env = {{"BMC_SECRET_CREDS", "admin:" + env_password},
                                            {"PLINTH_STATE_KEY", kKeyHex},
                                            {"PLINTH_LOG", "trace"}};
  // Cloud credentials: the vendor variables and every option a provider
  // schema marks secret (none is declared by a built-in provider today).
  for (const auto& [name, value] : std::map<std::string, std::string>{
           {"AWS_ACCESS_KEY_ID", "AKIAZZSECRETPLINTH01"},
           {"AWS_SECRET_ACCESS_KEY", "wJalr-AWS-secret-9b7c5e3a1f"},
           {"AWS_SESSION_TOKEN", "FwoG-AWS-session-token-6d4b2"}}) {
    env[name] = value;
    secrets.push_back(value);
  }
  int n = 0;
  for (const ProviderSchema* p : schema_registry().providers())
    for (const auto& o : p->all_options()) {
      if (!o.secret) continue;
      std::string upper = p->name + "_" + o.name;
      for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      const std::string v = "Opt-secret-" + std::to_string(++n) + "-c0ffee";
      env["PLINTH_" + upper] = v;
      for (const auto& e : o.env) env[e] = v;
      secrets.push_back(v);
    }

  const std::string st = dir.path() + "/plinth.state.json";
  const std::string out_dir = dir.path() + "/out";
  fs::create_directories(out_dir);
  std::string outputs;  // every stdout and stderr
  auto run = [&](std::vector<std::string> args, int want) {
    auto r = run_plinth(args, dir.path(), env);
    INFO(args[0] << ": " << r.out << r.err);
    CHECK(r.exit_code == want);
    outputs += r.out + r.err;
  };
  run({"validate", bp}, 0);
  run({"plan", bp, "--state", st, "--report", "json:" + out_dir + "/plan.json", "--report",
       "sarif:" + out_dir + "/plan.sarif", "--report", "junit:" + out_dir + "/plan.xml", "--report",
       "markdown:" + out_dir + "/plan.md", "--report", "html:" + out_dir + "/plan.html"},
      0);
  run({"plan", bp, "--state", st, "--json"}, 0);
  run({"plan", bp, "--state", st, "-out", out_dir + "/saved.plan"}, 0);
  run({"apply", out_dir + "/saved.plan", "--state", st, "--auto-approve"}, 0);
  run({"plan", bp, "--state", st, "--json", "--detailed-exitcode"}, 0);
  run({"refresh", bp, "--state", st}, 0);
  run({"state", "show", "baremetal.node.filepool[1]", "--state", st}, 0);
  run({"state", "list", "--state", st}, 0);
  run({"audit", bp, "--state", st, "--output", out_dir + "/audit.json"}, 0);
  run({"audit", bp, "--state", st, "--format", "sarif"}, 0);
  // Failures quote their inputs: a wrong password is refused by the BMC.
  const auto good = env;
  env["BMC_SECRET_CREDS"] = "admin:" + env_password + "-but-wrong";
  secrets.push_back(env_password + "-but-wrong");
  run({"apply", bp, "--state", st, "--auto-approve"}, 1);
  env = good;
  run({"destroy", bp, "--state", st, "--auto-approve"}, 0);

  INFO("the run wrote " << outputs.size() << " bytes of output");
  REQUIRE(outputs.find("baremetal.node.envpool[0]") != std::string::npos);  // the runs did something
  REQUIRE(outputs.find("plinth trace: http: POST " + env_bmc.base() + "/bmc/0/redfish/v1/SessionService/Sessions -> 201") !=
          std::string::npos);  // and traced the session logins
  size_t files = 0;
  for (const auto& [path, text] : files_under(dir.path())) {
    if (path == cred_file) continue;
    ++files;
    for (const auto& s : secrets) {
      INFO(path << " holds " << s);
      CHECK(text.find(s) == std::string::npos);
    }
  }
  CHECK(files >= 10);
  for (const auto& s : secrets) {
    INFO("output holds " << s);
    CHECK(outputs.find(s) == std::string::npos);
  }
  // The emulators received the passwords, so they were really used.
  CHECK(env_bmc.log().find("/SessionService/Sessions") != std::string::npos);
  CHECK(file_bmc.log().find("/SessionService/Sessions") != std::string::npos);
}

}  // namespace plinth::test::e2e_secrets
