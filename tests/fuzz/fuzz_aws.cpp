// The aws provider's handling of EC2 Query API XML: a fake EC2 endpoint on
// loopback answers every action with the fuzzed document. The input's first
// byte picks the HTTP status of the mutating actions (RunInstances,
// TerminateInstances, CreateTags, Create/DeletePlacementGroup): 200 for '<',
// 400 for ' ', 503 for '\t', 500 for '\n', 401 for '\r' (403, 400, 200 for
// other bytes). The whitespace it ends with sets flags: '\n', DescribeInstances
// gets that status too (else 200); '\t', the fake is patient: it answers
// every request with the document, so an instance pending forever or a
// NextToken loop runs into the deadline; else it is impatient and fails every
// request after the 8th of a provider call with 503 Unavailable, so most
// inputs take milliseconds. The provider reads (DescribeInstances pages with
// NextToken), discovers, creates (placement group, RunInstances over types
// and zones, waiting for running), updates (CreateTags) and removes
// (TerminateInstances, waiting for terminated, then the placement group) an
// instance. Property: whatever EC2 answers (answers, error XML with
// InsufficientInstanceCapacity or RequestLimitExceeded, garbage), the
// provider returns values or errors within its deadline; nothing throws,
// crashes, loops or leaks.
//
// Seeds: the EC2 XML answers in tests/data/third_party/aws-ec2 (libcloud's
// fixtures, botocore's response-parsing cases) and those fuzz_seeds writes
// (pages, states, error codes).
#include <httplib.h>

#include <cstdlib>
#include <mutex>
#include <thread>

#include "engine/provider/options.h"
#include "providers/aws/aws_provider.h"
#include "providers/aws/ec2_protocol.h"
#include "providers/aws/schema.h"
#include "tests/fuzz/fake_server.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/provider_fuzz.h"

using namespace plinth;

namespace {

struct FakeEc2 {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::mutex mu;
  std::string body;  ///< the document every action answers
  int write_status = 200;
  int read_status = 200;
  int limit = 0;     ///< requests answered with `body` per provider call; 0: no limit
  int answered = 0;  ///< requests of the current provider call

  FakeEc2() {
    server.Post("/", [this](const httplib::Request& req, httplib::Response& res) {
      const auto form = aws::ec2::parse_form(req.body);
      const auto action = form.find("Action");
      const bool read = action != form.end() && action->second.rfind("Describe", 0) == 0;
      std::lock_guard<std::mutex> g(mu);
      if (limit > 0 && ++answered > limit) {
        res.status = 503;
        return res.set_content(aws::ec2::error_xml("Unavailable", "The service is unavailable.", "fuzz"), "text/xml");
      }
      res.status = read ? read_status : write_status;
      res.set_content(body, "text/xml;charset=UTF-8");
    });
    port = fuzz::serve(server, thread, "the fake EC2");
  }
};

FakeEc2& fake() {
  static FakeEc2* f = new FakeEc2();  // lives until exit: the listener thread never stops
  return *f;
}

/// A provider call begins: the impatient fake counts its requests from 0.
void next_call() {
  std::lock_guard<std::mutex> g(fake().mu);
  fake().answered = 0;
}

std::unique_ptr<aws::AwsProvider> provider() {
  return fuzz::configured<aws::AwsProvider>(
      aws::schema(),
      {"AWS_ACCESS_KEY_ID=AKIDFUZZ", "AWS_SECRET_ACCESS_KEY=fuzz", "AWS_REGION=us-east-1",
       "AWS_ENDPOINT_URL_EC2=http://127.0.0.1:" + std::to_string(fake().port)},
      "aws", {"timeout_ms=2000", "connect_timeout_ms=200", "poll_ms=1", "page_size=5"});
}

Resource instance() {
  Resource r;
  r.address = "aws.instance.fuzz[1]";
  r.type = "aws.instance";
  r.name = "fuzz";
  r.index = 1;
  r.provider = "aws";
  r.attributes = {{"instance_type", "p5.48xlarge"},
                  {"instance_types", {"p4d.24xlarge"}},
                  {"zones", {"us-east-1a", "us-east-1b"}},
                  {"region", "us-east-1"},
                  {"spot", true},
                  {"image", "ami-0123456789abcdef0"},
                  {"placement_group", true},
                  {"efa_interfaces", {{"p5.48xlarge", 2}}},
                  {"root_volume", {{"size_gb", 500}, {"encrypted", true}}},
                  {"security_groups", {"sg-1"}},
                  {"key_name", "fuzz"}};
  // An id the seeds carry (libcloud's describe_instances.xml), so reads find it.
  r.computed = {{"id", "i-4382922a"}, {"zone", "us-east-1b"}, {"placement_group", "plinth-fuzz-us-east-1b-fuzz-lin"}};
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)fake();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int statuses[] = {400, 503, 500, 403, 200, 401, 400, 200};  // '<' is 4, ' ' 0, '\t' 1, '\r' 5
  const std::string flags = fuzz::trailing_space(data, size);
  {
    std::lock_guard<std::mutex> g(fake().mu);
    fake().body = fuzz::text(data, size);
    fake().write_status = statuses[(size > 0 ? data[0] : '<') % 8];
    fake().read_status = flags.find('\n') != std::string::npos ? fake().write_status : 200;
    fake().limit = flags.find('\t') != std::string::npos ? 0 : 8;
  }
  const Resource r = instance();
  Resource changed = r;
  changed.attributes["key_name"] = "other";
  fuzz::drive([] { return provider(); }, r, changed, next_call);
  return 0;
}
