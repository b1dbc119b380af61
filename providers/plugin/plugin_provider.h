#pragma once
// Out-of-process providers: any executable that speaks Plinth's plugin
// protocol (versioned JSON lines over stdin/stdout, docs/plugins.md) behind
// the same Provider interface as the built-in ones.
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/provider/provider.h"

namespace plinth::plugin {

/// The protocol version this build speaks.
inline constexpr int kProtocolVersion = 1;

/// Where a plugin's stderr lines go (already prefixed "[plugin NAME] ").
using LineSink = std::function<void(const std::string& line)>;

struct StartOptions {
  /// How long the plugin may take to start and answer the handshake.
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
  /// Receives the plugin's stderr, line by line; default: this process's stderr.
  LineSink stderr_sink;
  /// The reviewed SHA-256 (lower-case hex) the executable must have. When set,
  /// the file is read once, those bytes are hashed and, when they match, run
  /// from a sealed in-memory copy (memfd), so the file cannot be swapped
  /// between the check and the exec; a mismatch is an error naming both sums.
  std::string sha256;
  /// Who pinned it, for the mismatch message.
  std::string pinned_by = "the blueprint";
};

/// The environment a plugin process gets: never plinth's own (credentials,
/// state and plan keys), only PATH, HOME, USER, LOGNAME, LANG, LANGUAGE, LC_*,
/// TZ, TMPDIR, SSL_CERT_FILE and SSL_CERT_DIR, plus the variables the
/// operator names in PLINTH_PLUGIN_ENV (comma-separated). A plugin gets its
/// settings through `configure` (the options its schema declares, read from
/// the blueprint, flags and the vendor variables listed there).
std::vector<std::string> plugin_environment();

/// One plugin process serving provider `name`. Many calls may be in flight at
/// once (each request carries an id). A plugin that exits, hangs past a
/// call's deadline, writes something that is not a protocol message or an
/// answer to no question, or returns a resource of a type its schema does
/// not declare fails the call with an error naming the plugin, its path and
/// the operation; after a protocol violation or exit, every later call fails
/// the same way.
class PluginProvider : public Provider {
 public:
  /// Starts `path` and does the handshake: the plugin must speak
  /// kProtocolVersion and call itself `name`; its schema is checked with
  /// check_schema() and gets source = `path`.
  static Result<std::unique_ptr<PluginProvider>> start(const std::string& path, const std::string& name,
                                                       const StartOptions& options = {});
  ~PluginProvider() override;

  const ProviderSchema& schema() const override { return schema_; }
  Status configure(const ProviderConfig& config) override;
  /// One request for the whole batch; the plugin gets deadline.budget() per
  /// resource and the host waits budget x ceil(n / 16) for the answer.
  std::vector<ReadResult> read(const std::vector<Resource>& resources, const Call& call) override;
  Result<Resource> create(const Resource& desired, Call& call) override;
  Result<Resource> update(const Resource& prior, const Resource& desired, Call& call) override;
  Status remove(const Resource& prior, Call& call) override;
  /// Sends `stop`; calls still unanswered 2 s later end as Cancelled and the
  /// process is killed.
  void stop() override;
  /// Sends `close`, waits up to 5 s for the process to exit, then kills it.
  void close() override;

  const std::string& path() const { return path_; }

 private:
  PluginProvider(std::string path, std::string name, LineSink sink);
  /// Starts the process: from `exec_fd` (a sealed memfd, run as fd 3) when
  /// it is >= 0, else from path_.
  Status spawn(int exec_fd);
  /// Sends a request and waits for its answer until `wait` passes.
  Result<Json> request(const std::string& method, Json params, const std::string& what,
                    std::chrono::milliseconds wait);
  void read_stdout();
  void read_stderr();
  /// Marks the plugin unusable: every pending and later call fails with `why`.
  void fail_all(const std::string& why, Error::Kind kind = Error::Kind::Fatal);
  std::string describe() const;  ///< "plugin NAME (PATH)"
  Error protocol_error(const std::string& what, const std::string& detail) const;
  Result<Resource> check_resource(const Json& j, const std::string& what) const;
  void reap();

  struct Pending {
    bool done = false;
    std::optional<Json> result;
    std::optional<Error> error;
  };

  std::string path_, name_;
  LineSink sink_;
  ProviderSchema schema_;
  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  std::thread out_thread_, err_thread_;

  std::mutex write_mu_;
  std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::shared_ptr<Pending>> pending_;
  std::set<uint64_t> abandoned_;  // timed out: a late answer is ignored
  std::optional<Error> dead_;     // set once the plugin is unusable
  std::deque<std::string> last_stderr_;
  bool stopping_ = false, closed_ = false, exited_ = false;
  std::chrono::steady_clock::time_point stop_at_;  // end of the grace period after stop()
  int exit_status_ = -1;
};

/// Directories searched for plinth-provider-NAME: the entries of
/// PLINTH_PLUGIN_PATH (':'-separated), then ~/.plinth/plugins, then
/// ../lib/plinth/plugins beside the plinth binary.
std::vector<std::string> search_path();

/// The executable plinth-provider-NAME in the first search_path() directory
/// that has one, or nullopt.
std::optional<std::string> find_plugin(const std::string& name);

/// Every plinth-provider-* executable on the search path: name -> path (the
/// first one found wins).
std::map<std::string, std::string> discover_plugins();

/// The SHA-256 (lower-case hex) of the file at `path`.
Result<std::string> file_sha256(const std::string& path);

}  // namespace plinth::plugin
