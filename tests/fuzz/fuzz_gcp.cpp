// The gcp provider's handling of OAuth 2.0 and Compute Engine JSON: a fake
// token endpoint + Compute API on loopback answers every Compute request
// with the fuzzed document. The input's first byte picks the HTTP status of
// the writes (instances.insert, setLabels, delete): 200 for '{', 409 for ' ',
// 404 for '\t', 429 for '\n', 412 for '\r' (500, 503, 200 for other bytes).
// The whitespace it ends with sets flags: '\n', the GETs (aggregatedList
// pages, instances.get, zoneOperations.get polls, zoneOperations.list) get
// that status too (else 200); ' ', the credentials are a service-account key
// file (else a fixed GOOGLE_OAUTH_ACCESS_TOKEN-style token) and '\r', its
// token endpoint answers with the document and that status (else a good
// token); '\t', the fake is patient: it answers every request with the
// document, so an operation never DONE or a nextPageToken loop runs into the
// deadline; else it is impatient and fails every request after the 5th of a
// provider call with 503, so most inputs take milliseconds. The provider
// reads, discovers, creates, updates and removes an instance. Property:
// whatever Google answers, the provider returns values or errors within its
// deadline; nothing throws, crashes, loops or leaks.
//
// Seeds: tests/data/third_party/gcp-compute (the discovery document) and the
// Compute answers fuzz_seeds writes (operations, pages, errors, tokens).
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "engine/provider/options.h"
#include "providers/gcp/gcp_provider.h"
#include "providers/gcp/schema.h"
#include "tests/fuzz/fake_server.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/provider_fuzz.h"
#include "tests/providers/gcp/test_keys.h"

using namespace plinth;

namespace {

/// Where the key file goes; removed at exit.
struct KeyDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("plinth-fuzz-gcp-" + std::to_string(::getpid()));
  ~KeyDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
} key_dir;

struct FakeGoogle {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::string key_file;  ///< a service-account key whose token_uri is this server's /token
  std::mutex mu;
  std::string body;  ///< the document every Compute request answers
  int write_status = 200;
  int read_status = 200;
  bool fuzzed_token = false;  ///< the token endpoint answers with `body` and write_status too
  int limit = 0;              ///< Compute requests answered with `body` per provider call; 0: no limit
  int answered = 0;           ///< Compute requests of the current provider call

  FakeGoogle() {
    server.Post("/token", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu);
      if (!fuzzed_token)
        return res.set_content(R"({"access_token":"ya29.fuzz","token_type":"Bearer","expires_in":3599})",
                               "application/json");
      res.status = write_status;
      res.set_content(body, "application/json");
    });
    auto answer = [this](bool write) {
      return [this, write](const httplib::Request&, httplib::Response& res) {
        std::lock_guard<std::mutex> g(mu);
        if (limit > 0 && ++answered > limit) {
          res.status = 503;
          return res.set_content(
              R"({"error":{"code":503,"message":"The service is currently unavailable.","errors":[{"reason":"backendError"}]}})",
              "application/json");
        }
        res.status = write ? write_status : read_status;
        if (res.status == 429) res.set_header("Retry-After", "0");
        res.set_content(body, "application/json; charset=UTF-8");
      };
    };
    server.Get("/compute/v1/.*", answer(false));
    server.Post("/compute/v1/.*", answer(true));
    server.Delete("/compute/v1/.*", answer(true));
    port = fuzz::serve(server, thread, "the fake Google");
    std::filesystem::create_directories(key_dir.path);
    key_file = (key_dir.path / "key.json").string();
    std::ofstream(key_file) << test::test_key_json(0, "http://127.0.0.1:" + std::to_string(port) + "/token").dump();
  }
};

FakeGoogle& fake() {
  static FakeGoogle* f = new FakeGoogle();  // lives until exit: the listener thread never stops
  return *f;
}

/// A provider call begins: the impatient fake counts its requests from 0.
void next_call() {
  std::lock_guard<std::mutex> g(fake().mu);
  fake().answered = 0;
}

std::unique_ptr<gcp::GcpProvider> provider(bool key) {
  std::vector<std::string> env = {
      "GOOGLE_CLOUD_PROJECT=fuzz-project",
      "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE=http://127.0.0.1:" + std::to_string(fake().port) + "/"};
  env.push_back(key ? "GOOGLE_APPLICATION_CREDENTIALS=" + fake().key_file : "GOOGLE_OAUTH_ACCESS_TOKEN=ya29.fixed");
  return fuzz::configured<gcp::GcpProvider>(
      gcp::schema(), env, "gcp",
      {"timeout_ms=2000", "connect_timeout_ms=200", "poll_ms=1", "page_size=5", "requests_per_second=0"});
}

Resource instance() {
  Resource r;
  r.address = "gcp.instance.fuzz[1]";
  r.type = "gcp.instance";
  r.name = "fuzz";
  r.index = 1;
  r.provider = "gcp";
  r.attributes = {{"instance_type", "a3-highgpu-8g"},
                  {"machine_types", {"a2-ultragpu-8g"}},
                  {"zones", {"us-central1-a", "us-central1-b"}},
                  {"region", "us-central1"},
                  {"spot", true},
                  {"image", "projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts"},
                  {"boot_disk", {{"size_gb", 500}, {"type", "pd-ssd"}}},
                  {"labels", {{"team", "fuzz"}}}};
  r.computed = {{"id", "1234567890"}, {"name", "fuzz-1-abcdef01"}, {"zone", "us-central1-b"}};
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)fake();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int statuses[] = {409, 404, 429, 200, 500, 412, 503, 200};  // '{' is 3, ' ' 0, '\t' 1, '\r' 5
  const std::string flags = fuzz::trailing_space(data, size);
  const bool fuzzed_token = flags.find('\r') != std::string::npos;
  const bool key = fuzzed_token || flags.find(' ') != std::string::npos;
  {
    std::lock_guard<std::mutex> g(fake().mu);
    fake().body = fuzz::text(data, size);
    fake().write_status = statuses[(size > 0 ? data[0] : '{') % 8];
    fake().read_status = flags.find('\n') != std::string::npos ? fake().write_status : 200;
    fake().fuzzed_token = fuzzed_token;
    fake().limit = flags.find('\t') != std::string::npos ? 0 : 5;
  }
  const Resource r = instance();
  Resource changed = r;
  changed.attributes["labels"] = {{"team", "other"}};
  fuzz::drive([key] { return provider(key); }, r, changed, next_call);
  return 0;
}
