// plinth apply / plan / refresh of AWS burst pools against aws-ec2-emulator
// (docs/providers/aws.md): spot p5 pools with placement groups and EFA,
// create-before-destroy replaces, capacity fallback, throttling, lost
// answers, spot reclaim, wrong credentials, refresh in O(pages), secrets.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "engine/state/state.h"
#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_aws {

namespace {

/// A Workspace on `ec2` whose HOME (for ~/.aws/config) is a folder of its own.
struct Ec2Workspace : Workspace {
  explicit Ec2Workspace(Ec2Emulator& ec2) : Workspace(&ec2, "10") { env = aws_env(ec2, home.path()); }
  TempDir home;
};

}  // namespace

TEST_CASE("aws: 40 spot p5.48xlarge over two zones with placement groups and EFA, re-plan clean, a stack pin "
          "change replaces create-before-destroy, desired 40 -> 10 terminates 30",
          "[e2e][aws]") {
  Ec2Emulator ec2;
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool();
  pool.extra = "    zones: [us-east-1a, us-east-1b]\n    placement_group: true\n";

  auto r = ws.apply(burst_blueprint({pool}));
  INFO(r.out << r.err << ec2.stderr_text());
  REQUIRE(r.exit_code == 0);
  auto active = ec2.active();
  REQUIRE(active.size() == 40);
  CHECK(count_by(active, "availability_zone") == std::map<std::string, int>{{"us-east-1a", 20}, {"us-east-1b", 20}});
  CHECK(count_by(active, "lifecycle") == std::map<std::string, int>{{"spot", 40}});
  CHECK(count_by(active, "instance_type") == std::map<std::string, int>{{"p5.48xlarge", 40}});
  std::set<std::string> groups;
  for (const auto& i : active) {
    groups.insert(i["placement_group"].get<std::string>());
    REQUIRE(i["network_interfaces"].size() == 32);  // one EFA per network card of a p5.48xlarge
    std::map<std::string, int> types;
    for (const auto& n : i["network_interfaces"]) ++types[n["interface_type"].get<std::string>()];
    CHECK(types == std::map<std::string, int>{{"efa", 1}, {"efa-only", 31}});
    CHECK(i["user_data"].get<std::string>().rfind("#cloud-config", 0) == 0);
  }
  CHECK(groups.size() == 2);  // a cluster group per zone
  CHECK(ws.in_state("aws.instance") == 40);

  // Nothing changed: the plan is empty.
  auto again = ws.plan(burst_blueprint({pool}));
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("No changes.") != std::string::npos);

  // A new driver pin is a new user-data hash: replace, create before destroy.
  auto p = ws.plan(burst_blueprint({pool}, "550.90.07"));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(count_of(p.out, "(replace, create before destroy, forced by: user_data_hash)") == 40);
  CHECK(p.out.find("+/- aws.instance.gpu[0]") != std::string::npos);

  // 40 -> 10 terminates 30 (the highest indexes).
  BurstPool ten = pool;
  ten.desired = 10;
  auto down = ws.apply(burst_blueprint({ten}));
  INFO(down.out << down.err);
  REQUIRE(down.exit_code == 0);
  CHECK(down.out.find("0 to create, 0 to update, 0 to replace, 30 to destroy") != std::string::npos);
  CHECK(ec2.active().size() == 10);
  CHECK(ec2.instances("terminated").size() == 30);

  // The replace is refused while there is no capacity: the old ten stay.
  const std::string ten_pinned = burst_blueprint({ten}, "550.90.07");
  ec2.capacity("p5.48xlarge", "*", 5);  // per zone: exactly what runs there now
  auto refused = ws.apply(ten_pinned);
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.find("InsufficientInstanceCapacity") != std::string::npos);
  CHECK(refused.out.find("the old object was kept") != std::string::npos);
  CHECK(ec2.active().size() == 10);
  CHECK(ws.in_state("aws.instance") == 10);
  CHECK(ws.doc().deposed.empty());

  // With capacity the replacements come first, then the old ten go.
  ec2.capacity("p5.48xlarge", "*", nullptr);
  std::set<std::string> old_ids;
  for (const auto& i : ec2.active()) old_ids.insert(i["instance_id"].get<std::string>());
  auto replaced = ws.apply(ten_pinned);
  INFO(replaced.out << replaced.err);
  REQUIRE(replaced.exit_code == 0);
  auto now = ec2.active();
  CHECK(now.size() == 10);
  for (const auto& i : now) CHECK(old_ids.count(i["instance_id"].get<std::string>()) == 0);
  CHECK(ws.doc().deposed.empty());
  CHECK(ws.plan(ten_pinned).exit_code == 0);

  // The placement groups go with the pool's last instances.
  auto gone = ws.run({"destroy", "--auto-approve"}, ten_pinned);
  INFO(gone.out << gone.err);
  REQUIRE(gone.exit_code == 0);
  CHECK(ec2.active().empty());
  CHECK(ec2.control("GET", "/__emulator/state")["placement_groups"].empty());
}

TEST_CASE("aws: with room for only 25 p5 in zone a, fallback to p5e and zone b fills the pool and the summary says "
          "where each instance went",
          "[e2e][aws]") {
  Ec2Emulator ec2({"--capacity", "p5.48xlarge:*=0", "--capacity", "p5.48xlarge:us-east-1a=25"});
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool();
  pool.extra = "    instance_types: [p5.48xlarge, p5e.48xlarge]\n    zones: [us-east-1a, us-east-1b]\n";
  auto r = ws.applied(burst_blueprint({pool}));
  auto active = ec2.active();
  REQUIRE(active.size() == 40);
  std::map<std::string, int> placed;
  for (const auto& i : active) ++placed[i["instance_type"].get<std::string>() + " " + i["availability_zone"].get<std::string>()];
  CHECK(placed["p5.48xlarge us-east-1a"] == 25);
  CHECK(placed["p5.48xlarge us-east-1b"] == 0);
  CHECK(placed["p5e.48xlarge us-east-1a"] + placed["p5e.48xlarge us-east-1b"] == 15);
  // The summary names each instance's type and zone, as the emulator has them.
  CHECK(r.out.find("Placement:") != std::string::npos);
  for (const auto& i : active) {
    const std::string address = i["tags"].value("plinth:address", "");
    INFO(address);
    CHECK(r.out.find("  " + address + ": instance_type " + i["instance_type"].get<std::string>() + ", zone " +
                     i["availability_zone"].get<std::string>() + "\n") != std::string::npos);
  }
  CHECK(r.out.find("25 x aws.instance.gpu: instance_type p5.48xlarge, zone us-east-1a") != std::string::npos);
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);  // the fallback choice is no drift
}

TEST_CASE("aws: without fallbacks a pool without capacity fails at once with AWS's message naming the zone",
          "[e2e][aws]") {
  Ec2Emulator ec2({"--capacity", "p5.48xlarge:us-east-1a=0"});
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool(3, "    zones: [us-east-1a]\n", false);
  auto r = ws.apply(burst_blueprint({pool}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("aws.instance.gpu[0]: no capacity for p5.48xlarge in us-east-1a: InsufficientInstanceCapacity: We "
                   "currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested "
                   "(us-east-1a).") != std::string::npos);
  CHECK(r.out.find("List fallbacks in the pool") != std::string::npos);
  // One RunInstances per instance: the capacity error is never retried.
  CHECK(ec2.requests("RunInstances") == 3);
  CHECK(ec2.instances().empty());
}

TEST_CASE("aws: with throttling on, the apply finishes and every RequestLimitExceeded was retried", "[e2e][aws]") {
  Ec2Emulator ec2({"--throttle", "RunInstances=2:20", "--throttle", "DescribeInstances=3:40"});
  Ec2Workspace ws(ec2);
  ws.env["PLINTH_AWS_REQUEST_RATES"] = "mutating=1000:1000,non-mutating=1000:1000";  // let the server throttle
  ws.env["PLINTH_AWS_RETRY_ATTEMPTS"] = "12";
  BurstPool pool = aws_pool(20);
  auto r = ws.applied(burst_blueprint({pool}));
  CHECK(r.out.find("Failed:") == std::string::npos);
  // Every RequestLimitExceeded the emulator answered shows as a retry, none as a failure.
  Json c = ec2.counters();
  INFO(c.dump(2));
  auto throttles = [&](const char* action) {
    const Json& a = c["actions"].contains(action) ? c["actions"][action] : Json::object();
    return a.contains("faults") ? a["faults"].value("throttle", 0) : 0;
  };
  const int throttled = throttles("RunInstances") + throttles("DescribeInstances");
  CHECK(throttles("RunInstances") > 0);
  CHECK(count_of(r.out, " failed, retrying in ") == static_cast<size_t>(throttled));
  CHECK(count_of(r.out, "RequestLimitExceeded: Request limit exceeded.") == static_cast<size_t>(throttled));
  CHECK(ec2.active().size() == 20);
}

TEST_CASE("aws: the client-side token bucket keeps an apply under EC2's request rate", "[e2e][aws]") {
  Ec2Emulator ec2({"--throttle", "RunInstances=2:5"});
  Ec2Workspace ws(ec2);
  // Slower than the server's bucket: EC2 never has to say RequestLimitExceeded.
  ws.env["PLINTH_AWS_REQUEST_RATES"] = "RunInstances=1:4,mutating=1000:1000,non-mutating=1000:1000";
  ws.applied(burst_blueprint({aws_pool(6)}));
  Json c = ec2.counters();
  INFO(c.dump(2));
  CHECK(c["actions"]["RunInstances"]["requests"] == 6);
  CHECK(c["actions"]["RunInstances"].value("faults", Json::object()).value("throttle", 0) == 0);
  CHECK(ec2.active().size() == 6);
}

TEST_CASE("aws: a connection dropped after RunInstances succeeded makes no duplicate instance", "[e2e][aws]") {
  Ec2Emulator ec2({"--lose-response", "RunInstances=3"});
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool(5);
  auto r = ws.applied(burst_blueprint({pool}));
  CHECK(ec2.counters()["actions"]["RunInstances"]["faults"].value("lose-response", 0) == 3);
  auto all = ec2.instances();
  CHECK(all.size() == 5);  // terminated included: nothing was launched twice
  std::set<std::string> addresses;
  for (const auto& i : all) addresses.insert(i["tags"].value("plinth:address", ""));
  CHECK(addresses.size() == 5);
}

TEST_CASE("aws: an instance whose answer was lost and whose run crashed is adopted by refresh, never duplicated",
          "[e2e][aws]") {
  Ec2Emulator ec2;
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool(3);
  ws.applied(burst_blueprint({pool}));
  // Forget one instance in state, as if the run had died before journaling it.
  auto doc = ws.doc();
  std::erase_if(doc.resources, [](const Resource& r) { return r.address == "aws.instance.gpu[1]"; });
  doc.serial += 1;
  REQUIRE(state::open_local(ws.state())->save(doc).ok());
  auto r = ws.run({"refresh"}, burst_blueprint({pool}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("Adopted: 1 object(s)") != std::string::npos);
  CHECK(r.err.find("  + aws.instance.gpu[1] (i-") != std::string::npos);
  CHECK(ws.doc().find("aws.instance.gpu[1]") != nullptr);
  auto p = ws.plan(burst_blueprint({pool}));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 0);
  CHECK(ec2.instances().size() == 3);
}

TEST_CASE("aws: an unrecorded instance at an address the state holds with another (a replace killed before its "
          "journal write, then the blueprint changed) is deposed and terminated, never left running",
          "[e2e][aws]") {
  Ec2Emulator ec2;
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool(3);
  ws.applied(burst_blueprint({pool}));
  // What the killed run launched for gpu[1]: this state's lineage and the
  // address, from attributes the blueprint no longer has.
  ws.home.write(".aws/config", "[default]\n");
  auto env = ws.env;
  env["AWS_DEFAULT_REGION"] = "us-east-1";
  env["AWS_PROFILE"] = "default";
  env["AWS_PAGER"] = "";
  const Json spec = Json::array({{{"ResourceType", "instance"},
                                  {"Tags",
                                   {{{"Key", "plinth:lineage"}, {"Value", ws.doc().lineage}},
                                    {{"Key", "plinth:address"}, {"Value", "aws.instance.gpu[1]"}},
                                    {{"Key", "plinth:attributes"}, {"Value", "0123456789abcdef"}}}}}});
  auto cli = run_program({"/usr/bin/aws", "ec2", "run-instances", "--image-id", kAwsImage, "--instance-type", "p5.48xlarge",
                          "--tag-specifications", spec.dump(), "--endpoint-url", ec2.base(), "--ca-bundle", ec2.ca(),
                          "--output", "text", "--query", "Instances[0].InstanceId"},
                         "", env);
  INFO(cli.err);
  REQUIRE(cli.exit_code == 0);
  const std::string stray = cli.out.substr(0, cli.out.find_first_of(" \t\r\n"));
  REQUIRE(stray.rfind("i-", 0) == 0);
  REQUIRE(ec2.active().size() == 4);

  auto p = ws.plan(burst_blueprint({pool}));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("Superseded: 1 object(s) made for this state at an address it records with another object; "
                   "recorded as deposed, the next apply removes them:\n  - aws.instance.gpu[1] (" + stray + ")") !=
        std::string::npos);
  CHECK(p.out.find("- aws.instance.gpu[1] (deposed)") != std::string::npos);
  CHECK(p.out.find("0 to create, 0 to update, 0 to replace, 1 to destroy") != std::string::npos);
  ws.applied(burst_blueprint({pool}));
  auto active = ec2.active();
  CHECK(active.size() == 3);
  for (const auto& i : active) CHECK(i["instance_id"] != stray);
  CHECK(ws.doc().deposed.empty());
  CHECK(ws.in_state("aws.instance") == 3);
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);
}

TEST_CASE("aws: a spot instance reclaimed by AWS shows as reclaimed, not as drift, and is created again",
          "[e2e][aws]") {
  Ec2Emulator ec2;
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool(3);
  ws.applied(burst_blueprint({pool}));
  const std::string victim = ws.doc().find("aws.instance.gpu[2]")->computed["id"];
  ec2.control("POST", "/__emulator/reclaim", {{"instance_ids", {victim}}});
  auto p = ws.plan(burst_blueprint({pool}));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("Gone: 1 resource(s) removed by their provider, not by a person:\n"
                   "  - aws.instance.gpu[2]: reclaimed by AWS (Server.SpotInstanceTermination: Spot instance "
                   "termination) (the next apply creates it again)") != std::string::npos);
  CHECK(p.err.find("Drift:") == std::string::npos);
  CHECK(p.out.find("+ aws.instance.gpu[2] (create)") != std::string::npos);
  auto r = ws.applied(burst_blueprint({pool}));
  CHECK(ec2.active().size() == 3);
  CHECK(ws.doc().find("aws.instance.gpu[2]")->computed["id"] != victim);
}

TEST_CASE("aws: wrong credentials give AWS's error and touch nothing", "[e2e][aws]") {
  Ec2Emulator ec2;
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool(2);
  ws.env["AWS_SECRET_ACCESS_KEY"] = "not-the-secret";
  auto r = ws.apply(burst_blueprint({pool}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("aws.instance.gpu[0]: SignatureDoesNotMatch: The request signature we calculated does not match "
                   "the signature you provided.") != std::string::npos);
  Ec2Workspace other(ec2);
  other.env["AWS_ACCESS_KEY_ID"] = "AKIDUNKNOWN";
  auto k = other.apply(burst_blueprint({pool}));
  INFO(k.out << k.err);
  CHECK(k.exit_code == 1);
  CHECK(k.out.find("aws.instance.gpu[1]: AuthFailure: AWS was not able to validate the provided access credentials") !=
        std::string::npos);
  CHECK(ec2.instances().empty());
  CHECK(ec2.requests("RunInstances") == 4);  // one each, never retried
  for (const auto& res : ws.doc().resources) CHECK(res.type != "aws.instance");
  // With a state, the refresh is what meets the wrong key first: nothing is planned.
  auto again = other.apply(burst_blueprint({pool}));
  INFO(again.out << again.err);
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("AuthFailure: AWS was not able to validate the provided access credentials") != std::string::npos);
  CHECK(again.err.find("nothing was changed") != std::string::npos);
  CHECK(ec2.requests("RunInstances") == 4);
}

TEST_CASE("aws: refresh of 1,000 instances takes O(pages) DescribeInstances requests", "[e2e][aws]") {
  Ec2Emulator ec2;
  Ec2Workspace ws(ec2);
  // 1,000 instances launched with one request by the AWS CLI, tagged with a
  // state's lineage, and that state recording them.
  const std::string lineage = "0e2e0000-0000-4000-8000-000000001000";
  ws.home.write(".aws/config", "[default]\n");
  auto env = ws.env;
  env["AWS_DEFAULT_REGION"] = "us-east-1";
  env["AWS_PROFILE"] = "default";
  env["AWS_PAGER"] = "";
  auto cli = run_program({"/usr/bin/aws", "ec2", "run-instances", "--image-id", kAwsImage, "--instance-type",
                          "p5.48xlarge", "--count", "1000", "--tag-specifications",
                          "ResourceType=instance,Tags=[{Key=plinth:lineage,Value=" + lineage + "}]", "--endpoint-url",
                          ec2.base(), "--ca-bundle", ec2.ca(), "--output", "json", "--query",
                          "Instances[].InstanceId"},
                         "", env);
  INFO(cli.err);
  REQUIRE(cli.exit_code == 0);
  Json ids = Json::parse(cli.out);
  REQUIRE(ids.size() == 1000);
  state::StateDocument doc;
  doc.lineage = lineage;
  doc.serial = 1;
  doc.plinth_version = "0.1.0";
  for (int i = 0; i < 1000; ++i) {
    Resource r = make_resource("aws.instance", "gpu", i, "aws", {{"instance_type", "p5.48xlarge"}, {"region", "us-east-1"}});
    r.computed = {{"id", ids[static_cast<size_t>(i)]}};
    doc.resources.push_back(r);
  }
  std::sort(doc.resources.begin(), doc.resources.end(),
            [](const Resource& a, const Resource& b) { return a.address < b.address; });
  REQUIRE(state::open_local(ws.state())->save(doc).ok());
  const size_t before = count_of(ec2.log(), "\n");
  // The default page size: 1,000 p5.48xlarge (32 network interfaces each,
  // ~65 KB of XML an instance) in one page would pass the HTTP client's
  // 32 MiB limit and fail the refresh.
  auto r = run_plinth({"refresh", "--state", ws.state()}, ws.dir.path(), ws.env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("No drift: all 1000 resource(s)") != std::string::npos);
  // The emulator's request log: 1,000 / 200 = 5 pages to read them, 5 more
  // to look for instances of the state it does not record; nothing else.
  std::istringstream log(ec2.log());
  std::string line;
  std::map<std::string, int> actions;
  for (size_t n = 0; std::getline(log, line); ++n)
    if (n >= before) ++actions[Json::parse(line).value("action", Json("")).is_string() ? Json::parse(line).value("action", "") : ""];
  CHECK(actions == std::map<std::string, int>{{"DescribeInstances", 10}});
}

TEST_CASE("aws: secrets never reach the plan file, the state or the output", "[e2e][aws]") {
  const std::string token = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN0123456789";
  Ec2Emulator ec2({"--session-token", token});
  Ec2Workspace ws(ec2);
  ws.env["AWS_SESSION_TOKEN"] = token;
  BurstPool pool = aws_pool(2);
  std::string seen;
  auto plan = ws.run({"plan", "-out", ws.dir.path() + "/plan.bin"}, burst_blueprint({pool}));
  seen += plan.out + plan.err;
  auto apply = ws.apply(burst_blueprint({pool}));
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  seen += apply.out + apply.err;
  for (const auto& cmd : std::vector<std::vector<std::string>>{{"refresh"}, {"plan", "--json"}}) {
    auto x = ws.run(cmd, burst_blueprint({pool}));
    seen += x.out + x.err;
  }
  auto providers = run_plinth({"providers", ws.dir.path() + "/bp.yaml", "--json"}, ws.dir.path(), ws.env);
  seen += providers.out + providers.err;
  seen += slurp(ws.state()) + slurp(ws.dir.path() + "/plan.bin");
  for (const auto& f : std::filesystem::recursive_directory_iterator(ws.dir.path() + "/plinth.state.json.d"))
    if (f.is_regular_file()) seen += slurp(f.path().string());
  CHECK(seen.find(kAwsSecretKey) == std::string::npos);
  CHECK(seen.find(token) == std::string::npos);
  CHECK(ec2.active().size() == 2);
}

TEST_CASE("aws: the example cluster blueprint's AWS burst pool applies against the emulator", "[e2e][aws]") {
  Ec2Emulator ec2;
  TempDir dir, home;
  const std::string bp = dir.write("cluster.yaml", slurp(source_dir() + "/blueprints/examples/cluster.yaml"));
  auto env = aws_env(ec2, home.path());
  const std::string st = dir.path() + "/plinth.state.json";
  auto r = run_plinth({"apply", bp, "--state", st, "--auto-approve", "-target", "aws.instance.aws-p5"}, dir.path(), env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto active = ec2.active();
  REQUIRE(active.size() == 2);
  for (const auto& i : active) {
    CHECK(i["lifecycle"] == "spot");
    CHECK(i["network_interfaces"].size() == 32);
    CHECK(i["volumes"][0]["encrypted"] == true);
  }
  CHECK(count_by(active, "availability_zone") == std::map<std::string, int>{{"us-east-1a", 1}, {"us-east-1b", 1}});
}

TEST_CASE("aws: a Capacity Block is targeted with MarketType capacity-block and its reservation", "[e2e][aws]") {
  Ec2Emulator ec2({"--capacity-reservation", "cr-0123456789abcdef0=p5.48xlarge:us-east-1b:2:capacity-block"});
  Ec2Workspace ws(ec2);
  BurstPool pool = aws_pool(2, "    capacity: {capacity_block: cr-0123456789abcdef0}\n", false);
  auto r = ws.applied(burst_blueprint({pool}));
  auto active = ec2.active();
  REQUIRE(active.size() == 2);
  for (const auto& i : active) {
    CHECK(i["lifecycle"] == "capacity-block");
    CHECK(i["capacity_reservation_id"] == "cr-0123456789abcdef0");
    CHECK(i["availability_zone"] == "us-east-1b");
  }
}

TEST_CASE("aws: burst pool settings are checked with file:line:column and did you mean", "[e2e][aws]") {
  TempDir dir;
  BurstPool pool = aws_pool();
  pool.extra = "    placement_grup: true\n    root_volume: {size_gb: big}\n";
  const std::string bp = dir.write("bp.yaml", burst_blueprint({pool}));
  auto r = run_plinth({"validate", bp}, dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(bp + ":27:5: error[BP002]: unknown key 'placement_grup' in burst pool 'gpu'") != std::string::npos);
  CHECK(r.err.find("did you mean 'placement_group'?") != std::string::npos);
  CHECK(r.err.find(bp + ":28:28:") != std::string::npos);
}

TEST_CASE("aws: changing only where new instances may go updates the pool in place", "[e2e][aws]") {
  Ec2Emulator ec2;
  Ec2Workspace ws(ec2);
  ws.applied(burst_blueprint({aws_pool(2, "    zones: [us-east-1a]\n")}));
  BurstPool wider = aws_pool(2, "    zones: [us-east-1a, us-east-1b]\n    instance_types: [p5.48xlarge, p5e.48xlarge]\n");
  auto p = ws.plan(burst_blueprint({wider}));
  INFO(p.out << p.err);
  CHECK(p.out.find("~ aws.instance.gpu[0] (update in place)") != std::string::npos);
  CHECK(p.out.find("0 to create, 2 to update, 0 to replace, 0 to destroy") != std::string::npos);
  ws.applied(burst_blueprint({wider}));
  CHECK(ec2.requests("CreateTags") == 2);  // the new attribute hash, nothing launched
  CHECK(ec2.instances().size() == 2);
  CHECK(ws.plan(burst_blueprint({wider})).exit_code == 0);
}

}  // namespace plinth::test::e2e_aws
