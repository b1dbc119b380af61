// State writes that the disk refuses (issue 16): a full file system and a
// read-only directory fail cleanly, naming the path, and the previous state
// stays intact and loadable. The full disk is a real kernel-enforced failure
// two ways: RLIMIT_FSIZE (write(2) fails with EFBIG once SIGXFSZ is ignored,
// for any user) and, when this process may mount, a 64 KiB tmpfs (ENOSPC).
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "engine/state/state.h"
#include "tests/fault/fault.h"
#include "tests/support/blueprints.h"
#include "tests/support/workspace.h"

namespace plinth::test::fault_disk {

namespace fs = std::filesystem;

namespace {

/// A state of `n` nodes with some bulk, so a save needs a few hundred KiB.
state::StateDocument big_state(int n) {
  state::StateDocument doc = state::new_document();
  doc.serial = 1;
  for (int i = 0; i < n; ++i)
    doc.resources.push_back(
        make_resource("baremetal.node", "big", i, "baremetal", {{"gpu", "H100-80GB"}, {"note", std::string(400, 'x')}}));
  return doc;
}

/// Runs plinth with `args` in a child whose file size limit is `limit` bytes
/// (SIGXFSZ ignored, so writes fail with EFBIG as on a full disk). Its stdout
/// and stderr are both in `err`.
RunResult run_limited(const std::vector<std::string>& args, rlim_t limit) {
  const TempDir io;
  const std::string out = io.path() + "/out";
  pid_t pid = fault::start_plinth(args, out, [limit] {
    signal(SIGXFSZ, SIG_IGN);
    rlimit rl{limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(124);
  });
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = slurp(out);
  return r;
}

/// Files in `dir` whose name holds ".tmp." (an atomic write left behind).
std::vector<std::string> leftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().string());
  return out;
}

/// The state at `path` loads and is `before`.
void check_intact(const std::string& path, const std::string& before_text) {
  CHECK(slurp(path) == before_text);
  auto doc = state::open_local(path)->load();
  REQUIRE(doc.ok());
  REQUIRE(*doc);
  CHECK((*doc)->serial == 1);
  CHECK(leftovers(fs::path(path).parent_path().string()).empty());
}

}  // namespace

TEST_CASE("a full disk (RLIMIT_FSIZE, EFBIG) fails the state save naming the path, the previous state intact",
          "[fault][disk]") {
  TempDir dir;
  const std::string path = dir.path() + "/plinth.state.json";
  REQUIRE(state::open_local(path)->save(big_state(300)).ok());
  const std::string before = slurp(path);
  REQUIRE(before.size() > 100 * 1024);

  // state rm writes the history copy, then the state file: the first write
  // past 64 KiB fails.
  auto r = run_limited({"state", "rm", "baremetal.node.big[7]", "--state", path}, 64 * 1024);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot save state " + path) != std::string::npos);
  CHECK(r.err.find("File too large") != std::string::npos);
  CHECK(r.err.find("unchanged") != std::string::npos);
  check_intact(path, before);
  // The history holds no version that never became current.
  CHECK_FALSE(fs::exists(dir.path() + "/plinth.state.json.d/history/2.json"));

  // With room again the same command succeeds.
  r = run_plinth({"state", "rm", "baremetal.node.big[7]", "--state", path});
  CHECK(r.exit_code == 0);
}

TEST_CASE("a full disk fails plan -out naming the file, the previous plan file intact", "[fault][disk]") {
  // An unsigned plan file is written as it is made (write_file_atomic_from):
  // a write that fails part way leaves no file and no temporary behind.
  TempDir dir;
  const std::string out = dir.path() + "/plan.out", state = dir.path() + "/plinth.state.json";
  const std::vector<std::string> plan = {"plan", kLabExample, "--state", state, "--refresh=false", "-out", out};
  auto first = run_plinth(plan);
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  const std::string before = slurp(out);
  REQUIRE(before.size() > 8 * 1024);

  auto r = run_limited(plan, 4 * 1024);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot write " + out) != std::string::npos);
  CHECK(r.err.find("File too large") != std::string::npos);
  CHECK(r.err.find("unchanged") != std::string::npos);
  CHECK(slurp(out) == before);
  CHECK(leftovers(dir.path()).empty());
  CHECK(run_plinth({"show", out}).exit_code == 0);
}

TEST_CASE("a full tmpfs (ENOSPC) and a read-only directory fail the state save naming the path, the previous state "
          "intact",
          "[fault][disk]") {
  TempDir dir;
  const std::string mnt = dir.path() + "/mnt";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=256k") != 0) {
    // Mounting needs CAP_SYS_ADMIN. RLIMIT_FSIZE above covers the full disk;
    // a read-only directory is then a directory without write permission.
    WARN("cannot mount a tmpfs here (" << std::strerror(errno) << "): checking a mode 0500 directory instead");
    if (geteuid() == 0) return;  // root writes through permissions: nothing to check without a mount
    const std::string ro = dir.path() + "/ro";
    fs::create_directories(ro);
    const std::string path = ro + "/plinth.state.json";
    REQUIRE(state::open_local(path)->save(big_state(10)).ok());
    const std::string before = slurp(path);
    ::chmod(ro.c_str(), 0500);
    auto r = run_plinth({"state", "rm", "baremetal.node.big[1]", "--state", path});
    ::chmod(ro.c_str(), 0700);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(ro) != std::string::npos);
    check_intact(path, before);
    return;
  }
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{mnt};
  // Room for the first save (history copy and file), not for a third copy.
  const size_t size = state::to_json_text(big_state(300)).size();
  const std::string opts = "size=" + std::to_string(size * 5 / 2);
  REQUIRE(::mount("tmpfs", mnt.c_str(), "tmpfs", MS_REMOUNT, opts.c_str()) == 0);

  const std::string path = mnt + "/plinth.state.json";
  REQUIRE(state::open_local(path)->save(big_state(300)).ok());
  const std::string before = slurp(path);
  std::error_code ec;
  const auto space = fs::space(mnt, ec);
  INFO("tmpfs free: " << space.available);
  auto r = run_plinth({"state", "rm", "baremetal.node.big[7]", "--state", path});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot save state " + path) != std::string::npos);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  check_intact(path, before);

  // Read-only: the file system remounted read-only.
  REQUIRE(::mount("tmpfs", mnt.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, opts.c_str()) == 0);
  r = run_plinth({"state", "rm", "baremetal.node.big[7]", "--state", path});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(path) != std::string::npos);
  CHECK(r.err.find("Read-only file system") != std::string::npos);
  check_intact(path, before);
}

}  // namespace plinth::test::fault_disk
