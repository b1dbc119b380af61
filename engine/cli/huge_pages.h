#pragma once
// Transparent huge pages for malloc's heap. A large plan builds and touches
// gigabytes of small objects; on a kernel whose THP mode is "madvise" (the
// default of many distributions) every 4 KiB page of that heap is a page
// fault of its own, and faults are expensive in virtual machines. glibc backs
// its heap with huge pages only when told at start-up (the tunable
// glibc.malloc.hugetlb=1), so plinth starts itself again once with it set
// (docs/benchmarks.md, "Huge pages"). PLINTH_HUGE_PAGES=0 turns this off.
#include <optional>
#include <string>
#include <string_view>

namespace plinth::cli {

/// What plinth runs itself again with: GLIBC_TUNABLES, and the marker that
/// says, in the second run, what the user's GLIBC_TUNABLES was ("-" unset,
/// "=VALUE" set) so that it is put back before anything else starts.
struct HugePagesExec {
  std::string tunables;
  std::string marker;
};

/// Whether to start again, from the user's GLIBC_TUNABLES (nullptr: unset),
/// the kernel's THP mode (the text of /sys/kernel/mm/transparent_hugepage/enabled,
/// "" when it cannot be read) and PLINTH_HUGE_PAGES (nullptr: unset). Not when
/// the kernel gives huge pages to every heap already ("[always]") or to none
/// ("[never]", no THP), when the user set glibc.malloc.hugetlb, or when
/// PLINTH_HUGE_PAGES is "0".
std::optional<HugePagesExec> huge_pages_exec(const char* tunables, std::string_view thp_enabled,
                                             const char* opt_out);

/// Called first in main: in the first run of a command that loads a fleet
/// (Command::loads_fleet: validate, plan, show, audit, apply, destroy,
/// refresh, graph, verify, state), execs /proc/self/exe with argv and the tunable set (and returns
/// when that fails: nothing changes); in the second, puts the user's
/// GLIBC_TUNABLES back so that no child inherits ours. Never in a sanitizer
/// build (its allocator is not glibc's). True when this run's heap uses huge
/// pages because of it.
bool use_huge_pages(char** argv);

}  // namespace plinth::cli
