#pragma once
// What the fault tests share beyond tests/support: a one-pool blueprint,
// plinth started as a child that a test can kill, the crash matrices' seed
// and kill, and the power states the redfish-emulator's servers are in.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"

namespace plinth::test::fault {

/// Starts plinth with `args` as a child (stdout and stderr to `out`, stdin
/// /dev/null, BMC_CREDENTIALS set, run from the repository root); returns its
/// pid. `in_child` runs in the child just before exec (limits, signals).
inline pid_t start_plinth(const std::vector<std::string>& args, const std::string& out,
                          const std::function<void()>& in_child = {}) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int n = ::open("/dev/null", O_RDONLY);
    dup2(o, 1);
    dup2(o, 2);
    dup2(n, 0);
    if (chdir(source_dir().c_str()) != 0) _exit(126);
    setenv("BMC_CREDENTIALS", "admin:admin", 1);
    if (in_child) in_child();
    std::vector<std::string> argv = {plinth_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  return pid;
}

/// The blueprint `name` with one pool, `pool`, of `count` inference nodes on the emulator `emu`
/// (node i on BMC i).
inline std::string one_pool_blueprint(const std::string& name, const std::string& pool, int count,
                                      const Emulator& emu) {
  return baremetal_blueprint(name, baremetal_pool({.name = pool,
                                                   .count = count,
                                                   .role = "inference",
                                                   .endpoints = bmc_endpoints(emu.base()),
                                                   .ca = emu.ca()}));
}

/// A crash matrix's seed: $PLINTH_CRASH_SEED, or a random one; printed as "`matrix`: seed N (rerun
/// with PLINTH_CRASH_SEED=N)".
inline uint64_t crash_seed(const char* matrix) {
  uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("PLINTH_CRASH_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::printf("%s: seed %llu (rerun with PLINTH_CRASH_SEED=%llu)\n", matrix, static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  return seed;
}

/// Waits for the child `pid` (start_plinth) until it exits or `reached()` says its kill point has come;
/// then SIGKILLs it. Whether it exited first; `status` is its wait status.
inline bool exited_before_kill(pid_t pid, int& status, const std::function<bool()>& reached) {
  while (true) {
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    if (reached()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(kill(pid, SIGKILL) == 0);
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  return false;
}

/// The state a killed apply left at `path`, read as plinth reads it (the
/// state file with its change log applied, docs/state.md); the state file
/// itself must parse too. An error says which did not.
inline Result<state::StateDocument> state_after_kill(const std::string& path) {
  if (auto file = state::parse(slurp(path), path); !file) return file.error();
  auto loaded = state::open_local(path)->load();
  if (!loaded) return loaded.error();
  if (!*loaded) return Error::invalid("no state at " + path);
  return std::move(**loaded);
}

/// The serial of the local state at `path` as saves are written, cheap
/// enough to poll: the state file's header serial plus the complete lines of
/// its change log (one per save since the file was last written); 0 when
/// there is no file yet or it is being replaced.
inline uint64_t saved_serial(const std::string& path) {
  std::ifstream in(path);
  char buf[256] = {};
  in.read(buf, sizeof buf - 1);
  const char* p = std::strstr(buf, "\"serial\": ");
  if (!p) return 0;
  uint64_t serial = std::strtoull(p + 10, nullptr, 10);
  std::ifstream log(path + ".d/changes.log", std::ios::binary);
  for (std::string line; std::getline(log, line) && !log.eof();) ++serial;
  return serial;
}

/// The PowerState of BMCs 0 .. n-1, read over Redfish.
inline std::vector<std::string> power_states(const Emulator& emu, int n) {
  auto r = redfish_python(
      "for i in range(int(sys.argv[3])):\n"
      "  c.request('GET','/bmc/%d/redfish/v1/Systems/437XR1138R2'%i,headers={'Authorization':auth})\n"
      "  print(json.loads(c.getresponse().read())['PowerState'])\n",
      emu.ca(), emu.base(), {std::to_string(n)});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace plinth::test::fault
