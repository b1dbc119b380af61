// plinth's allocator: jemalloc, linked into the executable (not into the
// libraries or the tests), with its memory on transparent huge pages.
//
// A plan of a large fleet builds and touches gigabytes of small objects. On
// a kernel whose THP mode is "madvise" (the default of many distributions)
// every 4 KiB page of that memory is a page fault of its own, and faults are
// expensive in virtual machines: they were a fifth of a 100,000-node plan's
// samples. jemalloc asks for huge pages (madvise) for its extents and its
// metadata when configured so at start-up, which this program's malloc_conf
// does, so no environment variable and no second start is needed. The
// allocator is also cheaper than glibc's for the plan's many small JSON nodes
// (docs/benchmarks.md, "Allocator"). MALLOC_CONF in the environment is read
// after this and may change any option (MALLOC_CONF=thp:default turns the huge
// pages off). Sanitizer builds (PLINTH_FUZZ) keep their own allocator.
#include "engine/cli/allocator.h"

#include <string>

#ifdef PLINTH_JEMALLOC
#include <jemalloc/jemalloc.h>

extern "C" {
// Read by jemalloc when it initialises (before main): its documented way
// for a program to set its options.
const char* malloc_conf = "thp:always,metadata_thp:always";
}

namespace plinth::cli {

std::string allocator_description() {
  const char* version = "?";
  const char* thp = "?";
  size_t size = sizeof(const char*);
  mallctl("version", &version, &size, nullptr, 0);
  size = sizeof(const char*);
  mallctl("opt.thp", &thp, &size, nullptr, 0);
  return std::string("jemalloc ") + version + ", thp:" + thp;
}

}  // namespace plinth::cli

#else
namespace plinth::cli {

std::string allocator_description() { return "the C library's malloc (this build does not link jemalloc)"; }

}  // namespace plinth::cli
#endif
