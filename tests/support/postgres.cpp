#include "tests/support/postgres.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "tests/support/run.h"

namespace plinth::test {

namespace {

struct Server {
  std::string url, why;
};

Server start_server() {
  if (const char* env = std::getenv("PLINTH_TEST_POSTGRES_URL"); env && *env) return {env, ""};
  RunResult r = run_program({"bash", source_dir() + "/.ci/postgres"});
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  std::string last = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
  if (r.exit_code != 0 || !last.starts_with("postgres://"))
    return {"", "'bash .ci/postgres' exited " + std::to_string(r.exit_code) + ": " + r.err};
  return {last, ""};
}

}  // namespace

std::string postgres_url() {
  static const Server server = start_server();
  if (server.url.empty())
    FAIL("no PostgreSQL for the state backend tests: PLINTH_TEST_POSTGRES_URL is not set and " << server.why
         << "\nRun 'export PLINTH_TEST_POSTGRES_URL=$(bash .ci/postgres | tail -n1)' and run the tests again.");
  return server.url;
}

std::string postgres_workspace_url(const std::string& name) {
  static int n = 0;
  std::string url = postgres_url();
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "workspace=" + name + "-" +
         std::to_string(getpid()) + "-" + std::to_string(++n);
}

}  // namespace plinth::test
