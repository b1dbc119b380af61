#pragma once
// Whether this translation unit is built with a sanitizer whose allocator
// replaces glibc's (AddressSanitizer, ThreadSanitizer, MemorySanitizer). GCC
// defines __SANITIZE_ADDRESS__; clang (14, Debian's) says it through
// __has_feature only.

namespace plinth {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

}  // namespace plinth
