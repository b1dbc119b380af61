#pragma once
#include <string>
#include <vector>

#include "engine/core/diagnostic.h"
#include "engine/policy/policy.h"

namespace plinth::policy {

/// One entry of waivers.yaml: an accepted exception to a policy.
struct Waiver {
  std::string policy;         ///< policy ID
  std::string resource;       ///< address pattern: '*' any run of characters, '?' one; all else literal
  std::string justification;  ///< why the risk is accepted
  std::string approver;       ///< who accepted it
  std::string expires;        ///< YYYY-MM-DD, the last day the waiver holds
  SourceLoc loc;              ///< the entry's position in waivers.yaml
  bool operator==(const Waiver&) const = default;
};

struct WaiverFile {
  std::vector<Waiver> waivers;
  Diagnostics diagnostics;  ///< POL020: the file is malformed (each with file:line:column)
};

/// Reads `path` (`waivers: [ {policy, resource, justification, approver,
/// expires}, ... ]`). A missing file is no waivers and no diagnostics.
WaiverFile load_waivers(const std::string& path);

/// The same from text in memory; `path` names it in diagnostics. Never throws.
WaiverFile parse_waivers(const std::string& text, const std::string& path);

/// True when `address` matches the waiver pattern (`*`, `?`; brackets are literal).
bool address_glob(const std::string& pattern, const std::string& address);

/// Today's date in UTC as YYYY-MM-DD.
std::string today_utc();

/// Turns each failure covered by a waiver that has not expired on `today`
/// into a Waived verdict carrying the justification. Reports every expired
/// waiver as an error (POL021; the failures it named stand) and a live
/// waiver that matches no failure as a warning (POL022), both at the
/// waiver's file:line, into eval.diagnostics.
void apply_waivers(const std::vector<Waiver>& waivers, const std::string& today, Evaluation& eval);

}  // namespace plinth::policy
