#include "engine/cli/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/cli/command.h"
#include "engine/core/sanitized.h"

namespace plinth::cli {

namespace {

const char* const kMarker = "PLINTH_MALLOC_TUNED";
const char* const kTunable = "glibc.malloc.hugetlb=1";

void restore(const char* marker) {
  if (marker[0] == '=') setenv("GLIBC_TUNABLES", marker + 1, 1);
  else unsetenv("GLIBC_TUNABLES");
  unsetenv(kMarker);
}

}  // namespace

std::optional<HugePagesExec> huge_pages_exec(const char* tunables, std::string_view thp_enabled,
                                             const char* opt_out) {
  if (opt_out && std::strcmp(opt_out, "0") == 0) return std::nullopt;
  if (thp_enabled.find("[madvise]") == std::string_view::npos) return std::nullopt;
  std::string current = tunables ? tunables : "";
  if (current.find("glibc.malloc.hugetlb") != std::string::npos) return std::nullopt;  // the user's choice
  HugePagesExec e;
  e.tunables = current.empty() ? kTunable : current + ":" + kTunable;
  e.marker = tunables ? "=" + current : "-";
  return e;
}

bool use_huge_pages(char** argv) {
  if (const char* marker = std::getenv(kMarker)) {
    restore(marker);
    return true;
  }
  // A sanitizer's allocator replaces glibc's: the tunable would do nothing.
  // Starting again costs ~20 ms, which only the commands that load a fleet
  // earn back (a 10,000-node plan saves ~0.2 s).
  if (kSanitizedBuild || !argv[0] || !argv[1]) return false;
  const Command* cmd = find_command(argv[1]);
  if (!cmd || !cmd->loads_fleet) return false;
  std::string thp;
  if (std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled"); f) {
    std::ostringstream text;
    text << f.rdbuf();
    thp = text.str();
  }
  auto e = huge_pages_exec(std::getenv("GLIBC_TUNABLES"), thp, std::getenv("PLINTH_HUGE_PAGES"));
  if (!e) return false;
  setenv("GLIBC_TUNABLES", e->tunables.c_str(), 1);
  setenv(kMarker, e->marker.c_str(), 1);
  execv("/proc/self/exe", argv);
  restore(e->marker.c_str());  // no /proc, or the binary is gone: run as we are
  return false;
}

}  // namespace plinth::cli
