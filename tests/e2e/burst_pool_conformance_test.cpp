// The burst-pool contract (docs/providers/burst-pool-contract.md), each case
// written once and run for every cloud of PLINTH_BURST_CLOUDS against its
// emulator: the built `plinth` from a temporary blueprint directory, with the
// user's environment. What a cloud supplies (its emulator, pools, requests,
// faults and words) is its CloudUnderTest in tests/support/burst_cloud*.cpp;
// what only one cloud does is in tests/e2e/aws_test.cpp, gcp_test.cpp and
// azure_test.cpp. One cloud's cases: test_e2e '*- AwsCloud'.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "engine/state/state.h"
#include "tests/support/blueprints.h"
#include "tests/support/burst_cloud.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
#include "tests/support/workspace.h"

namespace plinth::test::conformance {

namespace {

/// How many of `list` have each value of `field`.
std::map<std::string, int> tally(const std::vector<CloudInstance>& list, std::string CloudInstance::*field) {
  std::map<std::string, int> out;
  for (const auto& i : list) ++out[i.*field];
  return out;
}

/// LINE:COLUMN of the first `part` in `text`, `skip` characters into it.
std::string position(const std::string& text, const std::string& part, size_t skip = 0) {
  const size_t at = text.find(part);
  REQUIRE(at != std::string::npos);
  const size_t pos = at + skip;
  const size_t line_start = text.rfind('\n', pos == 0 ? 0 : pos - 1);
  const size_t column = line_start == std::string::npos ? pos + 1 : pos - line_start;
  return std::to_string(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n') + 1) + ":" +
         std::to_string(column);
}

/// Whether a line of `out` that holds `prefix` holds `words` after it.
bool said(const std::string& out, const std::string& prefix, const std::string& words) {
  for (size_t at = out.find(prefix); at != std::string::npos; at = out.find(prefix, at + 1)) {
    const std::string rest = out.substr(at, out.find('\n', at) - at);
    if (rest.find(words) != std::string::npos) return true;
  }
  return false;
}

const std::string kNewDriver = "550.90.07";

}  // namespace

TEMPLATE_TEST_CASE("burst pool: a spot pool of 8 over two zones applies, re-plans clean, 8 -> 4 removes the highest "
                   "indexes, and a stack pin change replaces create-before-destroy, refused while there is no capacity",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start({.operation_ms = 20});  // creates and deletes take a while: the provider waits for them
  CloudWorkspace ws(cloud);
  const std::string type = cloud.instance_types()[0], z1 = cloud.zones()[0], z2 = cloud.zones()[1];
  const std::string pool_name = cloud.resource_type() + ".gpu";
  const BurstPool pool = cloud.pool({.desired = 8, .zones = 2, .own_settings = true});

  auto r = ws.applied(burst_blueprint({pool}));
  auto active = cloud.active();
  REQUIRE(active.size() == 8);
  CHECK(tally(active, &CloudInstance::zone) == std::map<std::string, int>{{z1, 4}, {z2, 4}});
  CHECK(tally(active, &CloudInstance::type) == std::map<std::string, int>{{type, 8}});
  const std::string lineage = ws.doc().lineage;
  std::set<std::string> addresses;
  for (const auto& i : active) {
    CHECK(i.spot);
    CHECK(i.lineage == lineage);
    CHECK(i.user_data.rfind("#cloud-config", 0) == 0);
    addresses.insert(i.address);
  }
  CHECK(addresses.size() == 8);
  CHECK(ws.in_state(cloud.resource_type()) == 8);
  CHECK(r.out.find("4 x " + pool_name + ": instance_type " + type + ", zone " + z1) != std::string::npos);
  CHECK(cloud.requests(Call::create) == 8);
  CHECK(cloud.token_requests() == cloud.tokens_per_run());  // one token for the run, shared by its parallel creates
  cloud.check_pool(active, ws, r);
  cloud.check_companions();

  // Nothing changed: the plan is empty.
  auto again = ws.plan(burst_blueprint({pool}));
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("No changes.") != std::string::npos);

  // A new driver pin is a new user-data hash: replace, create before destroy.
  auto p = ws.plan(burst_blueprint({pool}, kNewDriver));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  const std::string pool_address = cloud.address(0).substr(0, cloud.address(0).rfind('['));
  CHECK(contains(p.out, "+/- " + pool_address + "[0..7]  8 to replace, create before destroy, forced by: user_data_hash\n"));

  // 8 -> 4 removes 4, the highest indexes.
  BurstPool four = pool;
  four.desired = 4;
  auto down = ws.applied(burst_blueprint({four}));
  CHECK(down.out.find("0 to create, 0 to update, 0 to replace, 4 to destroy") != std::string::npos);
  addresses.clear();
  for (const auto& i : cloud.active()) addresses.insert(i.address);
  CHECK(addresses == std::set<std::string>{cloud.address(0), cloud.address(1), cloud.address(2), cloud.address(3)});
  CHECK(cloud.requests(Call::remove) == 4);
  CHECK(cloud.instances().size() == (cloud.keeps_removed() ? 8u : 4u));
  CHECK(ws.in_state(cloud.resource_type()) == 4);
  cloud.check_companions();

  // The replace is refused while there is no capacity: the old four stay.
  const std::string four_pinned = burst_blueprint({four}, kNewDriver);
  cloud.capacity(type, "", 2);  // in each zone exactly what runs there now
  auto refused = ws.apply(four_pinned);
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.find(cloud.capacity_code()) != std::string::npos);
  CHECK(refused.out.find("the old object was kept") != std::string::npos);
  CHECK(cloud.active().size() == 4);
  CHECK(ws.in_state(cloud.resource_type()) == 4);
  CHECK(ws.doc().deposed.empty());
  cloud.check_companions();

  // With capacity the replacements come first, then the old four go.
  cloud.capacity(type, "", nullptr);
  std::set<std::string> old_ids, old_names;
  for (const auto& i : cloud.active()) {
    old_ids.insert(i.uid);
    old_names.insert(i.name);
  }
  const size_t mark = cloud.log_mark();
  ws.applied(four_pinned);
  auto now = cloud.active();
  CHECK(now.size() == 4);
  for (const auto& i : now) {
    CHECK(old_ids.count(i.uid) == 0);
    CHECK(old_names.count(i.name) == 0);  // made beside the old ones, so under other names
  }
  CHECK(ws.doc().deposed.empty());
  CHECK(ws.plan(four_pinned).exit_code == 0);
  // Create before destroy, per instance: an old instance is removed only after its replacement was made, so the
  // pool never has fewer than 4. (Another instance's removal may come before the last create: the replaces run in
  // parallel.)
  const auto sizes = cloud.pool_sizes_since(mark, 4);
  REQUIRE(sizes.size() == 8);  // 4 made, 4 removed
  CHECK(*std::min_element(sizes.begin(), sizes.end()) >= 4);
  CHECK(sizes.back() == 4);
  cloud.check_companions();

  // What the cloud made with the instances goes with the pool's last ones.
  auto gone = ws.run({"destroy", "--auto-approve"}, four_pinned);
  INFO(gone.out << gone.err);
  REQUIRE(gone.exit_code == 0);
  CHECK(cloud.active().empty());
  CHECK(cloud.instances().size() == (cloud.keeps_removed() ? 12u : 0u));
  cloud.check_companions();
}

TEMPLATE_TEST_CASE("burst pool: with room for 3 of the pool's type in zone a and 2 in zone b, the fallback zone and "
                   "type fill a pool of 8 in one apply, and the summary says where each instance went",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start();
  const std::string type = cloud.instance_types()[0], fallback = cloud.instance_types()[1];
  const std::string z1 = cloud.zones()[0], z2 = cloud.zones()[1];
  cloud.capacity(type, z1, 3);
  cloud.capacity(type, z2, 2);
  CloudWorkspace ws(cloud);
  const BurstPool pool = cloud.pool({.desired = 8, .zones = 2, .fallback = true});
  auto r = ws.applied(burst_blueprint({pool}));
  auto active = cloud.active();
  REQUIRE(active.size() == 8);
  std::map<std::string, int> placed;
  for (const auto& i : active) ++placed[i.type + " " + i.zone];
  CHECK(placed[type + " " + z1] == 3);
  CHECK(placed[type + " " + z2] == 2);
  CHECK(placed[fallback + " " + z1] + placed[fallback + " " + z2] == 3);
  // The summary says where each instance went, as the emulator has them: one
  // line per type and zone naming its instances, each instance once.
  const std::string pool_name = cloud.resource_type() + ".gpu";
  std::map<std::string, std::vector<int>> where;  // "instance_type T, zone Z" -> indices
  for (const auto& i : active) {
    auto parts = parse_address(i.address);
    REQUIRE(parts);
    where["instance_type " + i.type + ", zone " + i.zone].push_back(parts->index);
  }
  const std::string expected = placement_lines(pool_name, where);
  CHECK(r.out.find(expected) != std::string::npos);
  CHECK(r.out.find("3 x " + pool_name + ": instance_type " + type + ", zone " + z1 + ": [") != std::string::npos);
  CHECK(r.out.find("2 x " + pool_name + ": instance_type " + type + ", zone " + z2 + ": [") != std::string::npos);
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);  // the fallback choice is no drift
  cloud.check_companions();
}

TEMPLATE_TEST_CASE("burst pool: without fallbacks a pool without capacity fails at once with the cloud's message "
                   "naming the type and the zone",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start();
  const std::string type = cloud.instance_types()[0], z1 = cloud.zones()[0];
  cloud.capacity(type, z1, 0);
  CloudWorkspace ws(cloud);
  auto r = ws.apply(burst_blueprint({cloud.pool({.desired = 3, .zones = 1, .spot = false})}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find(cloud.address(0) + ": " + cloud.no_capacity(type, z1)) != std::string::npos);
  CHECK(r.out.find(cloud.fallback_hint()) != std::string::npos);
  CHECK(cloud.requests(Call::create) == 3);  // one each: a refusal for capacity is never retried as a blip
  CHECK(cloud.instances().empty());
  CHECK(ws.in_state(cloud.resource_type()) == 0);
  cloud.check_companions();
}

TEMPLATE_TEST_CASE("burst pool: with throttling on, the apply finishes and every throttled request was retried",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start({.throttled = true});
  CloudWorkspace ws(cloud);
  auto r = ws.applied(burst_blueprint({cloud.pool({.desired = 12})}));
  CHECK(r.out.find("Failed:") == std::string::npos);
  // Every throttled answer the emulator gave shows as a retry, none as a failure.
  const int throttled = cloud.throttled();
  CHECK(throttled > 0);
  for (Call c : cloud.throttled_calls()) CHECK(cloud.throttled(c) > 0);
  CHECK(count_of(r.out, " failed, retrying in ") == static_cast<size_t>(throttled));
  CHECK(count_of(r.out, cloud.throttle_words()) == static_cast<size_t>(throttled));
  CHECK(cloud.active().size() == 12);
}

TEMPLATE_TEST_CASE("burst pool: the client-side token bucket keeps an apply under the cloud's request rate",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start({.rate_limited = true});
  CloudWorkspace ws(cloud);
  auto r = ws.applied(burst_blueprint({cloud.pool({.desired = 6})}));
  CHECK(cloud.throttled() == 0);  // the cloud never had to say slow down
  CHECK(r.out.find(cloud.throttle_words()) == std::string::npos);
  CHECK(cloud.requests(Call::create) == 6);
  CHECK(cloud.active().size() == 6);
}

TEMPLATE_TEST_CASE("burst pool: create and remove answers lost after the cloud carried them out make no duplicate "
                   "instance and remove once",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start();
  CloudWorkspace ws(cloud);
  cloud.lose_answers(Call::create, 3);
  const std::string five = burst_blueprint({cloud.pool({.desired = 5})});
  ws.applied(five);
  CHECK(cloud.lost() == 3);
  auto all = cloud.instances();
  CHECK(all.size() == 5);  // removed ones included: nothing was made twice
  std::set<std::string> addresses;
  for (const auto& i : all) addresses.insert(i.address);
  CHECK(addresses.size() == 5);
  CHECK(ws.plan(five).exit_code == 0);
  cloud.check_companions();

  cloud.lose_answers(Call::remove, 2);
  const std::string two = burst_blueprint({cloud.pool({.desired = 2})});
  ws.applied(two);
  CHECK(cloud.lost() == 5);
  CHECK(cloud.active().size() == 2);
  CHECK(cloud.instances().size() == (cloud.keeps_removed() ? 5u : 2u));
  CHECK(ws.plan(two).exit_code == 0);
  cloud.check_companions();
}

TEMPLATE_TEST_CASE("burst pool: an instance whose answer was lost and whose run crashed is adopted by refresh, never "
                   "duplicated",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start();
  CloudWorkspace ws(cloud);
  const std::string bp = burst_blueprint({cloud.pool({.desired = 3})});
  ws.applied(bp);
  // Forget one instance in state, as if the run had died before journaling it.
  const std::string forgotten = cloud.address(1);
  const std::string id = ws.recorded(forgotten).computed["id"];
  auto doc = ws.doc();
  std::erase_if(doc.resources, [&](const Resource& r) { return r.address == forgotten; });
  doc.serial += 1;
  REQUIRE(state::open_local(ws.state())->save(doc).ok());
  auto r = ws.run({"refresh"}, bp);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("Adopted: 1 object(s)") != std::string::npos);
  CHECK(r.err.find("  + " + forgotten + " (" + id + ")\n") != std::string::npos);
  CHECK(ws.doc().find(forgotten) != nullptr);
  auto p = ws.plan(bp);
  INFO(p.out << p.err);
  CHECK(p.exit_code == 0);
  CHECK(cloud.instances().size() == 3);
}

TEMPLATE_TEST_CASE("burst pool: an unrecorded instance at an address the state holds with another (a replace killed "
                   "before its journal write, then the blueprint changed) is deposed and removed, never left running",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start();
  CloudWorkspace ws(cloud);
  const std::string bp = burst_blueprint({cloud.pool({.desired = 3})});
  ws.applied(bp);
  const std::string stray = cloud.make_stray(ws, cloud.address(1));
  REQUIRE(cloud.active().size() == 4);

  auto p = ws.plan(bp);
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("Superseded: 1 object(s) made for this state at an address it records with another object; "
                   "recorded as deposed, the next apply removes them:\n  - " +
                   cloud.address(1) + " (" + stray + ")") != std::string::npos);
  CHECK(p.out.find("- " + cloud.address(1) + " (deposed)") != std::string::npos);
  CHECK(p.out.find("0 to create, 0 to update, 0 to replace, 1 to destroy") != std::string::npos);
  ws.applied(bp);
  auto active = cloud.active();
  CHECK(active.size() == 3);
  for (const auto& i : active) CHECK(i.id != stray);
  CHECK(ws.doc().deposed.empty());
  CHECK(ws.in_state(cloud.resource_type()) == 3);
  CHECK(ws.plan(bp).exit_code == 0);
  cloud.check_companions();
}

TEMPLATE_TEST_CASE("burst pool: a spot instance the cloud took back (reclaimed, preempted, evicted) shows as such, not "
                   "as drift, and is created again",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  for (const std::string& kind : cloud.reclaim_kinds()) {
    DYNAMIC_SECTION(kind) {
      cloud.start();
      CloudWorkspace ws(cloud);
      const std::string bp = burst_blueprint({cloud.pool({.desired = 3, .zones = 1, .extra = cloud.reclaim_setting(kind)})});
      ws.applied(bp);
      const std::string address = cloud.address(2);
      const Resource victim = ws.recorded(address);
      std::string victim_uid;
      for (const auto& i : cloud.active()) victim_uid = i.address == address ? i.uid : victim_uid;
      REQUIRE(!victim_uid.empty());
      const Reclaimed how = cloud.reclaim(victim, kind);
      auto p = ws.plan(bp);
      INFO(p.out << p.err);
      CHECK(p.exit_code == 2);
      REQUIRE(!how.gone.empty());
      CHECK(p.err.find("Gone: 1 resource(s) removed by their provider, not by a person:\n  - " + address + ": " +
                       how.gone.front()) != std::string::npos);
      for (const auto& words : how.gone) CHECK(p.err.find(words) != std::string::npos);
      CHECK(p.err.find("Drift:") == std::string::npos);
      CHECK(p.out.find("+ " + address + " (create)") != std::string::npos);
      const int restarts = how.restart_call.empty() ? 0 : cloud.requests(how.restart_call);
      ws.applied(bp);
      CHECK(cloud.active().size() == 3);
      // What the cloud took back was removed before its name was used again (a stopped GCP instance).
      CHECK(cloud.instances().size() == (cloud.keeps_removed() ? 4u : 3u));
      std::string uid;
      for (const auto& i : cloud.active()) uid = i.address == address ? i.uid : uid;
      if (how.restart_call.empty()) {  // a new instance (Azure names it as the old one: its vmId differs)
        CHECK(uid != victim_uid);
      } else {  // started again: the same instance
        CHECK(uid == victim_uid);
        CHECK(ws.recorded(address).computed["id"] == victim.computed["id"]);
        CHECK(cloud.requests(how.restart_call) == restarts + 1);
      }
      CHECK(ws.plan(bp).exit_code == 0);
    }
  }
}

TEMPLATE_TEST_CASE("burst pool: wrong credentials give the cloud's error and touch nothing", "[e2e][burst-pool]",
                   PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start();
  CloudWorkspace ws(cloud);
  const Refusal refusal = cloud.spoil_credentials(ws);
  auto r = ws.apply(burst_blueprint({cloud.pool({.desired = 2})}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(said(r.out, cloud.address(0) + ": ", refusal.words));
  CHECK(cloud.instances().empty());
  CHECK(ws.in_state(cloud.resource_type()) == 0);
  // One create each when the cloud checks every request, never retried; else not one request past the token.
  CHECK(cloud.requests(Call::create) == (refusal.api_sees_each ? 2 : 0));
  CHECK(cloud.token_requests() == refusal.token_requests);  // the refusal is remembered: not one per instance
  if (!refusal.api_sees_each)
    CHECK(cloud.requests_since(0) == std::map<std::string, int>{{cloud.token_call(), refusal.token_requests}});
}

TEMPLATE_TEST_CASE("burst pool: refresh of many instances takes O(pages) list requests and none per instance",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start();
  CloudWorkspace ws(cloud);
  const Population many = cloud.populate(ws);
  const size_t mark = cloud.log_mark();
  auto r = run_plinth({"refresh", "--state", ws.state()}, ws.dir.path(), ws.env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("No drift: all " + std::to_string(ws.doc().resources.size()) + " resource(s)") != std::string::npos);
  // The pages to read them, as many more to look for instances of the state it does not record, the run's
  // token; nothing else.
  const int pages = (many.instances + many.per_page - 1) / many.per_page;
  std::map<std::string, int> expected = {{cloud.call(Call::list), 2 * pages}};
  if (cloud.tokens_per_run() > 0) expected[cloud.token_call()] = cloud.tokens_per_run();
  CHECK(cloud.requests_since(mark) == expected);
}

TEMPLATE_TEST_CASE("burst pool: secrets of every credential source never reach plan files, reports, the state, the "
                   "output or traces",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start({.temporary_credentials = true});
  std::string seen;
  for (const auto& kind : cloud.credential_kinds()) {
    INFO(kind);
    CloudWorkspace ws(cloud);
    cloud.use_credentials(ws, kind);
    // Every trace on: each HTTP request (PLINTH_LOG) and each cloud call with its answer (PLINTH_DEBUG_*).
    for (const char* v : {"PLINTH_DEBUG_AWS", "PLINTH_DEBUG_GCP", "PLINTH_DEBUG_AZURE"}) ws.env[v] = "1";
    ws.env["PLINTH_LOG"] = "trace";
    const std::string bp = burst_blueprint({cloud.pool({.desired = 2})});
    const std::string reports = ws.dir.path() + "/reports";
    std::filesystem::create_directories(reports);
    auto plan = ws.run({"plan", "-out", ws.dir.path() + "/plan.bin", "--report", "json:" + reports + "/plan.json",
                        "--report", "sarif:" + reports + "/plan.sarif", "--report", "html:" + reports + "/plan.html"},
                       bp);
    INFO(plan.out << plan.err);
    CHECK(plan.exit_code == 0);
    seen += plan.out + plan.err;
    auto apply = ws.apply(bp);
    INFO(apply.out << apply.err);
    REQUIRE(apply.exit_code == 0);
    seen += apply.out + apply.err;
    CHECK(cloud.active().size() == 2);
    for (const auto& cmd : std::vector<std::vector<std::string>>{{"refresh"}, {"plan", "--json"}}) {
      auto x = ws.run(cmd, bp);
      seen += x.out + x.err;
    }
    auto providers = run_plinth({"providers", ws.dir.path() + "/bp.yaml", "--json"}, ws.dir.path(), ws.env);
    seen += providers.out + providers.err;
    auto audit = ws.run({"audit", "--output", reports + "/audit.json"}, bp);
    seen += audit.out + audit.err;
    auto d = ws.run({"destroy", "--auto-approve"}, bp);
    CHECK(d.exit_code == 0);
    seen += d.out + d.err;
    // Every file the runs wrote: the plan file, the reports, the state and its history.
    int files = 0;
    for (const auto& f : std::filesystem::recursive_directory_iterator(ws.dir.path()))
      if (f.is_regular_file()) {
        seen += slurp(f.path().string());
        ++files;
      }
    CHECK(files >= 8);
  }
  REQUIRE(contains(seen, "plinth trace: http: "));  // the traces were on
  for (const auto& secret : cloud.secrets()) {
    INFO(secret);
    CHECK(seen.find(secret) == std::string::npos);
  }
}

TEMPLATE_TEST_CASE("burst pool: the example blueprint's pool applies against the emulator and re-plans clean",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start();
  const ExampleBlueprint example = cloud.example();
  TempDir dir;
  const std::string bp = dir.write(std::filesystem::path(example.file).filename().string(),
                                   slurp(source_dir() + "/" + example.file));
  const std::string st = dir.path() + "/plinth.state.json";
  std::vector<std::string> args = {"apply", bp, "--state", st, "--auto-approve"};
  args.insert(args.end(), example.args.begin(), example.args.end());
  auto r = run_plinth(args, dir.path(), cloud.env());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto active = cloud.active();
  REQUIRE(active.size() == example.instances);
  for (const auto& i : active) CHECK(i.spot);
  if (!example.zones.empty()) CHECK(tally(active, &CloudInstance::zone) == example.zones);
  example.check(active);
  args = {"plan", bp, "--state", st, "--detailed-exitcode"};
  args.insert(args.end(), example.args.begin(), example.args.end());
  auto again = run_plinth(args, dir.path(), cloud.env());
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
}

TEMPLATE_TEST_CASE("burst pool: pool settings are checked with file:line:column and did you mean", "[e2e][burst-pool]",
                   PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  const CloudUnderTest& cloud = *impl;  // no emulator: validate reads the blueprint alone
  const Misspelling wrong = cloud.misspelling();
  TempDir dir;
  const std::string text = burst_blueprint({cloud.pool({.extra = wrong.lines})});
  const std::string bp = dir.write("bp.yaml", text);
  auto r = run_plinth({"validate", bp}, dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(bp + ":" + position(text, "    " + wrong.wrong + ":", 4) + ": error[BP002]: unknown key '" +
                   wrong.wrong + "' in burst pool 'gpu'") != std::string::npos);
  CHECK(r.err.find("did you mean '" + wrong.suggestion + "'?") != std::string::npos);
  const std::string value = "size_gb: " + wrong.bad_value;
  CHECK(r.err.find(bp + ":" + position(text, value, value.size() - wrong.bad_value.size()) + ":") != std::string::npos);
}

TEMPLATE_TEST_CASE("burst pool: changing only where new instances may go updates the pool in place, nothing is made",
                   "[e2e][burst-pool]", PLINTH_BURST_CLOUDS) {
  const auto impl = TestType::make();
  CloudUnderTest& cloud = *impl;
  cloud.start();
  CloudWorkspace ws(cloud);
  ws.applied(burst_blueprint({cloud.pool({.desired = 2, .zones = 1})}));
  const InPlaceSetting own = cloud.in_place_setting();
  const std::string wider = burst_blueprint({cloud.pool({.desired = 2, .zones = 2, .fallback = true, .extra = own.lines})});
  auto p = ws.plan(wider);
  INFO(p.out << p.err);
  const std::string pool_address = cloud.address(0).substr(0, cloud.address(0).rfind('['));
  CHECK(contains(p.out, "~ " + pool_address + "[0, 1]  2 to update in place\n"));
  CHECK(p.out.find("0 to create, 2 to update, 0 to replace, 0 to destroy") != std::string::npos);
  const int creates = cloud.requests(Call::create);
  ws.applied(wider);
  CHECK(cloud.requests(Call::update) == 2);  // the new attributes hash, nothing made
  CHECK(cloud.requests(Call::create) == creates);
  CHECK(cloud.instances().size() == 2);
  const auto active = cloud.active();
  for (const auto& i : active) CHECK(i.zone == cloud.zones()[0]);
  if (own.check) own.check(active, ws.doc().lineage);
  CHECK(ws.plan(wider).exit_code == 0);
}

}  // namespace plinth::test::conformance
