// Drives the built redfish-emulator over HTTPS (libcurl, verifying the
// emulator's generated CA) the way a provider would.
#include <curl/curl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "tests/emulators/redfish/service.h"
#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

using nlohmann::json;
using plinth::test::TempDir;

namespace {

const std::string kSystem = "/redfish/v1/Systems/437XR1138R2";

std::string mockup(const std::string& name = "public-rackmount1") {
  return plinth::test::testdata_dir() + "/redfish/" + name;
}

/// A running redfish-emulator child, stopped with SIGTERM when the object dies.
class Emulator : public plinth::test::EmulatorProcess {
 public:
  explicit Emulator(std::vector<std::string> args, const std::string& mock = mockup())
      : EmulatorProcess(REDFISH_EMULATOR_BINARY, with_mockup(std::move(args), mock)) {}
  /// https://127.0.0.1:PORT/bmc/I
  std::string bmc(int i = 0) const { return base() + "/bmc/" + std::to_string(i); }

 private:
  static std::vector<std::string> with_mockup(std::vector<std::string> args, const std::string& mock) {
    if (!mock.empty()) args.insert(args.begin(), {"--mockup", mock});
    return args;
  }
};

struct Http {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::map<std::string, std::string> headers;  ///< lower-cased names
  std::string body;
  json js() const { return json::parse(body); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

struct Call {
  std::string method = "GET";
  std::string body;
  std::vector<std::string> headers;
  std::string user = "admin:admin";  ///< basic auth; "" for none
  long timeout_ms = 15000;
  bool fresh_connection = false;  ///< no keep-alive: curl would silently retry a dropped reused connection
};

size_t on_body(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

size_t on_header(char* p, size_t size, size_t n, void* out) {
  std::string line(p, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string k = line.substr(0, colon), v = line.substr(colon + 1);
    for (auto& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    v.erase(0, v.find_first_not_of(' '));
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n')) v.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(out))[k] = v;
  }
  return size * n;
}

/// One request with TLS verification against the emulator's CA; reuses a
/// connection per thread like a real client.
Http request(const Emulator& em, const std::string& url, const Call& c = {}) {
  thread_local std::unique_ptr<CURL, void (*)(CURL*)> handle(curl_easy_init(), curl_easy_cleanup);
  CURL* h = handle.get();
  curl_easy_reset(h);
  Http r;
  curl_slist* hdrs = nullptr;
  for (const auto& x : c.headers) hdrs = curl_slist_append(hdrs, x.c_str());
  if (!c.body.empty()) hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CAINFO, em.ca().c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c.method.c_str());
  if (c.method == "HEAD") curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  if (!c.body.empty() || c.method == "POST") curl_easy_setopt(h, CURLOPT_POSTFIELDS, c.body.c_str());
  if (!c.user.empty()) curl_easy_setopt(h, CURLOPT_USERPWD, c.user.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c.timeout_ms);
  if (c.fresh_connection) {
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
  }
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &r.headers);
  r.code = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(hdrs);
  return r;
}

Http get(const Emulator& em, const std::string& url) { return request(em, url); }

Http send(const Emulator& em, const std::string& method, const std::string& url, const json& body,
          std::vector<std::string> headers = {}) {
  return request(em, url, Call{method, body.dump(), std::move(headers)});
}

json error_info(const Http& r, size_t i = 0) { return r.js()["error"]["@Message.ExtendedInfo"][i]; }

/// Polls the system until PowerState is `want` (or 5 s pass); returns what it saw last.
std::string wait_power(const Emulator& em, const std::string& system, const std::string& want) {
  std::string state;
  for (int i = 0; i < 100; ++i) {
    state = get(em, system).js().value("PowerState", "");
    if (state == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return state;
}

std::vector<json> read_log(const std::string& path) {
  std::vector<json> out;
  std::istringstream in(plinth::test::slurp(path));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("service root is readable without credentials, everything else answers 401") {
  Emulator em({});
  REQUIRE(em.lines()[0] == "listening " + em.base() + " endpoint=" + em.base() + "/bmc/{index} bmcs=1");
  Http root = request(em, em.bmc() + "/redfish/v1/", Call{"GET", "", {}, ""});
  REQUIRE(root.code == CURLE_OK);
  CHECK(root.status == 200);
  CHECK(root.header("odata-version") == "4.0");
  CHECK(root.js()["@odata.id"] == "/bmc/0/redfish/v1/");
  CHECK(root.js()["Systems"]["@odata.id"] == "/bmc/0/redfish/v1/Systems");
  CHECK(request(em, em.bmc() + "/redfish", Call{"GET", "", {}, ""}).js() == json{{"v1", "/bmc/0/redfish/v1/"}});

  Http none = request(em, em.bmc() + "/redfish/v1/Systems", Call{"GET", "", {}, ""});
  CHECK(none.status == 401);
  CHECK(none.header("www-authenticate") == "Basic realm=\"Redfish\"");
  CHECK(none.js()["error"]["code"] == "Base.1.8.1.NoValidSession");
  CHECK(none.js()["error"]["message"] == "There is no valid session established with the implementation.");

  Http wrong = request(em, em.bmc() + "/redfish/v1/Systems", Call{"GET", "", {}, "admin:nope"});
  CHECK(wrong.status == 401);
  CHECK(wrong.js()["error"]["code"] == "Base.1.8.1.ResourceAtUriUnauthorized");

  Http ok = get(em, em.bmc() + "/redfish/v1/Systems");
  CHECK(ok.status == 200);
  CHECK(ok.js()["Members"][0]["@odata.id"] == "/bmc/0" + kSystem);

  Http head = request(em, em.bmc() + kSystem, Call{"HEAD"});
  CHECK(head.status == 200);
  CHECK(head.body.empty());

  Http missing = get(em, em.base() + "/bmc/5/redfish/v1/");
  CHECK(missing.status == 404);
  CHECK(missing.js()["error"]["message"] == "The resource at the URI /bmc/5/redfish/v1/ was not found.");
}

TEST_CASE("sessions: create with UserName/Password, use the token, delete it") {
  Emulator em({});
  std::string sessions = em.bmc() + "/redfish/v1/SessionService/Sessions";
  Http bad = request(em, sessions, Call{"POST", R"({"UserName":"admin","Password":"x"})", {}, ""});
  CHECK(bad.status == 401);
  Http malformed = request(em, sessions, Call{"POST", "{oops", {}, ""});
  CHECK(malformed.status == 400);
  CHECK(malformed.js()["error"]["code"] == "Base.1.8.1.MalformedJSON");
  Http missing = request(em, sessions, Call{"POST", R"({"UserName":"admin"})", {}, ""});
  CHECK(missing.status == 400);
  CHECK(missing.js()["error"]["message"] ==
        "The property Password is a required property and must be included in the request.");

  Http created = request(em, sessions, Call{"POST", R"({"UserName":"admin","Password":"admin"})", {}, ""});
  REQUIRE(created.status == 201);
  std::string token = created.header("x-auth-token");
  std::string location = created.header("location");
  REQUIRE(token.size() == 32);
  REQUIRE(location.rfind("/bmc/0/redfish/v1/SessionService/Sessions/", 0) == 0);
  CHECK(created.js()["@odata.id"] == location);
  CHECK(created.js()["UserName"] == "admin");

  Call with_token{"GET", "", {"X-Auth-Token: " + token}, ""};
  CHECK(request(em, em.bmc() + kSystem, with_token).status == 200);
  json members = request(em, sessions, with_token).js()["Members"];
  CHECK(std::find(members.begin(), members.end(), json{{"@odata.id", location}}) != members.end());

  CHECK(request(em, em.base() + location, Call{"DELETE", "", {"X-Auth-Token: " + token}, ""}).status == 204);
  Http after = request(em, em.bmc() + kSystem, with_token);
  CHECK(after.status == 401);
  members = get(em, sessions).js()["Members"];
  CHECK(std::find(members.begin(), members.end(), json{{"@odata.id", location}}) == members.end());
}

TEST_CASE("sessions expire after --session-timeout idle seconds") {
  Emulator em({"--session-timeout", "1"});
  Http created = request(em, em.bmc() + "/redfish/v1/SessionService/Sessions",
                         Call{"POST", R"({"UserName":"admin","Password":"admin"})", {}, ""});
  Call with_token{"GET", "", {"X-Auth-Token: " + created.header("x-auth-token")}, ""};
  CHECK(request(em, em.bmc() + kSystem, with_token).status == 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  CHECK(request(em, em.bmc() + kSystem, with_token).status == 401);
}

TEST_CASE("ETags: GET returns one, PATCH with a stale If-Match answers 412") {
  Emulator em({});
  std::string sys = em.bmc() + kSystem;
  Http first = get(em, sys);
  std::string tag = first.header("etag");
  REQUIRE(!tag.empty());
  CHECK(first.js()["@odata.etag"] == tag);
  CHECK(request(em, sys, Call{"GET", "", {"If-None-Match: " + tag}}).status == 304);

  Http stale = send(em, "PATCH", sys, {{"AssetTag", "rack-7"}}, {"If-Match: \"0000000000000000\""});
  CHECK(stale.status == 412);
  CHECK(stale.js()["error"]["message"] == "The ETag supplied did not match the ETag required to change this resource.");
  CHECK(get(em, sys).js()["AssetTag"] == "Chicago-45Z-2381");

  Http ok = send(em, "PATCH", sys, {{"AssetTag", "rack-7"}}, {"If-Match: " + tag});
  REQUIRE(ok.status == 200);
  CHECK(ok.js()["AssetTag"] == "rack-7");
  CHECK(ok.header("etag") != tag);
  CHECK(send(em, "PATCH", sys, {{"AssetTag", "rack-8"}}, {"If-Match: " + tag}).status == 412);
  CHECK(send(em, "PATCH", sys, {{"AssetTag", "rack-8"}}, {"If-Match: W/" + ok.header("etag")}).status == 200);
}

TEST_CASE("boot override PATCH, read-only and unknown properties") {
  Emulator em({});
  std::string sys = em.bmc() + kSystem;
  for (std::string target : {"Pxe", "UefiHttp", "Cd"}) {
    Http r = send(em, "PATCH", sys,
                  {{"Boot", {{"BootSourceOverrideTarget", target}, {"BootSourceOverrideEnabled", "Continuous"}}}});
    REQUIRE(r.status == 200);
    CHECK(r.js()["Boot"]["BootSourceOverrideTarget"] == target);
    CHECK(get(em, sys).js()["Boot"]["BootSourceOverrideEnabled"] == "Continuous");
  }
  Http ro = send(em, "PATCH", sys, {{"PowerState", "Off"}});
  CHECK(ro.status == 400);
  CHECK(ro.js()["error"]["code"] == "Base.1.8.1.PropertyNotWritable");
  CHECK(ro.js()["error"]["message"] ==
        "The property PowerState is a read only property and cannot be assigned a value.");
  CHECK(error_info(ro)["RelatedProperties"] == json::array({"#/PowerState"}));

  Http bad = send(em, "PATCH", sys, {{"Boot", {{"BootSourceOverrideTarget", "Floppy"}}}});
  CHECK(bad.status == 400);
  CHECK(bad.js()["error"]["message"] ==
        "The value Floppy for the property Boot/BootSourceOverrideTarget is not in the list of acceptable values.");
  CHECK(send(em, "PATCH", sys, {{"Boot", {{"BootSourceOverrideEnabled", "Sometimes"}}}}).status == 400);

  // Nothing applies when any property fails.
  Http mixed = send(em, "PATCH", sys, {{"AssetTag", "x"}, {"Model", "9000"}, {"Nonsense", 1}});
  CHECK(mixed.status == 400);
  CHECK(mixed.js()["error"]["code"] == "Base.1.8.1.GeneralError");
  CHECK(error_info(mixed, 0)["MessageId"] == "Base.1.8.1.PropertyNotWritable");
  CHECK(error_info(mixed, 1)["MessageId"] == "Base.1.8.1.PropertyUnknown");
  CHECK(get(em, sys).js()["AssetTag"] == "Chicago-45Z-2381");
  CHECK(send(em, "PATCH", sys, {{"AssetTag", 5}}).js()["error"]["code"] == "Base.1.8.1.PropertyValueTypeError");
  CHECK(request(em, sys, Call{"PATCH", "{nope"}).js()["error"]["code"] == "Base.1.8.1.MalformedJSON");
}

TEST_CASE("ComputerSystem.Reset changes PowerState after --power-delay-ms") {
  Emulator em({"--power-delay-ms", "400", "--power-state", "Off"});
  std::string sys = em.bmc() + kSystem;
  std::string reset = sys + "/Actions/ComputerSystem.Reset";
  CHECK(get(em, sys).js()["PowerState"] == "Off");
  auto start = std::chrono::steady_clock::now();
  REQUIRE(send(em, "POST", reset, {{"ResetType", "On"}}).status == 204);
  CHECK(get(em, sys).js()["PowerState"] == "PoweringOn");
  CHECK(wait_power(em, sys, "On") == "On");
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(400));

  REQUIRE(send(em, "POST", reset, {{"ResetType", "ForceOff"}}).status == 204);
  CHECK(get(em, sys).js()["PowerState"] == "PoweringOff");
  CHECK(wait_power(em, sys, "Off") == "Off");
  REQUIRE(send(em, "POST", reset, {{"ResetType", "PowerCycle"}}).status == 204);
  CHECK(wait_power(em, sys, "On") == "On");

  Http bad = send(em, "POST", reset, {{"ResetType", "Explode"}});
  CHECK(bad.status == 400);
  CHECK(bad.js()["error"]["code"] == "Base.1.8.1.ActionParameterNotSupported");
  CHECK(bad.js()["error"]["message"] ==
        "The parameter ResetType for the action ComputerSystem.Reset is not supported on the target resource.");
  CHECK(error_info(bad)["Resolution"] ==
        "ResetType \"Explode\" is not supported; use one of On, ForceOff, GracefulShutdown, GracefulRestart, "
        "ForceRestart, PowerCycle, ForceOn, Nmi, PushPowerButton.");
  CHECK(send(em, "POST", reset, json::object()).js()["error"]["code"] == "Base.1.8.1.ActionParameterMissing");
  CHECK(send(em, "POST", sys + "/Actions/ComputerSystem.Explode", {{"ResetType", "On"}}).status == 404);
  json allowed = get(em, sys).js()["Actions"]["#ComputerSystem.Reset"]["ResetType@Redfish.AllowableValues"];
  CHECK(std::find(allowed.begin(), allowed.end(), "PowerCycle") != allowed.end());
}

TEST_CASE("BIOS: PATCH goes to Bios/Settings and applies on the next reset") {
  Emulator em({"--power-delay-ms", "100"});
  std::string bios = em.bmc() + kSystem + "/Bios";
  json current = get(em, bios).js();
  REQUIRE(current["@Redfish.Settings"]["SettingsObject"]["@odata.id"] == "/bmc/0" + kSystem + "/Bios/Settings");
  CHECK(current["Attributes"]["ProcTurboMode"] == "Enabled");
  CHECK(get(em, bios + "/Settings").js()["Attributes"] == json::object());

  Http direct = send(em, "PATCH", bios, {{"Attributes", {{"ProcTurboMode", "Disabled"}}}});
  CHECK(direct.status == 405);
  CHECK(direct.header("allow") == "GET, HEAD");

  Http unknown = send(em, "PATCH", bios + "/Settings", {{"Attributes", {{"NoSuchKnob", "On"}}}});
  CHECK(unknown.status == 400);
  CHECK(unknown.js()["error"]["message"] ==
        "The property Attributes/NoSuchKnob is not in the list of valid properties for the resource.");
  CHECK(send(em, "PATCH", bios + "/Settings", {{"Attributes", {{"ProcCoreDisable", "two"}}}}).js()["error"]["code"] ==
        "Base.1.8.1.PropertyValueTypeError");

  Http pending =
      send(em, "PATCH", bios + "/Settings", {{"Attributes", {{"ProcTurboMode", "Disabled"}, {"ProcCoreDisable", 2}}}});
  REQUIRE(pending.status == 200);
  CHECK(pending.js()["Attributes"] == json{{"ProcTurboMode", "Disabled"}, {"ProcCoreDisable", 2}});
  CHECK(get(em, bios).js()["Attributes"]["ProcTurboMode"] == "Enabled");

  REQUIRE(
      send(em, "POST", em.bmc() + kSystem + "/Actions/ComputerSystem.Reset", {{"ResetType", "ForceRestart"}}).status ==
      204);
  CHECK(wait_power(em, em.bmc() + kSystem, "On") == "On");
  json applied = get(em, bios).js();
  CHECK(applied["Attributes"]["ProcTurboMode"] == "Disabled");
  CHECK(applied["Attributes"]["ProcCoreDisable"] == 2);
  CHECK(applied["Attributes"]["BootMode"] == "Uefi");
  CHECK(get(em, bios + "/Settings").js()["Attributes"] == json::object());
}

TEST_CASE("a one-time boot override is consumed by the next boot") {
  Emulator em({"--power-delay-ms", "50", "--power-state", "Off"});
  std::string sys = em.bmc() + kSystem;
  REQUIRE(
      send(em, "PATCH", sys, {{"Boot", {{"BootSourceOverrideTarget", "Pxe"}, {"BootSourceOverrideEnabled", "Once"}}}})
          .status == 200);
  REQUIRE(send(em, "POST", sys + "/Actions/ComputerSystem.Reset", {{"ResetType", "On"}}).status == 204);
  REQUIRE(wait_power(em, sys, "On") == "On");
  json s = get(em, sys).js();
  CHECK(s["Boot"]["BootSourceOverrideEnabled"] == "Disabled");
  CHECK(s["Boot"]["BootSourceOverrideTarget"] == "Pxe");
  CHECK(s["Oem"]["PlinthEmulator"]["LastBootSource"] == "Pxe");
  CHECK(s["Oem"]["PlinthEmulator"]["BootCount"] == 1);

  REQUIRE(send(em, "POST", sys + "/Actions/ComputerSystem.Reset", {{"ResetType", "GracefulRestart"}}).status == 204);
  REQUIRE(wait_power(em, sys, "On") == "On");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  s = get(em, sys).js();
  CHECK(s["Oem"]["PlinthEmulator"]["LastBootSource"] == "BootOrder");
  CHECK(s["Oem"]["PlinthEmulator"]["BootCount"] == 2);
}

TEST_CASE("VirtualMedia InsertMedia and EjectMedia") {
  Emulator em({"--power-delay-ms", "50"});
  std::string cd = em.bmc() + kSystem + "/VirtualMedia/CD1";
  json media = get(em, cd).js();
  REQUIRE(media["Actions"]["#VirtualMedia.InsertMedia"]["target"] ==
          "/bmc/0" + kSystem + "/VirtualMedia/CD1/Actions/VirtualMedia.InsertMedia");
  std::string insert = cd + "/Actions/VirtualMedia.InsertMedia";
  std::string eject = cd + "/Actions/VirtualMedia.EjectMedia";

  Http busy = send(em, "POST", insert, {{"Image", "http://10.0.0.1/boot.iso"}});
  CHECK(busy.status == 409);
  CHECK(busy.js()["error"]["code"] == "Base.1.8.1.ResourceInUse");

  REQUIRE(send(em, "POST", eject, json::object()).status == 204);
  media = get(em, cd).js();
  CHECK(media["Inserted"] == false);
  CHECK(media["Image"].is_null());

  CHECK(send(em, "POST", insert, json::object()).js()["error"]["message"] ==
        "The action VirtualMedia.InsertMedia requires the parameter Image to be present in the request body.");
  CHECK(send(em, "POST", insert, {{"Image", "x"}, {"Colour", "red"}}).js()["error"]["code"] ==
        "Base.1.8.1.ActionParameterNotSupported");
  REQUIRE(
      send(em, "POST", insert, {{"Image", "http://10.0.0.1/boot.iso"}, {"Inserted", true}, {"WriteProtected", true}})
          .status == 204);
  media = get(em, cd).js();
  CHECK(media["Image"] == "http://10.0.0.1/boot.iso");
  CHECK(media["ImageName"] == "boot.iso");
  CHECK(media["Inserted"] == true);
  CHECK(media["WriteProtected"] == true);
  CHECK(media["ConnectedVia"] == "URI");

  // Booting from Cd records the inserted image.
  std::string sys = em.bmc() + kSystem;
  REQUIRE(
      send(em, "PATCH", sys, {{"Boot", {{"BootSourceOverrideTarget", "Cd"}, {"BootSourceOverrideEnabled", "Once"}}}})
          .status == 200);
  REQUIRE(send(em, "POST", sys + "/Actions/ComputerSystem.Reset", {{"ResetType", "ForceRestart"}}).status == 204);
  REQUIRE(wait_power(em, sys, "On") == "On");
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK(get(em, sys).js()["Oem"]["PlinthEmulator"]["LastBootImage"] == "http://10.0.0.1/boot.iso");
}

TEST_CASE("async tasks: --async-tasks answers 202 with a task monitor polled until Completed") {
  Emulator em({"--async-tasks", "--power-delay-ms", "300", "--power-state", "Off"});
  std::string sys = em.bmc() + kSystem;
  Http accepted = send(em, "POST", sys + "/Actions/ComputerSystem.Reset", {{"ResetType", "On"}});
  REQUIRE(accepted.status == 202);
  std::string monitor = accepted.header("location");
  REQUIRE(monitor.rfind("/bmc/0/redfish/v1/TaskService/TaskMonitors/", 0) == 0);
  CHECK(accepted.header("retry-after") == "1");
  CHECK(accepted.js()["TaskState"] == "Running");
  Http running = get(em, em.base() + monitor);
  CHECK(running.status == 202);
  CHECK(running.js()["TaskState"] == "Running");
  std::string task = running.js()["@odata.id"];
  Http done;
  for (int i = 0; i < 100; ++i) {
    done = get(em, em.base() + monitor);
    if (done.status != 202) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(done.status == 200);
  CHECK(done.js()["TaskState"] == "Completed");
  CHECK(done.js()["PercentComplete"] == 100);
  CHECK(get(em, sys).js()["PowerState"] == "On");
  json members = get(em, em.bmc() + "/redfish/v1/TaskService/Tasks").js()["Members"];
  CHECK(std::find(members.begin(), members.end(), json{{"@odata.id", task}}) != members.end());

  // VirtualMedia actions apply when their task completes.
  std::string cd = em.bmc() + kSystem + "/VirtualMedia/CD1";
  Http ejecting = send(em, "POST", cd + "/Actions/VirtualMedia.EjectMedia", json::object());
  REQUIRE(ejecting.status == 202);
  CHECK(get(em, cd).js()["Inserted"] == true);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK(get(em, em.base() + ejecting.header("location")).status == 200);
  CHECK(get(em, cd).js()["Inserted"] == false);
}

TEST_CASE("GPU inventory, memory and per-BMC overrides") {
  Emulator em({"--bmcs", "4", "--gpus", "8", "--gpu-model", "NVIDIA H100 80GB HBM3", "--memory-gib", "2048",
               "--override", "3:gpus=7", "--override", "2:processors=absent", "--override", "1:password=s3cret",
               "--override", "1:gpu-model=NVIDIA A100 80GB PCIe"});
  auto gpus = [&](int i) {
    std::vector<json> out;
    Call call{"GET", "", {}, i == 1 ? "admin:s3cret" : "admin:admin"};
    json members = request(em, em.bmc(i) + kSystem + "/Processors", call).js()["Members"];
    for (const auto& m : members) {
      json p = request(em, em.base() + m["@odata.id"].get<std::string>(), call).js();
      if (p["ProcessorType"] == "GPU") out.push_back(p);
    }
    return out;
  };
  auto g0 = gpus(0);
  REQUIRE(g0.size() == 8);
  CHECK(g0[0]["Model"] == "NVIDIA H100 80GB HBM3");
  CHECK(g0[0]["Manufacturer"] == "NVIDIA");
  CHECK(g0[7]["Id"] == "GPU8");
  json procs = get(em, em.bmc(0) + kSystem + "/Processors").js();
  CHECK(procs["Members@odata.count"] == 11);  // CPU1, CPU2, FPGA1 from the mockup + 8 GPUs
  CHECK(get(em, em.bmc(0) + kSystem).js()["MemorySummary"]["TotalSystemMemoryGiB"] == 2048);
  CHECK(gpus(3).size() == 7);
  auto g1 = gpus(1);
  CHECK(g1.size() == 8);
  CHECK(g1[0]["Model"] == "NVIDIA A100 80GB PCIe");

  // Per-BMC credentials.
  CHECK(get(em, em.bmc(1) + kSystem).status == 401);
  CHECK(get(em, em.bmc(0) + kSystem).status == 200);

  // A BMC without the processors collection.
  CHECK(get(em, em.bmc(2) + kSystem).js().contains("Processors") == false);
  CHECK(get(em, em.bmc(2) + kSystem + "/Processors").status == 404);
  CHECK(get(em, em.bmc(2) + kSystem + "/Processors/CPU1").status == 404);

  // Each BMC has its own resource tree.
  REQUIRE(send(em, "PATCH", em.bmc(0) + kSystem, {{"AssetTag", "only-bmc-0"}}).status == 200);
  CHECK(get(em, em.bmc(3) + kSystem).js()["AssetTag"] == "Chicago-45Z-2381");
}

TEST_CASE("GPUs: --gpus replaces the GPUs a mockup already has") {
  Emulator tower({"--gpus", "4"}, mockup("public-tower"));
  std::string coll = tower.bmc() + "/redfish/v1/Systems/437XR1238R2/Processors";
  json members = get(tower, coll).js()["Members"];
  CHECK(members.size() == 12);  // CPU1..CPU8 + GPU1..GPU4
  json gpu1 = get(tower, tower.base() + "/bmc/0/redfish/v1/Systems/437XR1238R2/Processors/GPU1").js();
  CHECK(gpu1["Model"] == "NVIDIA H100 80GB HBM3");

  Emulator plain({}, mockup("public-tower"));
  CHECK(get(plain, plain.bmc() + "/redfish/v1/Systems/437XR1238R2/Processors/GPU1").js()["Model"] == "Nvidia(R) TU102");
}

namespace {
/// Walks every @odata.id reachable from the service root of BMC 0 and checks
/// that each one answers, except links to resources the mockup itself lacks.
void walk_mockup(const std::string& name) {
  Emulator em({}, mockup(name));
  std::string root = mockup(name);
  std::set<std::string> seen;
  std::deque<std::string> todo = {"/bmc/0/redfish/v1/"};
  std::vector<std::string> absent_in_mockup;
  while (!todo.empty()) {
    std::string uri = todo.front();
    todo.pop_front();
    std::string key = uri.substr(0, uri.find('#'));
    while (key.size() > 1 && key.back() == '/') key.pop_back();
    if (!seen.insert(key).second) continue;
    Http r = get(em, em.base() + key);
    if (r.status == 404) {
      std::string rel = key.substr(std::string("/bmc/0/redfish/v1").size());
      bool in_mockup = std::filesystem::exists(root + rel + "/index.json") || std::filesystem::exists(root + rel);
      INFO("404 for " << key);
      CHECK_FALSE(in_mockup);
      absent_in_mockup.push_back(key);
      continue;
    }
    INFO(key);
    REQUIRE(r.status == 200);
    if (r.header("content-type").rfind("application/json", 0) != 0) continue;
    json doc = r.js();
    std::vector<const json*> stack = {&doc};
    while (!stack.empty()) {
      const json* j = stack.back();
      stack.pop_back();
      if (j->is_object()) {
        for (const auto& [k, v] : j->items()) {
          if (k == "@odata.id" && v.is_string() && v.get<std::string>().rfind("/bmc/0/redfish/v1", 0) == 0)
            todo.push_back(v.get<std::string>());
          else
            stack.push_back(&v);
        }
      } else if (j->is_array()) {
        for (const auto& v : *j) stack.push_back(&v);
      }
    }
  }
  // Every index.json of the mockup is served, linked or not.
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().filename() != "index.json") continue;
    ++files;
    std::string rel = std::filesystem::relative(e.path().parent_path(), root).generic_string();
    std::string uri = em.bmc() + "/redfish/v1" + (rel == "." ? "" : "/" + rel);
    INFO(uri);
    CHECK(get(em, uri).status == 200);
  }
  CHECK(seen.size() > files / 2);
  WARN(name << ": walked " << seen.size() << " links, " << files << " resources in the mockup, "
            << absent_in_mockup.size() << " links the mockup lacks");
}
}  // namespace

TEST_CASE("the built-in mockup is the vendored public-rackmount1, file for file") {
  namespace re = plinth::redfish_emulator;
  re::Mockup built_in, from_dir;
  REQUIRE(re::load_mockup("", built_in) == "");
  REQUIRE(re::load_mockup(mockup("public-rackmount1"), from_dir) == "");
  CHECK(std::string(re::kBuiltinMockupName) == "public-rackmount1");
  CHECK(built_in.resources.size() == from_dir.resources.size());
  CHECK(built_in.resources.size() > 200);
  CHECK(built_in.resources == from_dir.resources);
  CHECK(built_in.files == from_dir.files);
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(mockup("public-rackmount1")))
    if (e.is_regular_file() && (e.path().extension() == ".json" || e.path().extension() == ".xml")) ++files;
  CHECK(re::builtin_mockup().size() == files);
}

TEST_CASE("with no --mockup the emulator serves the built-in public-rackmount1 system") {
  Emulator em({"--bmcs", "2", "--port", "0", "--gpus", "2"}, "");
  for (int i = 0; i < 2; ++i) {
    Http r = get(em, em.bmc(i) + kSystem);
    REQUIRE(r.status == 200);
    // Each BMC's server is its own: BMC 0 the mockup's identity, the others distinct from it.
    CHECK(r.js()["SerialNumber"] == (i == 0 ? "437XR1138R2" : "437XR1138R2-1"));
    CHECK(r.js()["UUID"] ==
          (i == 0 ? "38947555-7742-3448-3784-823347823834" : "38947555-7742-3448-3784-000000000001"));
  }
  Emulator moved({"--bmcs", "2", "--port", "0", "--override", "1:serial=437XR1138R2", "--override",
                  "1:uuid=38947555-7742-3448-3784-823347823834"},
                 "");
  CHECK(get(moved, moved.bmc(1) + kSystem).js()["SerialNumber"] == "437XR1138R2");
  CHECK(get(moved, moved.bmc(1) + kSystem).js()["UUID"] == "38947555-7742-3448-3784-823347823834");
  CHECK(get(em, em.bmc(1) + kSystem + "/VirtualMedia").status == 200);
}

TEST_CASE("every resource of public-rackmount1 is served and every link resolves") { walk_mockup("public-rackmount1"); }

TEST_CASE("every resource of public-tower is served and every link resolves") { walk_mockup("public-tower"); }

TEST_CASE("fault injection rates are about right and repeat with the same seed") {
  std::vector<std::string> flags = {"--rate-503", "0.2", "--rate-500", "0.1", "--drop-rate", "0.1", "--seed", "7"};
  auto outcomes = [&]() {
    Emulator em(flags);
    std::vector<std::string> seq;
    for (int i = 0; i < 300; ++i) {
      Call c;
      c.fresh_connection = true;
      Http r = request(em, em.bmc() + "/redfish/v1/", c);
      if (r.code != CURLE_OK) {
        seq.push_back("drop");
      } else {
        if (r.status == 503) CHECK(r.header("retry-after") == "1");
        seq.push_back(std::to_string(r.status));
      }
    }
    return seq;
  };
  auto a = outcomes();
  auto count = [&](const std::string& what) { return std::count(a.begin(), a.end(), what); };
  CHECK(count("503") > 300 * 0.13);
  CHECK(count("503") < 300 * 0.27);
  CHECK(count("500") > 300 * 0.05);
  CHECK(count("500") < 300 * 0.15);
  CHECK(count("drop") > 300 * 0.05);
  CHECK(count("drop") < 300 * 0.15);
  CHECK(count("200") + count("503") + count("500") + count("drop") == 300);
  CHECK(outcomes() == a);
}

TEST_CASE("faults: --latency-ms delays answers and --hang-bmc never answers") {
  Emulator em({"--bmcs", "2", "--latency-ms", "100-150", "--hang-bmc", "1"});
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) REQUIRE(get(em, em.bmc(0) + "/redfish/v1/").status == 200);
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(300));

  Http hung = request(em, em.bmc(1) + "/redfish/v1/", Call{"GET", "", {}, "", 500});
  CHECK(hung.code == CURLE_OPERATION_TIMEDOUT);
  CHECK(get(em, em.bmc(0) + "/redfish/v1/").status == 200);
}

TEST_CASE("request log: --request-log writes one JSON line per request") {
  TempDir tmp;
  std::string log = tmp.path() + "/requests.jsonl";
  {
    Emulator em({"--bmcs", "3", "--request-log", log, "--hang-bmc", "2"});
    get(em, em.bmc(1) + "/redfish/v1/");
    request(em, em.bmc(0) + kSystem, Call{"GET", "", {}, ""});
    send(em, "PATCH", em.bmc(1) + kSystem, {{"AssetTag", "a"}});
    request(em, em.bmc(2) + "/redfish/v1/", Call{"GET", "", {}, "", 300});
    // The hung request is logged once the client has gone.
    for (int i = 0; i < 40 && read_log(log).size() < 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto lines = read_log(log);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0]["bmc"] == 1);
  CHECK(lines[0]["method"] == "GET");
  CHECK(lines[0]["path"] == "/bmc/1/redfish/v1/");
  CHECK(lines[0]["status"] == 200);
  CHECK(lines[0]["fault"].is_null());
  CHECK(lines[0]["time"].get<std::string>().size() == std::string("2026-12-02T13:20:00.123Z").size());
  CHECK(lines[1]["status"] == 401);
  CHECK(lines[2]["method"] == "PATCH");
  CHECK(lines[2]["status"] == 200);
  CHECK(lines[3]["bmc"] == 2);
  CHECK(lines[3]["status"].is_null());
  CHECK(lines[3]["fault"] == "hang");
}

TEST_CASE("one port per BMC: --port-base gives each BMC its own listener without a path prefix") {
  Emulator em({"--bmcs", "2", "--port-base", "0", "--gpus", "1", "--override", "1:gpus=3"});
  REQUIRE(em.lines().size() == 3);
  std::string url0 = em.lines()[0].substr(10, em.lines()[0].find(' ', 10) - 10);
  std::string url1 = em.lines()[1].substr(10, em.lines()[1].find(' ', 10) - 10);
  CHECK(em.lines()[0] == "listening " + url0 + " bmc=0");
  CHECK(em.lines()[1] == "listening " + url1 + " bmc=1");
  CHECK(url0 != url1);
  CHECK(get(em, url0 + "/redfish/v1/").js()["@odata.id"] == "/redfish/v1/");
  CHECK(get(em, url0 + kSystem + "/Processors").js()["Members@odata.count"] == 4);
  CHECK(get(em, url1 + kSystem + "/Processors").js()["Members@odata.count"] == 6);
  CHECK(get(em, url0 + "/bmc/0/redfish/v1/").status == 404);
}

TEST_CASE("SIGTERM stops the emulator cleanly") {
  Emulator em({});
  REQUIRE(get(em, em.bmc() + "/redfish/v1/").status == 200);
  CHECK(em.stop() == 0);
  CHECK(em.stderr_text() == "redfish-emulator: stopped by signal 15\n");
}

TEST_CASE("bad flags are rejected with a message saying what to do") {
  auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), REDFISH_EMULATOR_BINARY);
    return plinth::test::run_program(args);
  };
  auto r = run({"--mockup", mockup(), "--bmcs", "2", "--override", "5:gpus=1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "redfish-emulator: --override/--hang-bmc names BMC 5 but --bmcs is 2 (indexes run from 0 to 1)\n");
  r = run({"--mockup", mockup(), "--override", "0:colour=red"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("redfish-emulator: --override 0:colour=red: unknown key 'colour' (use gpus,", 0) == 0);
  r = run({"--mockup", mockup(), "--rate-503", "1.5"});
  CHECK(r.err == "redfish-emulator: --rate-503 needs a fraction from 0 to 1, got '1.5'\n");
  r = run({"--mockup", mockup(), "--latency-ms", "50-10"});
  CHECK(r.err == "redfish-emulator: --latency-ms needs N or MIN-MAX milliseconds with MIN <= MAX, got '50-10'\n");
  r = run({"--mockup", "/nonexistent", "--port", "0"});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "redfish-emulator: mockup directory '/nonexistent' does not exist\n");
  r = run({"--frobnicate"});
  CHECK(r.err == "redfish-emulator: unknown flag '--frobnicate'; run redfish-emulator --help for the list\n");
  r = run({"--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--hang-bmc I") != std::string::npos);
}

TEST_CASE("a real client: python3-sushy sets a one-time PXE boot and powers the system on") {
  Emulator em({"--power-state", "Off", "--power-delay-ms", "300"});
  auto r = plinth::test::run_program(
      {"/usr/bin/python3", REDFISH_SUSHY_SCRIPT, em.base(), "/bmc/0/redfish/v1/", em.ca(), "admin", "admin"}, "",
      {{"REQUESTS_CA_BUNDLE", em.ca()}, {"CURL_CA_BUNDLE", em.ca()}});
  INFO("sushy stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  json seen = json::parse(r.out);
  CHECK(seen["system"] == "/bmc/0" + kSystem);
  CHECK(seen["before"] == "Off");
  CHECK(seen["boot_after_patch"] == json{{"target", "Pxe"}, {"enabled", "Once"}});
  CHECK(seen["states"].front() == "PoweringOn");
  CHECK(seen["states"].back() == "On");

  // What the emulator itself now holds.
  json sys = get(em, em.bmc() + kSystem).js();
  CHECK(sys["PowerState"] == "On");
  CHECK(sys["Oem"]["PlinthEmulator"]["LastBootSource"] == "Pxe");
  CHECK(sys["Boot"]["BootSourceOverrideEnabled"] == "Disabled");
  // sushy logged in with a session and deleted it at the end.
  json sessions = get(em, em.bmc() + "/redfish/v1/SessionService/Sessions").js()["Members"];
  CHECK(std::find(sessions.begin(), sessions.end(), json{{"@odata.id", seen["session"]}}) == sessions.end());
}

TEST_CASE("a thousand BMCs fit in one process on one port") {
  Emulator em({"--bmcs", "1000", "--gpus", "8", "--override", "999:gpus=2"});
  CHECK(em.lines()[0] == "listening " + em.base() + " endpoint=" + em.base() + "/bmc/{index} bmcs=1000");
  CHECK(get(em, em.bmc(999) + kSystem + "/Processors").js()["Members@odata.count"] == 5);
  CHECK(get(em, em.bmc(500) + kSystem + "/Processors").js()["Members@odata.count"] == 11);
  REQUIRE(send(em, "PATCH", em.bmc(999) + kSystem, {{"AssetTag", "last"}}).status == 200);
  CHECK(get(em, em.bmc(998) + kSystem).js()["AssetTag"] == "Chicago-45Z-2381");
  CHECK(get(em, em.base() + "/bmc/1000/redfish/v1/").status == 404);
}

TEST_CASE("override malformed-json cuts every JSON answer of one BMC") {
  Emulator em({"--bmcs", "2", "--override", "1:malformed-json=true"});
  Http bad = get(em, em.bmc(1) + kSystem);
  CHECK(bad.status == 200);
  CHECK_THROWS_AS(json::parse(bad.body), json::parse_error);
  CHECK(get(em, em.bmc(0) + kSystem).js()["Id"] == "437XR1138R2");
}

TEST_CASE("$expand with --expand on: references replaced by the resources, levels, Links, errors") {
  Emulator em({"--expand", "on", "--gpus", "8"});
  const json features = get(em, em.bmc() + "/redfish/v1/").js()["ProtocolFeaturesSupported"]["ExpandQuery"];
  CHECK(features == json{{"ExpandAll", true}, {"Levels", true}, {"Links", true}, {"NoLinks", true}, {"MaxLevels", 6}});

  // One level: the members are the systems themselves, their own references stay references.
  json systems = get(em, em.bmc() + "/redfish/v1/Systems?$expand=.").js();
  REQUIRE(systems["Members"].size() == 1);
  const json& sys = systems["Members"][0];
  CHECK(sys["@odata.id"] == "/bmc/0" + kSystem);
  CHECK(sys["PowerState"] == "On");
  CHECK(!sys["@odata.etag"].get<std::string>().empty());
  CHECK(sys["Processors"] == json{{"@odata.id", "/bmc/0" + kSystem + "/Processors"}});

  // Three levels (percent-encoded): the processors themselves; Links are not followed by ".".
  Http deep = get(em, em.bmc() + "/redfish/v1/Systems?%24expand=.(%24levels%3D3)");
  REQUIRE(deep.status == 200);
  const json members = deep.js()["Members"];
  REQUIRE(members.size() == 1);
  const json& s3 = members[0];
  int gpus = 0;
  for (const auto& p : s3["Processors"]["Members"]) gpus += p.value("ProcessorType", "") == "GPU";
  CHECK(gpus == 8);
  CHECK(s3["Bios"].contains("Attributes"));
  for (const auto& c : s3["Links"]["Chassis"]) CHECK(c.size() == 1);  // still a reference
  CHECK(get(em, em.bmc() + kSystem + "?$expand=~").js()["Links"]["Chassis"][0].contains("@odata.type"));
  // The answer's ETag is the resource's own: a PATCH may use it.
  Http expanded = get(em, em.bmc() + kSystem + "?$expand=*($levels=2)");
  CHECK(expanded.header("etag") == get(em, em.bmc() + kSystem).header("etag"));

  CHECK(get(em, em.bmc() + kSystem + "?$expand=x").status == 400);
  Http too_deep = get(em, em.bmc() + kSystem + "?$expand=.($levels=7)");
  CHECK(too_deep.status == 400);
  CHECK(too_deep.js()["error"]["@Message.ExtendedInfo"][0]["MessageId"] == "Base.1.8.1.QueryParameterOutOfRange");
}

TEST_CASE("$expand with --expand ignored is advertised and not done, off is neither") {
  Emulator ignored({"--expand", "ignored"});
  CHECK(get(ignored, ignored.bmc() + "/redfish/v1/").js()["ProtocolFeaturesSupported"]["ExpandQuery"]["NoLinks"] == true);
  CHECK(get(ignored, ignored.bmc() + "/redfish/v1/Systems?$expand=.").js()["Members"][0].size() == 1);
  Emulator off({});
  CHECK(get(off, off.bmc() + "/redfish/v1/").js()["ProtocolFeaturesSupported"]["ExpandQuery"]["NoLinks"] == false);
  CHECK(get(off, off.bmc() + "/redfish/v1/Systems?$expand=.").js()["Members"][0].size() == 1);
}
