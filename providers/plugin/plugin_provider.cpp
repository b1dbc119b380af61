// The host side of the plugin protocol (docs/plugins.md): one child process
// per provider, requests written as JSON lines to its stdin, answers read
// from its stdout by one thread and matched to their requests by id, stderr
// forwarded line by line by another.
#include "providers/plugin/plugin_provider.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "engine/core/duration.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "engine/core/wire.h"

extern char** environ;

namespace plinth::plugin {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr size_t kMaxLine = 64u << 20;  // one protocol message
constexpr size_t kStderrKept = 5;

/// Writes all of `data`; false when the pipe is closed.
bool write_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

/// Calls `line` for every complete line read from `fd` until EOF; a line
/// longer than kMaxLine ends the loop with `too_long` set.
void read_lines(int fd, const std::function<void(std::string)>& line, bool& too_long) {
  std::string buf;
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl = buf.find('\n', start); nl != std::string::npos; nl = buf.find('\n', start)) {
      std::string l = buf.substr(start, nl - start);
      if (!l.empty() && l.back() == '\r') l.pop_back();
      line(std::move(l));
      start = nl + 1;
    }
    buf.erase(0, start);
    if (buf.size() > kMaxLine) {
      too_long = true;
      return;
    }
  }
  if (!buf.empty()) line(std::move(buf));
}

std::string status_text(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "ended";
}

/// The first bytes of a line, printable, for an error message.
std::string excerpt(const std::string& line) {
  std::string out;
  for (char c : line.substr(0, 80)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (line.size() > 80) out += "...";
  return out;
}

}  // namespace

PluginProvider::PluginProvider(std::string path, std::string name, LineSink sink)
    : path_(std::move(path)), name_(std::move(name)), sink_(std::move(sink)) {
  if (!sink_) sink_ = [](const std::string& l) { std::fprintf(stderr, "%s\n", l.c_str()); };
}

std::string PluginProvider::describe() const { return "plugin " + name_ + " (" + path_ + ")"; }

Error PluginProvider::protocol_error(const std::string& what, const std::string& detail) const {
  return Error::fatal(describe() + " broke the plugin protocol during " + what + ": " + detail +
                      " (docs/plugins.md describes the protocol)");
}

std::vector<std::string> plugin_environment() {
  std::set<std::string> allowed = {"PATH", "HOME",   "USER",          "LOGNAME",     "LANG",
                                   "LANGUAGE", "TZ", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR"};
  if (const char* extra = std::getenv("PLINTH_PLUGIN_ENV"); extra && *extra) {
    std::string_view list(extra);
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view name = list.substr(0, comma);
      if (!name.empty()) allowed.emplace(name);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
  }
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string name(kv.substr(0, kv.find('=')));
    if (allowed.count(name) || name.rfind("LC_", 0) == 0) out.emplace_back(kv);
  }
  return out;
}

namespace {

/// A sealed, in-memory copy of `bytes` that can be executed; -1 and errno on failure.
int sealed_copy(const std::string& name, const std::string& bytes) {
  int fd = static_cast<int>(::memfd_create(("plinth-plugin-" + name).c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      errno = e;
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

}  // namespace

Status PluginProvider::spawn(int exec_fd) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    return Error::fatal(describe() + ": cannot create pipes: " + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  // A pinned plugin runs from the bytes that were hashed: the sealed copy is
  // fd 3 in the child (dup2 clears close-on-exec, so an interpreter named by
  // a #! line can open it as /proc/self/fd/3 too).
  if (exec_fd >= 0) posix_spawn_file_actions_adddup2(&fa, exec_fd, 3);
  const std::string exe = exec_fd >= 0 ? "/proc/self/fd/3" : path_;
  std::vector<std::string> env_text = plugin_environment();
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The plugin gets the default signal dispositions and its own process
  // group, so a Ctrl-C at the terminal reaches plinth, which stops it.
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGTERM);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::string arg0 = path_;
  char* argv[] = {arg0.data(), nullptr};
  int rc = posix_spawn(&pid_, exe.c_str(), &fa, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_fd_ = in[1];
  out_fd_ = out[0];
  err_fd_ = err[0];
  if (rc != 0) {
    pid_ = -1;
    return Error::fatal(describe() + ": cannot start it: " + std::strerror(rc));
  }
  out_thread_ = std::thread([this] { read_stdout(); });
  err_thread_ = std::thread([this] { read_stderr(); });
  return {};
}

Result<std::unique_ptr<PluginProvider>> PluginProvider::start(const std::string& path, const std::string& name,
                                                               const StartOptions& options) {
  std::unique_ptr<PluginProvider> p(new PluginProvider(path, name, options.stderr_sink));
  int exec_fd = -1;
  if (!options.sha256.empty()) {
    auto bytes = read_file(path);
    if (!bytes)
      return Error::fatal("provider '" + name + "': cannot read " + path + " to check its sha256: " +
                          bytes.error().message);
    const std::string sum = sha256_hex(*bytes);
    if (sum != options.sha256)
      return Error::fatal("provider '" + name + "': " + path + " has sha256 " + sum + ", but " + options.pinned_by +
                          " pins " + options.sha256 +
                          "; this is not the plugin that was reviewed. Update the pin only after reviewing the new "
                          "plugin");
    exec_fd = sealed_copy(name, *bytes);
    if (exec_fd < 0)
      return Error::fatal("provider '" + name + "': cannot make a sealed in-memory copy of " + path +
                          " to run it: " + std::strerror(errno));
  }
  auto spawned = p->spawn(exec_fd);
  if (exec_fd >= 0) ::close(exec_fd);
  if (!spawned) return spawned.error();
  auto hello = p->request("handshake", {{"protocol", kProtocolVersion}, {"plinth_version", PLINTH_VERSION}}, "the handshake",
                       options.handshake_timeout);
  if (!hello) {
    p->close();
    return hello.error();
  }
  auto bad = [&](const std::string& detail) -> Result<std::unique_ptr<PluginProvider>> {
    p->close();
    return p->protocol_error("the handshake", detail);
  };
  if (!hello->is_object() || !hello->contains("protocol") || !(*hello)["protocol"].is_number_integer())
    return bad("its answer has no integer 'protocol'");
  const int protocol = (*hello)["protocol"].get<int>();
  if (protocol != kProtocolVersion) {
    p->close();
    return Error::fatal(p->describe() + " speaks plugin protocol version " + std::to_string(protocol) +
                        ", but this plinth speaks version " + std::to_string(kProtocolVersion) +
                        "; use a plugin release for protocol " + std::to_string(kProtocolVersion));
  }
  try {
    p->schema_ = wire::field(*hello, "schema").get<ProviderSchema>();
  } catch (const std::exception& e) {
    return bad(std::string("its schema does not parse: ") + e.what());
  }
  if (p->schema_.name != name) {
    p->close();
    return Error::fatal(p->describe() + " calls itself '" + p->schema_.name + "', not '" + name +
                        "'; rename the executable plinth-provider-" + p->schema_.name + " or fix the plugin");
  }
  if (auto st = check_schema(p->schema_); !st) return bad(st.error().message);
  p->schema_.source = path;
  return p;
}

PluginProvider::~PluginProvider() { close(); }

void PluginProvider::read_stdout() {
  bool too_long = false;
  read_lines(
      out_fd_,
      [&](std::string line) {
        if (line.find_first_not_of(" \t") == std::string::npos) return;
        Json msg = parse_json_or_discard(line);
        if (msg.is_discarded() || !msg.is_object()) {
          fail_all(protocol_error("a call", "it wrote a line that is not a JSON object: '" + excerpt(line) + "'").message);
          return;
        }
        if (!msg.contains("id") || !msg["id"].is_number_unsigned()) {
          fail_all(protocol_error("a call", "it wrote a message without a request id: '" + excerpt(line) + "'").message);
          return;
        }
        const uint64_t id = msg["id"].get<uint64_t>();
        std::lock_guard<std::mutex> lock(mu_);
        auto it = pending_.find(id);
        if (it == pending_.end()) {
          if (abandoned_.erase(id)) return;  // the caller gave up on it already
          dead_ = protocol_error("a call", "it answered request " + std::to_string(id) + ", which was never sent");
          for (auto& [_, pend] : pending_) {
            pend->done = true;
            pend->error = *dead_;
          }
          cv_.notify_all();
          return;
        }
        auto& pend = *it->second;
        if (msg.contains("error")) {
          try {
            pend.error = msg["error"].get<Error>();
          } catch (const std::exception& e) {
            pend.error = protocol_error("a call", std::string("its error does not parse: ") + e.what());
          }
        } else if (msg.contains("result")) {
          pend.result = msg["result"];
        } else {
          pend.error = protocol_error("a call", "its answer to request " + std::to_string(id) +
                                                    " has neither 'result' nor 'error'");
        }
        pend.done = true;
        pending_.erase(it);
        cv_.notify_all();
      },
      too_long);
  if (too_long) fail_all(protocol_error("a call", "it wrote a line longer than 64 MiB").message);
  // EOF: the plugin closed stdout or exited.
  reap();
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    why = describe() + " " + (exited_ ? status_text(exit_status_) : std::string("closed its output"));
    if (!last_stderr_.empty()) why += "; its last stderr lines: " + join({last_stderr_.begin(), last_stderr_.end()}, " | ");
  }
  fail_all(why);
}

void PluginProvider::read_stderr() {
  bool too_long = false;
  read_lines(
      err_fd_,
      [&](std::string line) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          last_stderr_.push_back(excerpt(line));
          if (last_stderr_.size() > kStderrKept) last_stderr_.pop_front();
        }
        // The plugin's text reaches a terminal or a CI log: no escape
        // sequences, no line that pretends to be plinth's own.
        sink_("[plugin " + name_ + "] " + safe_text(line, false));
      },
      too_long);
}

void PluginProvider::reap() {
  std::lock_guard<std::mutex> lock(mu_);
  if (pid_ <= 0 || exited_) return;
  int status = 0;
  // stdout closed: the process is exiting; give it a moment.
  for (int i = 0; i < 50; ++i) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      exit_status_ = status;
      return;
    }
    if (r < 0) return;
    mu_.unlock();
    std::this_thread::sleep_for(milliseconds(10));
    mu_.lock();
    if (exited_) return;
  }
}

void PluginProvider::fail_all(const std::string& why, Error::Kind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!dead_) dead_ = Error{kind, why, 0};
  for (auto& [_, pend] : pending_) {
    pend->done = true;
    pend->error = *dead_;
  }
  pending_.clear();
  cv_.notify_all();
}

Result<Json> PluginProvider::request(const std::string& method, Json params, const std::string& what,
                                  milliseconds wait) {
  auto pend = std::make_shared<Pending>();
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (dead_) {
      Error e = *dead_;
      if (e.kind != Error::Kind::Cancelled) e.message = describe() + " cannot " + what + ": " + e.message;
      return e;
    }
    id = next_id_++;
    pending_[id] = pend;
  }
  Json msg = {{"id", id}, {"method", method}, {"params", std::move(params)}};
  bool written;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    written = write_all(in_fd_, msg.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!written && !pend->done) {
    pending_.erase(id);
    return Error::fatal(describe() + " is not running (writing the " + method + " request failed) during " + what);
  }
  const auto until = Clock::now() + wait;
  // Wait for the answer; after stop(), only until the grace period ends:
  // then the call ends as Cancelled and the process is killed.
  while (!pend->done && Clock::now() < until) {
    if (stopping_ && Clock::now() >= stop_at_) {
      pending_.erase(id);
      abandoned_.insert(id);
      if (pid_ > 0 && !exited_) ::kill(pid_, SIGKILL);
      return Error{Error::Kind::Cancelled, describe() + " was stopped (interrupted) during " + what, 0};
    }
    cv_.wait_until(lock, std::min(until, Clock::now() + milliseconds(50)), [&] { return pend->done; });
  }
  if (!pend->done) {
    pending_.erase(id);
    abandoned_.insert(id);
    return Error{Error::Kind::DeadlineExceeded,
                 describe() + " did not answer " + what + " within " + format_duration(wait), 0};
  }
  if (pend->error) {
    Error e = *pend->error;
    if (e.message.find(describe()) == std::string::npos && e.kind != Error::Kind::Fatal)
      e.message = name_ + ": " + e.message;  // the plugin's own error, typed
    return e;
  }
  return *pend->result;
}

Status PluginProvider::configure(const ProviderConfig& config) {
  auto r = request("configure", {{"options", config.values}}, "configure", milliseconds(std::chrono::seconds(30)));
  if (!r) return r.error();
  return {};
}

Result<Resource> PluginProvider::check_resource(const Json& j, const std::string& what) const {
  Resource r;
  try {
    r = j.get<Resource>();
  } catch (const std::exception& e) {
    return protocol_error(what, std::string("the resource it returned does not parse: ") + e.what());
  }
  if (!schema_.resource_type(r.type))
    return protocol_error(what, "it returned a resource of type '" + r.type + "', which its schema does not declare");
  return r;
}

std::vector<ReadResult> PluginProvider::read(const std::vector<Resource>& resources, const Call& call) {
  const Deadline& deadline = call.deadline();
  std::vector<ReadResult> out(resources.size());
  for (size_t i = 0; i < resources.size(); ++i) out[i].address = resources[i].address;
  if (resources.empty()) return out;
  const milliseconds budget = deadline.unlimited() ? milliseconds(std::chrono::minutes(2)) : deadline.budget();
  const auto rounds = static_cast<long long>(std::ceil(static_cast<double>(resources.size()) / 16.0));
  const milliseconds wait = budget * std::max(1LL, rounds);
  const std::string what = "read of " + std::to_string(resources.size()) + " resource(s)";
  auto r = request("read", {{"resources", resources}, {"deadline_ms", budget.count()}}, what, wait);
  auto fail_every = [&](const Error& e) {
    for (auto& rr : out) rr.error = e;
    return out;
  };
  if (!r) return fail_every(r.error());
  if (!r->contains("results") || !(*r)["results"].is_array() || (*r)["results"].size() != resources.size())
    return fail_every(protocol_error(what, "its answer must have 'results' with one entry per resource, in order"));
  const Json& results = (*r)["results"];
  for (size_t i = 0; i < resources.size(); ++i) {
    const Json& x = results[i];
    try {
      if (x.contains("error") && !x["error"].is_null()) {
        out[i].error = x["error"].get<Error>();
        out[i].error->message = resources[i].address + ": " + out[i].error->message;
      } else if (x.contains("resource") && !x["resource"].is_null()) {
        auto res = check_resource(x["resource"], "the read of " + resources[i].address);
        if (!res) out[i].error = res.error();
        else out[i].current = std::move(*res);
      }
      if (x.contains("diagnostics"))
        for (const auto& d : x["diagnostics"]) out[i].diagnostics.push_back(d.get<Diagnostic>());
    } catch (const std::exception& e) {
      out[i].error = protocol_error("the read of " + resources[i].address, std::string("its result does not parse: ") + e.what());
    }
  }
  return out;
}

Result<Resource> PluginProvider::create(const Resource& desired, Call& call) {
  const Deadline& deadline = call.deadline();
  const std::string what = "create of " + desired.address;
  auto r = request("create", {{"resource", desired}, {"deadline_ms", deadline.remaining().count()}}, what,
                deadline.remaining());
  if (!r) return r.error();
  if (!r->contains("resource")) return protocol_error(what, "its answer has no 'resource'");
  return check_resource((*r)["resource"], what);
}

Result<Resource> PluginProvider::update(const Resource& prior, const Resource& desired, Call& call) {
  const Deadline& deadline = call.deadline();
  const std::string what = "update of " + desired.address;
  auto r = request("update", {{"prior", prior}, {"desired", desired}, {"deadline_ms", deadline.remaining().count()}}, what,
                deadline.remaining());
  if (!r) return r.error();
  if (!r->contains("resource")) return protocol_error(what, "its answer has no 'resource'");
  return check_resource((*r)["resource"], what);
}

Status PluginProvider::remove(const Resource& prior, Call& call) {
  const Deadline& deadline = call.deadline();
  auto r = request("remove", {{"resource", prior}, {"deadline_ms", deadline.remaining().count()}},
                "remove of " + prior.address, deadline.remaining());
  if (!r) return r.error();
  return {};
}

void PluginProvider::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || dead_ || pid_ <= 0) return;
    stopping_ = true;
    stop_at_ = Clock::now() + std::chrono::seconds(2);
  }
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    (void)write_all(in_fd_, R"({"method":"stop","params":{}})"
                            "\n");
  }
  // Calls the plugin does not end within 2 s end in request(), which
  // kills the process then: no thread outlives this object.
}

void PluginProvider::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
  }
  if (pid_ > 0) {
    bool alive;
    {
      std::lock_guard<std::mutex> lock(mu_);
      alive = !dead_;
    }
    if (alive) (void)request("close", Json::object(), "close", milliseconds(std::chrono::seconds(5)));
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    ::close(in_fd_);
    in_fd_ = -1;
    // Wait up to 5 s for it to exit, then kill it.
    int status = 0;
    bool gone = false;
    for (int i = 0; i < 500 && !gone; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        gone = exited_;
      }
      if (gone) break;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_ || r < 0) {
        std::lock_guard<std::mutex> lock(mu_);
        exited_ = true;
        exit_status_ = status;
        gone = true;
        break;
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    if (!gone) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      std::lock_guard<std::mutex> lock(mu_);
      exited_ = true;
    }
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  // Kill the whole process group: a plugin's own children must not linger
  // holding the pipes.
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
  if (out_thread_.joinable()) out_thread_.join();
  if (err_thread_.joinable()) err_thread_.join();
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
  out_fd_ = err_fd_ = -1;
  std::lock_guard<std::mutex> lock(mu_);
  if (!dead_) dead_ = Error::fatal(describe() + " is closed");
  pid_ = -1;
}

std::vector<std::string> search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("PLINTH_PLUGIN_PATH"); env && *env) {
    std::string s(env);
    size_t start = 0;
    while (start <= s.size()) {
      size_t colon = s.find(':', start);
      std::string d = s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!d.empty()) dirs.push_back(d);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  if (const char* home = std::getenv("HOME"); home && *home) dirs.push_back(std::string(home) + "/.plinth/plugins");
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((self.parent_path() / ".." / "lib" / "plinth" / "plugins").lexically_normal().string());
  return dirs;
}

namespace {
bool executable_file(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}
}  // namespace

std::optional<std::string> find_plugin(const std::string& name) {
  for (const auto& dir : search_path()) {
    fs::path p = fs::path(dir) / ("plinth-provider-" + name);
    if (executable_file(p)) return fs::absolute(p).lexically_normal().string();
  }
  return std::nullopt;
}

std::map<std::string, std::string> discover_plugins() {
  std::map<std::string, std::string> found;
  for (const auto& dir : search_path()) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string file = entry.path().filename().string();
      const std::string prefix = "plinth-provider-";
      if (file.size() <= prefix.size() || file.compare(0, prefix.size(), prefix) != 0) continue;
      if (!executable_file(entry.path())) continue;
      found.emplace(file.substr(prefix.size()), fs::absolute(entry.path()).lexically_normal().string());
    }
  }
  return found;
}

Result<std::string> file_sha256(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return sha256_hex(*text);
}

}  // namespace plinth::plugin
