#pragma once
#include <string>
#include <vector>

#include "engine/core/diagnostic.h"
#include "engine/policy/sandbox.h"

namespace plinth::policy {

/// One `test { ... }` of a policy test file.
struct TestResult {
  std::string file;  ///< the *_test.lua file
  std::string name;  ///< the test's name
  SourceLoc loc;     ///< file:line of the `test {` call
  bool passed = false;
  std::string detail;  ///< why it failed: missing / unexpected failures, errors, load problems
};

struct TestRun {
  std::vector<TestResult> results;  ///< in file order, then declaration order
  int passed = 0;
  int failed = 0;
};

/// Runs every `*_test.lua` below `dir` (recursively, sorted). A test file
/// `x_test.lua` tests the policies declared in `x.lua` beside it: each
/// `test { name = ..., blueprint = YAML text, expect = { {ID, ADDRESS}, ... },
/// policies = {ID...} (optional) }` loads the blueprint, expands it, runs
/// those policies (whatever metadata.compliance says) and passes when the
/// failures are exactly `expect` and no policy errored. Test files run in
/// the same sandbox with two helpers: `fixture(NAME)` (the text of
/// fixtures/NAME.yaml in the test's folder or the nearest parent that has one) and
/// `replace(TEXT, OLD, NEW)` (plain-text replacement of every OLD; an error
/// when OLD does not occur, so a fixture edit cannot silently miss).
TestRun run_policy_tests(const std::string& dir, const Limits& limits = {});

}  // namespace plinth::policy
