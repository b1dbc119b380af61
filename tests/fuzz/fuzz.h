#pragma once
// Shared by the libFuzzer targets in tests/fuzz/ (docs/fuzzing.md). Each
// target defines LLVMFuzzerTestOneInput; in the fuzzing build (.ci/fuzz,
// -DPLINTH_FUZZ=ON) libFuzzer drives it, in the regular build replay_main.cpp
// runs it over tests/fuzz/regressions/<target>/ as a CTest test.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace plinth::fuzz {

inline std::string text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

/// The whitespace (' ', '\t', '\n', '\r') an input ends with: the targets
/// that feed a JSON or XML document to a fake service read flags from it,
/// since a document stays valid whatever whitespace follows it.
inline std::string trailing_space(const uint8_t* data, size_t size) {
  size_t i = size;
  while (i > 0 && (data[i - 1] == ' ' || data[i - 1] == '\t' || data[i - 1] == '\n' || data[i - 1] == '\r')) --i;
  return text(data + i, size - i);
}

/// A property every input must keep broke: print it and abort, so libFuzzer
/// saves the input as a crash.
[[noreturn]] inline void violated(const std::string& what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what.c_str());
  std::abort();
}

}  // namespace plinth::fuzz
