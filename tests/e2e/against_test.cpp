// plinth plan --against REF between commits of a throwaway repository built
// with libgit2: resource differences and policy verdict changes.
#include <catch2/catch.hpp>

#include "tests/support/git_repo.h"
#include "tests/support/run.h"

namespace plinth::test::e2e_against {

namespace {

/// A repository whose history is: regulated.yaml (passes every pack) as
/// infra.yaml, then policy-hipaa-gaps.yaml (four HIPAA failures) as infra.yaml.
struct History {
  TempDir dir;
  test::GitRepo repo{dir.path()};
  std::string passing, failing;
  History() {
    passing = repo.commit_file("infra.yaml", slurp("blueprints/examples/regulated.yaml"), "regulated");
    failing = repo.commit_file("infra.yaml", slurp("blueprints/invalid/policy-hipaa-gaps.yaml"), "drop backups and TLS");
    repo.set_ref("refs/remotes/origin/main", passing);
  }
  test::RunResult plan(const std::string& ref) const {
    return run_plinth({"plan", dir.path() + "/infra.yaml", "--state", dir.path() + "/none.json", "--refresh=false",
                       "--against", ref});
  }
};

}  // namespace

TEST_CASE("plan --against shows the failures a change adds") {
  History h;
  auto r = h.plan("origin/main");
  INFO(r.err);
  CHECK(r.exit_code == 1);  // the working tree fails mandatory HIPAA policies
  CHECK(r.out.find("Compared with origin/main (" + h.passing.substr(0, 12) + "): ") != std::string::npos);
  CHECK(r.out.find("Policy verdicts: this change adds 4 failure(s), fixes 0.\n"
                   "  + HIPAA-AUD-002 access.audit_logging.default: ") != std::string::npos);
  CHECK(r.out.find("  + HIPAA-BAK-001 storage.tier.records: ") != std::string::npos);
  CHECK(r.out.find("  + HIPAA-INT-001 storage.tier.records: ") != std::string::npos);
  CHECK(r.out.find("  + HIPAA-TLS-001 storage.tier.records: ") != std::string::npos);
  CHECK(r.out.find("  + storage.tier.records\n") != std::string::npos);
}

TEST_CASE("plan --against shows the failures a change fixes") {
  History h;
  h.repo.write("infra.yaml", slurp("blueprints/examples/regulated.yaml"));  // the fix, not yet committed
  auto r = h.plan("HEAD");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Compared with HEAD (" + h.failing.substr(0, 12) + "): ") != std::string::npos);
  CHECK(r.out.find("Policy verdicts: this change adds 0 failure(s), fixes 4.\n"
                   "  - HIPAA-AUD-002 access.audit_logging.default: was fail") != std::string::npos);
  CHECK(r.out.find("  - HIPAA-BAK-001 storage.tier.records: was fail") != std::string::npos);
  auto same = h.plan("HEAD~1");
  CHECK(same.out.find("Compared with HEAD~1 (" + h.passing.substr(0, 12) +
                      "): 0 resource(s) added, 0 changed, 0 removed.\n"
                      "Policy verdicts: this change adds 0 failure(s), fixes 0.\n") != std::string::npos);
}

TEST_CASE("plan --against an unknown ref fails with the branches that exist") {
  History h;
  auto r = h.plan("origin/nope");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth plan: --against origin/nope: ") != std::string::npos);
  CHECK(r.err.find("main") != std::string::npos);
}

}  // namespace plinth::test::e2e_against
