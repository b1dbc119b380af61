#include "engine/cli/untrusted.h"

#include <cstdlib>

#include "engine/run/untrusted.h"

namespace plinth::cli {

namespace {

Untrusted& settings() {
  static Untrusted u;
  return u;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

const Untrusted& untrusted() { return settings(); }

std::vector<FlagSpec> untrusted_flags() {
  return {
      {"untrusted", "",
       "The blueprint and working tree come from an untrusted branch (a pull request): run no plugin, read and "
       "send no credential, take no endpoint option, beyond what the --trust file allows; write no state "
       "(default $PLINTH_UNTRUSTED=1; docs/security.md)."},
      {"trust", "FILE",
       "With --untrusted: the operator's trust file, kept outside the checkout (default $PLINTH_TRUST_FILE; "
       "docs/security.md)."},
  };
}

Status setup_untrusted(const std::string& command, const Args& args, const std::vector<std::string>& paths) {
  Untrusted& u = settings();
  u.on = args.flag("untrusted") || env("PLINTH_UNTRUSTED") == "1";
  if (!u.on) return {};
  std::optional<std::string> state = args.get("state");
  if (!state && !env("PLINTH_STATE").empty()) state = env("PLINTH_STATE");
  auto trust = run::check_untrusted(command, args.get("trust").value_or(env("PLINTH_TRUST_FILE")), state, paths);
  if (!trust) return trust.error();
  u.trust = std::move(*trust);
  return {};
}

}  // namespace plinth::cli
