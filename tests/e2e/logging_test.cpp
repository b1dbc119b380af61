// --log-level and PLINTH_LOG (docs/logging.md): what each level adds on
// stderr during a real apply against the Redfish emulator, and that the
// trace of every HTTP request holds no secret.
#include <catch2/catch.hpp>

#include "engine/core/sanitized.h"

#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_logging {

TEST_CASE("log level trace shows every HTTP request with its status and time, and no secret", "[e2e][habits][logging]") {
  const std::string password = "Tr4ce-bmc-pw-5e1d0c";
  Emulator emu(h100_emulator_args(2, {"--power-delay-ms", "0", "--password", password}));
  TempDir dir;
  dir.write("bp.yaml", baremetal_blueprint("logging", baremetal_pool({.count = 2,
                                                                       .endpoints = bmc_endpoints(emu.base()),
                                                                       .ca = emu.ca(),
                                                                       .credentials = "env:BMC_LOG_CREDS"})));
  const std::map<std::string, std::string> env = {{"BMC_LOG_CREDS", "admin:" + password}};

  auto plain = run_plinth({"plan", "bp.yaml"}, dir.path(), env);
  INFO(plain.err);
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(contains(plain.err, "plinth info:"));
  CHECK_FALSE(contains(plain.err, "plinth trace:"));

  auto apply = run_plinth({"apply", "bp.yaml", "--auto-approve", "--log-level", "trace"}, dir.path(), env);
  INFO(apply.err);
  REQUIRE(apply.exit_code == 0);
  CHECK(contains(apply.err, "plinth info: state: locked plinth.state.json for plinth apply\n"));
  CHECK(contains(apply.err, "plinth trace: http: POST " + emu.base() +
                                "/bmc/1/redfish/v1/SessionService/Sessions -> 201 ("));
  CHECK(contains(apply.err, "plinth trace: http: POST " + emu.base() +
                                "/bmc/0/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset -> "));
  CHECK(contains(apply.err, "plinth debug: apply: baremetal.node.train-a[1]: create succeeded after 1 attempt(s) in "));
  CHECK_FALSE(contains(apply.err, password));
  CHECK_FALSE(contains(apply.out, password));
  CHECK_FALSE(contains(apply.out, "plinth trace:"));  // stdout is the command's own output

  // PLINTH_LOG sets the level for every run; debug has the reads, not the HTTP lines.
  auto env_debug = env;
  env_debug["PLINTH_LOG"] = "debug";
  auto refresh = run_plinth({"plan", "bp.yaml"}, dir.path(), env_debug);
  INFO(refresh.err);
  CHECK(refresh.exit_code == 0);
  CHECK(contains(refresh.err, "plinth debug: refresh: provider baremetal: read 2 resource(s) in "));
  CHECK_FALSE(contains(refresh.err, "plinth trace:"));
  // The flag wins over the variable.
  auto quiet = run_plinth({"plan", "bp.yaml", "--log-level=error"}, dir.path(), env_debug);
  CHECK(quiet.exit_code == 0);
  CHECK_FALSE(contains(quiet.err, "plinth debug:"));

  auto bad = run_plinth({"plan", "bp.yaml", "--log-level", "loud"}, dir.path(), env);
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == "plinth plan: --log-level 'loud' is not a log level; use error, warn, info, debug or trace\n");
  auto bad_env = env;
  bad_env["PLINTH_LOG"] = "chatty";
  auto bad2 = run_plinth({"plan", "bp.yaml"}, dir.path(), bad_env);
  CHECK(bad2.exit_code == 1);
  CHECK(contains(bad2.err, "PLINTH_LOG 'chatty' is not a log level"));
}

TEST_CASE("plinth allocates with jemalloc, its memory on transparent huge pages, and MALLOC_CONF can change that",
          "[e2e][logging]") {
  // engine/cli/allocator.cpp. Sanitizer builds (PLINTH_FUZZ) keep the sanitizer's allocator.
  TempDir dir;
  dir.write("bp.yaml", l40s_blueprint("gpu", "2", "    bmc: {endpoints: \"https://bmc-{index}.example\", credentials: env:BMC}\n"));
  auto r = run_plinth({"validate", "bp.yaml", "--log-level", "debug"}, dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  if (kSanitizedBuild) {
    CHECK(contains(r.err, "malloc: the C library's malloc (this build does not link jemalloc)"));
    return;
  }
  CHECK(contains(r.err, "malloc: jemalloc 5."));
  CHECK(contains(r.err, ", thp:always"));
  // jemalloc's own account of its options, independent of what plinth prints.
  auto stats = run_plinth({"version"}, dir.path(), {{"MALLOC_CONF", "stats_print:true"}});
  CHECK(stats.exit_code == 0);
  CHECK(contains(stats.err, "opt.thp: \"always\""));
  CHECK(contains(stats.err, "opt.metadata_thp: \"always\""));
  // The user's MALLOC_CONF is read after plinth's setting: it can turn the huge pages off.
  auto off = run_plinth({"validate", "bp.yaml", "--log-level", "debug"}, dir.path(), {{"MALLOC_CONF", "thp:default"}});
  INFO(off.err);
  CHECK(off.exit_code == 0);
  CHECK(contains(off.err, ", thp:default"));
}

}  // namespace plinth::test::e2e_logging
