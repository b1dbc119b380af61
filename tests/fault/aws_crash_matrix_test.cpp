// The AWS half of the crash matrix (issue 16): an apply of a 40-instance
// burst pool against aws-ec2-emulator is SIGKILLed at 20 seeded points. After
// each kill the state must parse and pass its integrity checks; apply (with
// refresh, which adopts instances whose run died before recording them) is
// re-run until it converges; then the emulator must hold exactly the pool's
// instances (no duplicate address, no orphan carrying the state's lineage),
// the state must record exactly those, and a plan must show no changes.
//
// The pool goes through creates (0 -> 40 and 24 -> 40), terminates (40 -> 24)
// and create-before-destroy replaces (a stack pin change), so kills land in
// RunInstances, TerminateInstances, the wait for `running`, and between a
// replacement's journal write and the removal of its deposed object. At some
// steps (seeded) the blueprint also changes between the killed apply and the
// re-run, as when a person edits it after a crash.
//
// Reproduce a run with PLINTH_CRASH_SEED=N (the seed is printed). A kill point
// is "after K successful RunInstances/TerminateInstances of this apply, then R
// more emulator requests"; the test polls the request log, so the exact
// request the kill lands on can differ by the few requests in flight, the set
// of points does not.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "engine/state/state.h"
#include "tests/fault/fault.h"
#include "tests/support/clouds.h"

namespace plinth::test::fault_aws_crash_matrix {

namespace {

constexpr int kKills = 20;
constexpr int kParallelism = 10;
constexpr int kFull = 40, kShrunk = 24;
const std::array<const char*, 3> kDrivers = {"550.54.15", "550.90.07", "550.127.08"};

/// The pool at version v of the blueprint: v 0 is 40 instances on the first
/// driver; then, in turn, the driver pin changes (a replace of every
/// instance), the size changes (40 -> 24 or back), and both at once. The pin
/// cycles through three drivers, so an address comes back to attributes it
/// had before (its earlier ClientToken answers IdempotentInstanceTerminated).
struct Fleet {
  int count = kFull;
  int driver = 0;
};
Fleet fleet_at(int v) {
  Fleet f;
  for (int s = 1; s <= v; ++s) {
    const int phase = (s - 1) % 3;
    if (phase != 1) f.driver = (f.driver + 1) % static_cast<int>(kDrivers.size());
    if (phase != 0) f.count = f.count == kFull ? kShrunk : kFull;
  }
  return f;
}

/// The blueprint of the pool `f`.
std::string fleet_blueprint(const Fleet& f) {
  BurstPool pool = aws_pool(f.count);
  pool.zones = "[us-east-1a, us-east-1b]";
  return burst_blueprint({pool}, kDrivers[static_cast<size_t>(f.driver)], "aws-crash-matrix");
}

/// Reads a growing request log: lines so far, and the successful
/// RunInstances and TerminateInstances among them.
class RequestLog {
 public:
  explicit RequestLog(std::string path) : path_(std::move(path)) {}
  void poll() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t start = 0;
    for (size_t nl; (nl = chunk.find('\n', start)) != std::string::npos; start = nl + 1) {
      ++lines_;
      auto j = Json::parse(chunk.substr(start, nl - start), nullptr, false);
      if (j.is_discarded() || !j["status"].is_number() || j["status"].get<int>() != 200) continue;
      const std::string action = j.value("action", Json("")).is_string() ? j.value("action", "") : "";
      if (action == "RunInstances" || action == "TerminateInstances") ++mutations_;
    }
    offset_ += start;  // a partial last line is read again next time
  }
  size_t lines() const { return lines_; }
  size_t mutations() const { return mutations_; }

 private:
  std::string path_;
  size_t offset_ = 0, lines_ = 0, mutations_ = 0;
};

/// The sum of N over "HEADING N object(s)" lines of a run's output
/// ("Adopted: ", "Superseded: ").
size_t objects_in(const std::string& text, const std::string& heading) {
  size_t n = 0;
  for (auto p = text.find(heading); p != std::string::npos; p = text.find(heading, p + 1))
    n += std::strtoull(text.c_str() + p + heading.size(), nullptr, 10);
  return n;
}

}  // namespace

TEST_CASE("crash matrix (AWS): a 40-instance burst pool, apply SIGKILLed at 20 seeded points, state intact, re-run "
          "converges to exactly the pool, no duplicate or orphan instance",
          "[fault][crash][aws]") {
  const uint64_t seed = fault::crash_seed("crash matrix (AWS)");
  std::mt19937_64 rng(seed);
  const auto started = std::chrono::steady_clock::now();

  // A little latency and short state changes, so an apply of 40 instances
  // takes about a second and kills land mid-flight.
  Ec2Emulator ec2({"--pending-ms", "30", "--shutdown-ms", "30", "--latency-ms", "1-10"});
  TempDir dir, home;
  auto env = aws_env(ec2, home.path());
  env["PLINTH_AWS_POLL_MS"] = "10";
  // The emulator does not throttle; neither need the client's buckets.
  env["PLINTH_AWS_REQUEST_RATES"] = "mutating=1000:1000,non-mutating=1000:1000";
  const std::string st = dir.path() + "/plinth.state.json";
  RequestLog log(ec2.log_path());
  auto plinth = [&](std::vector<std::string> args) { return run_plinth(args, dir.path(), env); };

  size_t kills = 0, not_reached = 0, corrupt = 0, reruns = 0, edits = 0, resources_checked = 0, duplicates = 0,
         orphans = 0, unrecorded = 0, adopted = 0, superseded = 0, deposed_at_kill = 0;
  int version = 0;  // of the blueprint
  std::string bp;
  Fleet was{0, 0};  // what the emulator holds

  for (int step = 0; step < kKills; ++step, ++version) {
    const auto t0 = std::chrono::steady_clock::now();
    Fleet f = fleet_at(version);
    bp = dir.write("bp.yaml", fleet_blueprint(f));
    // How many RunInstances/TerminateInstances this apply makes: the
    // previous step converged to `was` (a replace is one of each).
    const size_t ops = static_cast<size_t>(f.driver != was.driver ? 2 * std::min(f.count, was.count) : 0) +
                       static_cast<size_t>(std::abs(f.count - was.count));
    REQUIRE(ops > 0);
    // The kill point: after K of them succeeded, R more requests (so it lands
    // in the wait for `running`, before a journal write, or inside the next
    // requests).
    const size_t k = std::uniform_int_distribution<size_t>(0, ops - 1)(rng);
    const size_t r = std::uniform_int_distribution<size_t>(0, 8)(rng);
    // At a quarter of the steps the blueprint changes again before the re-run.
    const bool edit = step + 1 < kKills && std::uniform_int_distribution<int>(0, 3)(rng) == 0;

    log.poll();
    const size_t mutations0 = log.mutations();
    const std::string out = dir.path() + "/apply-" + std::to_string(step) + ".txt";
    pid_t pid = fault::start_plinth({"apply", bp, "--state", st, "--auto-approve", "--parallelism",
                                     std::to_string(kParallelism)},
                                    out, [&] {
                                      for (const auto& [key, value] : env) setenv(key.c_str(), value.c_str(), 1);
                                      if (chdir(dir.path().c_str()) != 0) _exit(126);
                                    });
    int status = 0;
    std::optional<size_t> mark;  // log lines when K mutations had succeeded
    const bool exited = fault::exited_before_kill(pid, status, [&] {
      log.poll();
      if (!mark && log.mutations() >= mutations0 + k) mark = log.lines();
      return mark && log.lines() >= *mark + r;
    });
    if (!exited) {
      ++kills;
    } else {
      ++not_reached;  // the apply finished first
      INFO(slurp(out));
      CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }
    log.poll();
    const size_t done_at_kill = log.mutations() - mutations0;

    // The state after the kill parses and passes its own checks; the
    // instances the kill left running but unrecorded are counted.
    std::string lineage;
    {
      auto doc = fault::state_after_kill(st);
      if (!doc) {
        ++corrupt;
        FAIL("state after the kill at step " << step << " (seed " << seed << "): " << doc.error().message);
      }
      lineage = doc->lineage;
      std::set<std::string> addresses, ids;
      for (const auto& res : doc->resources) {
        CHECK(addresses.insert(res.address).second);
        ids.insert(res.computed.value("id", ""));
      }
      std::set<std::string> deposed;
      for (const auto& res : doc->deposed) {
        CHECK(deposed.insert(res.address).second);
        ids.insert(res.computed.value("id", ""));
      }
      deposed_at_kill += deposed.size();
      for (const auto& i : ec2.active(lineage)) unrecorded += ids.count(i["instance_id"].get<std::string>()) ? 0 : 1;
    }
    std::printf("  step %2d: %2d instances on driver %s, %3zu operations, kill after %3zu + %zu requests: %s (%zu done)",
                step, f.count, kDrivers[static_cast<size_t>(f.driver)], ops, k, r,
                exited ? "apply finished first" : "SIGKILL", done_at_kill);
    if (edit) {
      f = fleet_at(++version);
      bp = dir.write("bp.yaml", fleet_blueprint(f));
      ++edits;
      std::printf(", blueprint changed to %d on %s before the re-run", f.count,
                  kDrivers[static_cast<size_t>(f.driver)]);
    }
    std::fflush(stdout);

    // Re-run until it converges (it must in one run: nothing is failing).
    for (int attempt = 0;; ++attempt) {
      REQUIRE(attempt < 3);
      auto a = plinth({"apply", bp, "--state", st, "--auto-approve", "--parallelism", std::to_string(kParallelism)});
      ++reruns;
      INFO("step " << step << " (seed " << seed << ") re-run: " << a.out << a.err << ec2.stderr_text());
      REQUIRE(a.exit_code == 0);
      adopted += objects_in(a.err, "Adopted: ");
      superseded += objects_in(a.err, "Superseded: ");
      auto p = plinth({"plan", bp, "--state", st, "--detailed-exitcode"});
      INFO(p.out << p.err);
      if (p.exit_code == 0) break;
      REQUIRE(p.exit_code == 2);
    }

    // The emulator: exactly the pool's instances, each address once, on the
    // driver the blueprint pins.
    auto doc = state::parse(slurp(st), st);
    REQUIRE(doc.ok());
    std::map<std::string, std::string> running;  // address -> id
    for (const auto& i : ec2.active(doc->lineage)) {
      const std::string address = i["tags"].value("plinth:address", "");
      const std::string id = i["instance_id"].get<std::string>();
      INFO("step " << step << " (seed " << seed << "): " << id << " at " << address);
      if (!running.emplace(address, id).second) ++duplicates;
      CHECK(i["user_data"].get<std::string>().find(kDrivers[static_cast<size_t>(f.driver)]) != std::string::npos);
    }
    std::set<std::string> want;
    for (int i = 0; i < f.count; ++i) want.insert("aws.instance.gpu[" + std::to_string(i) + "]");
    for (const auto& [address, id] : running)
      if (!want.count(address)) ++orphans;

    // The state: exactly those instances, nothing deposed.
    std::map<std::string, std::string> recorded;
    for (const auto& res : doc->resources)
      if (res.type == "aws.instance") recorded[res.address] = res.computed.value("id", "");
    for (const auto& [address, id] : running) {
      INFO("step " << step << " (seed " << seed << "): " << address << " " << id << " runs but is not recorded");
      if (recorded.count(address) == 0 || recorded[address] != id) ++orphans;
    }
    CHECK(recorded.size() == static_cast<size_t>(f.count));
    for (const auto& [address, id] : recorded) {
      INFO("step " << step << " (seed " << seed << "): the state records " << address << " as " << id);
      CHECK(running.count(address) == 1);
      CHECK(running[address] == id);
    }
    CHECK(doc->deposed.empty());
    resources_checked += recorded.size() + running.size();
    was = f;
    std::printf(" %.1fs\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::fflush(stdout);
  }

  // Finally a plan that reads every instance shows no changes and no drift.
  {
    auto p = plinth({"plan", bp, "--state", st, "--detailed-exitcode"});
    INFO(p.out << p.err);
    CHECK(p.exit_code == 0);
    CHECK(p.err.find("Drift") == std::string::npos);
  }

  std::printf(
      "crash matrix (AWS): seed %llu, %d kill points (%zu SIGKILLs, %zu applies finished before their point), "
      "%zu blueprint changes between a kill and its re-run, %zu re-runs, %zu instances running unrecorded after a "
      "kill (refresh adopted %zu and deposed %zu superseded ones), %zu deposed objects at a kill, %zu resources "
      "checked, duplicates %zu, orphans %zu, corrupt states %zu, %.0fs\n",
      static_cast<unsigned long long>(seed), kKills, kills, not_reached, edits, reruns, unrecorded, adopted,
      superseded, deposed_at_kill, resources_checked, duplicates, orphans, corrupt,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  CHECK(duplicates == 0);
  CHECK(orphans == 0);
  CHECK(corrupt == 0);
  CHECK(kills >= kKills / 2);
}

}  // namespace plinth::test::fault_aws_crash_matrix
