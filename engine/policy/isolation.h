#pragma once
// Internal to engine/policy: policy code runs in a child process forked from
// this one, so the hard limits are enforced from outside the Lua state. A
// check stuck in a library call (a pathological string pattern) is killed
// at its deadline, and a crash of the Lua VM costs one verdict, not the run.
// evaluate(), load_policies() and run_policy_tests() are built on it.
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/policy/policy.h"
#include "engine/policy/runtime.h"
#include "engine/policy/testing.h"
#include "engine/provider/resource.h"

namespace plinth::policy {

/// What a child's handler uses to have its steps timed by the parent.
class Progress {
 public:
  /// Starts a step ("policy X (file:line)"): the parent kills the child when
  /// the step has not ended within `limit` plus a grace period.
  void begin(const std::string& what, std::chrono::milliseconds limit);
  void end();

 private:
  friend class Isolated;
  explicit Progress(int fd) : fd_(fd) {}
  int fd_;
};

/// A child process answering requests with `handler`. The handler runs in
/// the child, on the memory this process had when the child was forked (so
/// it may read the parent's values through pointers it captured); the child
/// is forked at the first call after construction or after a failure.
class Isolated {
 public:
  using Handler = std::function<Json(const Json& request, Progress& progress)>;
  /// `idle_limit` bounds a request while the child has no step open;
  /// `max_reply` bounds what one reply may weigh.
  Isolated(Handler handler, std::chrono::milliseconds idle_limit, size_t max_reply);
  ~Isolated();  ///< kills the child
  Isolated(const Isolated&) = delete;
  Isolated& operator=(const Isolated&) = delete;

  struct Failure {
    std::string step;  ///< the step that was running ("" when none was open)
    std::string why;   ///< "did not finish within 10 s, so its sandbox process was stopped", "crashed (signal 11: ...)"
  };
  struct Reply {
    std::optional<Json> value;  ///< the handler's reply, or
    Failure failure;            ///< why there is none; the child is gone and the next call forks a new one
  };
  /// Sends `request` and waits for the reply.
  Reply call(const Json& request);
  /// True when no child runs: the next call forks a fresh one (state the
  /// handler built in the previous child is gone).
  bool fresh() const { return pid_ <= 0; }

 private:
  void start();
  void stop();
  Handler handler_;
  std::chrono::milliseconds idle_limit_;
  size_t max_reply_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffer_;  ///< bytes read past the last line
};

/// Runtime's loading and checks, each run in an Isolated child: a file that
/// does not load within the limits, or a check that does not finish, is a
/// diagnostic or an error verdict, and the next call starts a new child that
/// loads the files again (and rebuilds the context) before it goes on.
class RemoteRuntime {
 public:
  /// `input` (which must outlive this object) is what checks run against;
  /// nullptr when only loading.
  RemoteRuntime(const Limits& limits, const Input* input);

  /// Reads the pack settings below `dir` (read_pack_settings); a later
  /// directory's names override an earlier one's. Call it for every
  /// directory before load_dir, so every file of a pack sees the same values.
  void load_settings(const std::string& dir);
  /// Every policy file below each of `dirs`, on disk or compiled in
  /// (policy_files), in order, but a pack (a subdirectory) whose policy files
  /// a later directory also has is taken from that directory only: a copy of
  /// a built-in pack given with --policy-dir replaces it, and an empty
  /// directory of that name turns it off (one holding only settings.yaml
  /// changes its settings: load_settings).
  void load_dirs(const std::vector<std::string>& dirs);

  const std::vector<PolicyInfo>& infos() const { return infos_; }
  const Diagnostics& diagnostics() const { return diags_; }
  const std::vector<std::string>& files() const { return files_; }
  const std::map<std::string, std::string>& hashes() const { return hashes_; }

  /// Runs policy infos()[i]'s check against the input.
  std::vector<Verdict> run(size_t i);

 private:
  void load_file(const std::string& path, const std::string& pack);
  /// The request that loads `path` in the child, with its pack's settings.
  Json load_request(const std::string& path, const std::string& pack) const;
  /// A fresh child: loads the files loaded so far again, then the context.
  bool replay();

  Limits limits_;
  std::map<std::string, PackSettings> settings_;  ///< pack -> settings (load_settings)
  std::vector<std::pair<std::string, std::string>> loaded_;  ///< (path, pack) that loaded, in order
  bool context_ = false;                                     ///< the child has the context
  std::vector<PolicyInfo> infos_;
  Diagnostics diags_;
  std::vector<std::string> files_;
  std::map<std::string, std::string> hashes_;
  size_t held_ = 0;  ///< what the findings received so far are charged (verdict_cost)
  Isolated child_;
};

// JSON forms of the values that cross the process boundary.
Json to_json(const SourceLoc& l);
SourceLoc loc_from_json(const Json& j);
Json to_json(const PolicyInfo& p);
PolicyInfo info_from_json(const Json& j);
Json to_json(const Verdict& v);
Verdict verdict_from_json(const Json& j);
Json to_json(const Diagnostic& d);
Diagnostic diagnostic_from_json(const Json& j);
Json to_json(const TestResult& r);
TestResult test_result_from_json(const Json& j);

}  // namespace plinth::policy
