// The PostgreSQL server stopped mid-apply (issue 16): the apply starts no new
// operation, keeps what completes after in a local journal, exits non-zero
// naming it, and the next run writes it into the state when the server is
// back, without losing or repeating an operation. The test runs a PostgreSQL
// cluster of its own (.ci/postgres with PLINTH_PG_PRIVATE=1), since it stops it.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/state/state.h"
#include "tests/fault/fault.h"

namespace plinth::test::fault_lost_database {

namespace {

constexpr int kNodes = 12;

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// A PostgreSQL cluster nobody else uses, in /tmp (the postgres user must
/// reach it), removed when the object dies.
class PrivatePostgres {
 public:
  PrivatePostgres() : dir_("/tmp/plinth-pg-lost-" + std::to_string(getpid())), port_(free_port()) {
    std::filesystem::remove_all(dir_);
    start();
  }
  ~PrivatePostgres() {
    stop();
    std::filesystem::remove_all(dir_);
  }
  PrivatePostgres(const PrivatePostgres&) = delete;
  PrivatePostgres& operator=(const PrivatePostgres&) = delete;

  /// Starts it (creating it the first time); the connection URL.
  const std::string& start() {
    auto r = run_program({"bash", source_dir() + "/.ci/postgres"}, "",
                         {{"PLINTH_PG_PRIVATE", "1"}, {"PLINTH_PG_DIR", dir_}, {"PLINTH_PG_PORT", std::to_string(port_)}});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    url_ = r.out.substr(r.out.rfind("postgres://"));
    while (!url_.empty() && (url_.back() == '\n' || url_.back() == '\r')) url_.pop_back();
    return url_;
  }
  /// Stops it at once, as a crash or a killed server would (no clean shutdown).
  void stop() {
    run_program({"bash", "-c",
                 "bin=/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -n1)/bin; "
                 "if [ \"$(id -u)\" -eq 0 ]; then runuser -u postgres -- \"$bin/pg_ctl\" -D \"$1/data\" stop -m immediate; "
                 "else sudo -u postgres \"$bin/pg_ctl\" -D \"$1/data\" stop -m immediate; fi",
                 "stop", dir_});
  }

 private:
  std::string dir_;
  int port_;
  std::string url_;
};

size_t lines_of(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

}  // namespace

TEST_CASE("PostgreSQL stopped mid-apply: a local journal keeps what completed, the next run writes it in",
          "[fault][postgres][journal]") {
  PrivatePostgres pg;
  const std::string url = pg.start() + "?workspace=lost-db";
  const std::string shown = state::redact_location(url);
  Emulator emu({"--bmcs", std::to_string(kNodes), "--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "150",
                "--power-state", "Off", "--latency-ms", "10"});
  TempDir dir;
  const std::string journal_dir = dir.path() + "/journal";
  const std::string bp = dir.write("bp.yaml", fault::one_pool_blueprint("lost", "gpu", kNodes, emu));
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"},
                                                  {"PLINTH_JOURNAL_DIR", journal_dir}};

  // 1. The apply runs; after a few servers are done the database stops.
  const std::string out = dir.path() + "/apply.txt";
  pid_t pid = fault::start_plinth({"apply", bp, "--state", url, "--auto-approve", "--parallelism", "2",
                                   "--provider-option", "baremetal.poll_ms=20"},
                                  out, [&] { setenv("PLINTH_JOURNAL_DIR", journal_dir.c_str(), 1); });
  for (int i = 0; i < 3000 && resets(emu.log_path()).size() < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(resets(emu.log_path()).size() >= 4);
  pg.stop();
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  const std::string text = slurp(out);
  INFO(text);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(text.find("started no new operation") != std::string::npos);
  CHECK(text.find("kept in the local file " + journal_dir + "/") != std::string::npos);
  CHECK(text.find("plinth state push-journal --state " + shown) != std::string::npos);
  CHECK(text.find("not started") != std::string::npos);  // the servers after the stop were left alone
  const auto provisioned = resets(emu.log_path());
  CHECK(provisioned.size() < static_cast<size_t>(kNodes));
  size_t journals = 0;
  for (const auto& e : std::filesystem::directory_iterator(journal_dir))
    journals += e.path().string().ends_with(".state.json");
  CHECK(journals == 1);

  // 2. The database is back. A plan never writes state: it says the journal
  // is there and leaves it.
  pg.start();
  auto r = run_plinth({"plan", bp, "--state", url}, "", env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("plinth: the local journal " + journal_dir + "/") != std::string::npos);
  CHECK(r.err.find("plinth apply writes the journal into the state first") != std::string::npos);
  journals = 0;
  for (const auto& e : std::filesystem::directory_iterator(journal_dir))
    journals += e.path().string().ends_with(".state.json");
  CHECK(journals == 1);

  // 3. The apply writes the journal into the state first, so the servers
  // provisioned during the outage are not created again, and converges;
  // every server was provisioned exactly once.
  const size_t before = lines_of(emu.log_path());
  r = run_plinth({"apply", bp, "--state", url, "--auto-approve", "--provider-option", "baremetal.poll_ms=20"}, "", env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("plinth: wrote the local journal " + journal_dir + "/") != std::string::npos);
  CHECK(r.out.find("Plan: " + std::to_string(kNodes - static_cast<int>(provisioned.size())) + " to create, 0 to update") !=
        std::string::npos);
  std::error_code ec;  // the apply removes the journal, and its directory once empty
  for (const auto& e : std::filesystem::directory_iterator(journal_dir, ec))
    CHECK_FALSE(e.path().string().ends_with(".state.json"));
  for (auto [bmc, n] : resets(emu.log_path(), before)) CHECK(provisioned.count(bmc) == 0);
  const auto all = resets(emu.log_path());
  CHECK(all.size() == static_cast<size_t>(kNodes));
  for (auto [bmc, n] : all) {
    INFO("BMC " << bmc);
    CHECK(n == 1);
  }
  r = run_plinth({"plan", bp, "--state", url, "--detailed-exitcode"}, "", env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  auto doc = state::open_backend(url)->load();
  REQUIRE(doc.ok());
  REQUIRE(*doc);
  CHECK((*doc)->resources.size() == static_cast<size_t>(kNodes + 1));
}

}  // namespace plinth::test::fault_lost_database
