#pragma once
#include <map>
#include <string>
#include <vector>

namespace plinth::test {

/// The repository root and tests/data/third_party, as compiled in.
std::string source_dir();
std::string testdata_dir();

/// What a child process did.
struct RunResult {
  int exit_code = -1;  ///< exit status, or 128+signal when killed
  std::string out;
  std::string err;
};

/// The plinth under test: $PLINTH_TEST_BINARY when set (an installed
/// /usr/bin/plinth in CI, or an older build to show a test fails there),
/// else the one this build made.
std::string plinth_binary();

/// Runs plinth_binary() with `args` in `cwd` (default: the repo root) with
/// extra environment `env`, capturing stdout and stderr.
RunResult run_plinth(const std::vector<std::string>& args, const std::string& cwd = "",
                     const std::map<std::string, std::string>& env = {});

/// Runs any program the same way.
RunResult run_program(const std::vector<std::string>& argv, const std::string& cwd = "",
                      const std::map<std::string, std::string>& env = {}, const std::string& stdin_text = "");

/// A fresh temporary directory, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  /// Writes `text` to path()/name (creating parent folders) and returns the full path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

/// What headless Chromium made of an HTML file: the screenshot run (its exit
/// code and log, where console messages and refused loads appear) and the
/// DOM after load (--dump-dom).
struct BrowserRender {
  RunResult shot;
  RunResult dom;
};
/// Renders the file `html` in headless Chromium (no network, a throwaway
/// profile), writing a 1280 x `height` screenshot to `png`.
BrowserRender render_in_chromium(const std::string& html, const std::string& png, int height = 1600);

/// Reads a whole file ("" when missing).
std::string slurp(const std::string& path);

/// This machine's host name, as a lock's holder names it.
std::string hostname();

}  // namespace plinth::test
