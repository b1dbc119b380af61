#include "engine/policy/isolation.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "engine/core/strings.h"
#include "engine/policy/runtime.h"
#include "engine/core/wire.h"

namespace plinth::policy {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// How long after a step's limit the parent kills the child: the sandbox's
/// own deadline (checked inside the Lua VM) stops Lua code first, with a
/// precise file:line; the kill is for code stuck in a library call.
milliseconds grace(milliseconds limit) { return milliseconds(1000) + limit / 4; }

bool write_all(int fd, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::send(fd, text.data() + off, text.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

bool send_line(int fd, const Json& j) {
  return write_all(fd, j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
}

/// Reads one line from `fd` into `line` (blocking; the child side).
bool read_line(int fd, std::string& buffer, std::string& line) {
  for (;;) {
    size_t nl = buffer.find('\n');
    if (nl != std::string::npos) {
      line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    char chunk[65536];
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

/// With jemalloc (plinth links it: engine/cli/allocator.cpp), this thread
/// allocates from an arena of its own from here on, in memory the fork did
/// not share: reusing the freed slots plinth left would copy, page by page,
/// every page they lie in, and split the huge pages around them in both
/// processes. Looked up at run time, so that programs without jemalloc (the
/// tests) are unaffected.
void use_fresh_arena() {
  using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
  auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
  if (!mallctl) return;
  unsigned arena = 0;
  size_t size = sizeof arena;
  if (mallctl("arenas.create", &arena, &size, nullptr, 0) != 0) return;
  if (mallctl("thread.arena", nullptr, nullptr, &arena, sizeof arena) != 0) return;
  mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
}

[[noreturn]] void child_main(int fd, pid_t parent, Isolated::Handler& handler, Progress& progress) {
  // A crash is this process dying, seen by the parent; a test framework's or
  // the CLI's handlers must not report it as theirs.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGPIPE}) std::signal(sig, SIG_DFL);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0);
  use_fresh_arena();
  std::string buffer, line;
  while (read_line(fd, buffer, line)) {
    Json request = parse_json_or_discard(line);
    Json reply;
    try {
      reply = handler(request, progress);
    } catch (const std::exception& e) {
      reply = {{"exception", e.what()}};
    }
    if (!send_line(fd, {{"t", "reply"}, {"v", std::move(reply)}})) break;
  }
  _exit(0);  // no atexit handlers, no stdio flush: they belong to the parent
}

/// What a child's end did, as a predicate ("... crashed the policy sandbox").
std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "crashed the policy sandbox process (signal " + std::to_string(sig) +
           (name ? std::string(": ") + name : "") + ")";
  }
  if (WIFEXITED(status)) return "ended the policy sandbox process (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  return "stopped the policy sandbox process";
}

}  // namespace

void Progress::begin(const std::string& what, milliseconds limit) {
  send_line(fd_, {{"t", "begin"}, {"what", what}, {"ms", limit.count()}});
}

void Progress::end() { send_line(fd_, {{"t", "end"}}); }

Isolated::Isolated(Handler handler, milliseconds idle_limit, size_t max_reply)
    : handler_(std::move(handler)), idle_limit_(idle_limit), max_reply_(max_reply) {}

Isolated::~Isolated() { stop(); }

void Isolated::start() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    ::close(fds[0]);
    Progress progress(fds[1]);
    child_main(fds[1], parent, handler_, progress);
  }
  ::close(fds[1]);
  pid_ = pid;
  fd_ = fds[0];
  buffer_.clear();
}

void Isolated::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (fd_ >= 0) ::close(fd_);
  pid_ = -1;
  fd_ = -1;
  buffer_.clear();
}

Isolated::Reply Isolated::call(const Json& request) {
  Reply out;
  if (pid_ <= 0) start();
  if (pid_ <= 0) {
    out.failure = {"", std::string("could not be run: no policy sandbox process could be started (") +
                           std::strerror(errno) + ")"};
    return out;
  }
  std::string step;
  auto deadline = Clock::now() + idle_limit_;
  milliseconds step_limit = idle_limit_;
  auto fail = [&](const std::string& why) {
    stop();
    out.failure = {step, why};
    return out;
  };
  if (!send_line(fd_, request)) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return fail(describe_exit(status));
  }
  for (;;) {
    // Handle every complete line already read.
    for (size_t nl; (nl = buffer_.find('\n')) != std::string::npos;) {
      // Read by nlohmann's parser, not parse_json_or_discard's simdjson: the
      // verdicts of a large plan arrive when the plan holds the most memory,
      // and simdjson's buffers (several times the line) would add to that peak
      // (2 MiB at 10,000 nodes), for a parse that is a small part of the step.
      const std::string_view text = std::string_view(buffer_).substr(0, nl);
      Json msg = json_shape_problem(text) ? Json(Json::value_t::discarded) : Json::parse(text, nullptr, false);
      buffer_.erase(0, nl + 1);
      const std::string t = msg.is_object() ? msg.value("t", "") : "";
      if (t == "begin") {
        step = msg.value("what", "");
        step_limit = milliseconds(msg.value("ms", 0LL));
        deadline = Clock::now() + step_limit + grace(step_limit);
      } else if (t == "end") {
        step.clear();
        deadline = Clock::now() + idle_limit_;
      } else if (t == "reply") {
        out.value = msg.contains("v") ? msg["v"] : Json();
        return out;
      } else {
        return fail("made the policy sandbox process send something unexpected");
      }
    }
    if (buffer_.size() > max_reply_)
      return fail("made the policy sandbox process answer more than " + std::to_string(max_reply_) + " bytes");
    auto now = Clock::now();
    if (now >= deadline) {
      const bool in_step = !step.empty();
      return fail(in_step ? "did not finish within " + duration_text(step_limit) +
                                " (wall clock) and was stopped by killing its sandbox process (stuck in a library call "
                                "such as a pathological string pattern?)"
                          : "did not let the policy sandbox process answer within " + duration_text(idle_limit_));
    }
    auto wait = std::chrono::duration_cast<milliseconds>(deadline - now).count() + 1;
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(wait, 60'000)));
    if (r < 0 && errno != EINTR) return fail(std::string("poll failed: ") + std::strerror(errno));
    if (r <= 0) continue;
    char chunk[65536];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      int status = 0;
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      pid_ = -1;
      return fail(describe_exit(status));
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

// ---- RemoteRuntime -------------------------------------------------------

namespace {

/// The child side of RemoteRuntime: one Runtime, built on the first request.
struct RuntimeServer {
  Limits limits;
  const Input* input;
  /// Findings the parent already holds from earlier sandbox processes of this
  /// run (read when this process starts): charged again, so restarting the
  /// sandbox does not reset the run-wide memory limit.
  const size_t* held;
  std::shared_ptr<Runtime> rt;

  Json operator()(const Json& req, Progress& progress) {
    if (!rt) {
      rt = std::make_shared<Runtime>(limits);
      rt->sandbox().charge_held(*held);
    }
    const std::string op = req.value("op", "");
    if (op == "load") {
      const std::string path = req.value("path", "");
      size_t policies = rt->size(), diags = rt->diagnostics().size(), files = rt->files().size();
      if (const auto it = req.find("settings"); it != req.end() && it->is_object())
        rt->set_settings(req.value("pack", ""), it->get<PackSettings>());
      progress.begin("policy file " + display_path(path), limits.deadline);
      rt->load_file(path, req.value("pack", ""));
      progress.end();
      Json out = {{"infos", Json::array()}, {"diagnostics", Json::array()}, {"files", Json::array()}};
      for (size_t i = policies; i < rt->size(); ++i) out["infos"].push_back(to_json(rt->info(i)));
      for (size_t i = diags; i < rt->diagnostics().size(); ++i) out["diagnostics"].push_back(to_json(rt->diagnostics()[i]));
      for (size_t i = files; i < rt->files().size(); ++i) {
        const std::string& f = rt->files()[i];
        out["files"].push_back({{"file", f}, {"sha256", rt->hashes().at(f)}});
      }
      return out;
    }
    if (op == "context") {
      rt->set_context(*input);
      return Json::object();
    }
    if (op == "run") {
      size_t i = rt->find(req.value("id", ""));
      if (i == rt->size()) return {{"missing", true}};
      const PolicyInfo& p = rt->info(i);
      progress.begin("policy " + p.id + " (" + p.loc.str() + ")", limits.deadline);
      auto verdicts = rt->run(i);
      progress.end();
      Json out = Json::array();
      for (const auto& v : verdicts) out.push_back(to_json(v));
      return {{"verdicts", std::move(out)}};
    }
    return {{"exception", "unknown request '" + op + "'"}};
  }
};

/// How long a request may take while no step is open (building the
/// context of a large blueprint).
constexpr milliseconds kIdleLimit{10 * 60 * 1000};

size_t max_reply(const Limits& l) { return l.run_memory_bytes * 2 + (size_t{16} << 20); }

}  // namespace

RemoteRuntime::RemoteRuntime(const Limits& limits, const Input* input)
    : limits_(limits), child_(RuntimeServer{limits, input, &held_, nullptr}, kIdleLimit, max_reply(limits)) {}

void RemoteRuntime::load_settings(const std::string& dir) { read_pack_settings(dir, settings_, diags_); }

Json RemoteRuntime::load_request(const std::string& path, const std::string& pack) const {
  Json req = {{"op", "load"}, {"path", path}, {"pack", pack}};
  if (auto it = settings_.find(pack); it != settings_.end()) req["settings"] = it->second;
  return req;
}

void RemoteRuntime::load_dirs(const std::vector<std::string>& dirs) {
  std::vector<std::vector<PackFile>> files;
  std::map<std::string, size_t> owner;  // pack -> the last directory that has it
  for (size_t i = 0; i < dirs.size(); ++i) {
    files.push_back(policy_files(dirs[i], diags_));
    for (const auto& f : files.back())
      if (!f.pack.empty()) owner[f.pack] = i;
    for (const auto& pack : empty_pack_directories(dirs[i])) owner[pack] = i;
  }
  for (size_t i = 0; i < dirs.size(); ++i)
    for (const auto& [file, pack] : files[i])
      if (pack.empty() || owner[pack] == i) load_file(file, pack);
}

void RemoteRuntime::load_file(const std::string& path, const std::string& pack) {
  while (child_.fresh() && !loaded_.empty() && !replay()) {
  }
  auto r = child_.call(load_request(path, pack));
  if (!r.value || r.value->contains("exception")) {
    const std::string shown = display_path(path);
    std::string why = r.value ? "raised an internal error: " + r.value->value("exception", "") : r.failure.why;
    diags_.push_back({"POL001", Severity::Error, "policy file " + shown + " could not be loaded: it " + why,
                      {shown, 0, 0}, "", "fix the policy file; the other policy files still load"});
    return;
  }
  loaded_.emplace_back(path, pack);
  for (const auto& j : (*r.value)["infos"]) infos_.push_back(info_from_json(j));
  for (const auto& j : (*r.value)["diagnostics"]) diags_.push_back(diagnostic_from_json(j));
  for (const auto& j : (*r.value)["files"]) {
    files_.push_back(j.value("file", ""));
    hashes_[j.value("file", "")] = j.value("sha256", "");
  }
}

bool RemoteRuntime::replay() {
  context_ = false;
  for (size_t i = 0; i < loaded_.size(); ++i) {
    auto r = child_.call(load_request(loaded_[i].first, loaded_[i].second));
    if (!r.value) {
      // Loaded before, not now: a policy file that behaves differently from
      // run to run. Leave it out and start again.
      const std::string shown = display_path(loaded_[i].first);
      diags_.push_back({"POL001", Severity::Error,
                        "policy file " + shown + " could not be loaded again after a sandbox restart: it " +
                            r.failure.why,
                        {shown, 0, 0}, "", "fix the policy file; the other policy files still load"});
      loaded_.erase(loaded_.begin() + static_cast<long>(i));
      return false;
    }
  }
  return true;
}

std::vector<Verdict> RemoteRuntime::run(size_t i) {
  const PolicyInfo& p = infos_[i];
  auto error = [&](const std::string& why) {
    return std::vector<Verdict>{{p.id, Outcome::Error, "", safe_text(why), p.loc, "", "", {}}};
  };
  while (child_.fresh() && !loaded_.empty() && !replay()) {
  }
  if (!context_) {
    auto r = child_.call({{"op", "context"}});
    if (!r.value) return error("the policy sandbox could not build the context: it " + r.failure.why);
    context_ = true;
  }
  auto r = child_.call({{"op", "run"}, {"id", p.id}});
  if (!r.value) {
    context_ = false;
    return error("the check " + r.failure.why);
  }
  if (r.value->contains("exception")) return error("the check raised an internal error: " + r.value->value("exception", ""));
  if (r.value->value("missing", false))
    return error("the policy is no longer declared by its file after the sandbox restarted (a file that behaves "
                 "differently from run to run)");
  std::vector<Verdict> out;
  for (const auto& j : (*r.value)["verdicts"]) {
    out.push_back(verdict_from_json(j));
    held_ += verdict_cost(out.back().policy.size(), out.back().address.size(), out.back().message.size());
  }
  return out;
}

// ---- JSON forms ----------------------------------------------------------

Json to_json(const SourceLoc& l) { return {{"file", l.file}, {"line", l.line}, {"column", l.column}}; }

SourceLoc loc_from_json(const Json& j) {
  if (!j.is_object()) return {};
  return {j.value("file", ""), j.value("line", 0), j.value("column", 0)};
}

Json to_json(const PolicyInfo& p) {
  return {{"id", p.id},         {"title", p.title}, {"description", p.description}, {"severity", p.severity},
          {"enforcement", p.enforcement}, {"controls", p.controls}, {"pack", p.pack}, {"loc", to_json(p.loc)}};
}

PolicyInfo info_from_json(const Json& j) {
  PolicyInfo p;
  p.id = j.value("id", "");
  p.title = j.value("title", "");
  p.description = j.value("description", "");
  p.severity = j.value("severity", "");
  p.enforcement = j.value("enforcement", "");
  if (j.contains("controls") && j["controls"].is_object())
    p.controls = j["controls"].get<std::map<std::string, std::vector<std::string>>>();
  p.pack = j.value("pack", "");
  p.loc = loc_from_json(j.value("loc", Json()));
  return p;
}

Json to_json(const Verdict& v) {
  return {{"policy", v.policy},
          {"outcome", static_cast<int>(v.outcome)},
          {"address", v.address},
          {"message", v.message},
          {"loc", to_json(v.loc)},
          {"waiver_justification", v.waiver_justification},
          {"waiver_approver", v.waiver_approver},
          {"waiver_loc", to_json(v.waiver_loc)}};
}

Verdict verdict_from_json(const Json& j) {
  Verdict v;
  v.policy = j.value("policy", "");
  int o = j.value("outcome", static_cast<int>(Outcome::Error));
  v.outcome = o >= 0 && o <= static_cast<int>(Outcome::NotApplicable) ? static_cast<Outcome>(o) : Outcome::Error;
  v.address = j.value("address", "");
  v.message = j.value("message", "");
  v.loc = loc_from_json(j.value("loc", Json()));
  v.waiver_justification = j.value("waiver_justification", "");
  v.waiver_approver = j.value("waiver_approver", "");
  v.waiver_loc = loc_from_json(j.value("waiver_loc", Json()));
  return v;
}

Json to_json(const Diagnostic& d) {
  return {{"code", d.code},       {"severity", static_cast<int>(d.severity)}, {"message", d.message},
          {"loc", to_json(d.loc)}, {"address", d.address}, {"hint", d.hint}, {"show_source", d.show_source}};
}

Diagnostic diagnostic_from_json(const Json& j) {
  Diagnostic d;
  d.code = j.value("code", "");
  int s = j.value("severity", 0);
  d.severity = s >= 0 && s <= static_cast<int>(Severity::Info) ? static_cast<Severity>(s) : Severity::Error;
  d.message = j.value("message", "");
  d.loc = loc_from_json(j.value("loc", Json()));
  d.address = j.value("address", "");
  d.hint = j.value("hint", "");
  d.show_source = j.value("show_source", true);
  return d;
}

Json to_json(const TestResult& r) {
  return {{"file", r.file}, {"name", r.name}, {"loc", to_json(r.loc)}, {"passed", r.passed}, {"detail", r.detail}};
}

TestResult test_result_from_json(const Json& j) {
  TestResult r;
  r.file = j.value("file", "");
  r.name = j.value("name", "");
  r.loc = loc_from_json(j.value("loc", Json()));
  r.passed = j.value("passed", false);
  r.detail = j.value("detail", "");
  return r;
}

}  // namespace plinth::policy
