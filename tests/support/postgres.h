#pragma once
#include <string>

namespace plinth::test {

/// The PostgreSQL server for the state backend tests: $PLINTH_TEST_POSTGRES_URL,
/// or, when that is unset, the URL `bash .ci/postgres` prints after starting
/// one (once per test process). Fails the test, saying to run .ci/postgres,
/// when neither gives a server.
std::string postgres_url();

/// postgres_url() with a workspace of its own, "NAME-PID-N", so tests running
/// at the same time never share state.
std::string postgres_workspace_url(const std::string& name);

}  // namespace plinth::test
