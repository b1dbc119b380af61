#include "engine/policy/waivers.h"

#include <algorithm>

#include <yaml-cpp/yaml.h>

#include <ctime>
#include <filesystem>

#include "engine/core/files.h"
#include "engine/core/strings.h"

namespace plinth::policy {
namespace {

const std::vector<std::string> kKeys = {"policy", "resource", "justification", "approver", "expires"};

SourceLoc loc_of(const std::string& file, const YAML::Node& n) {
  auto m = n.Mark();
  if (m.line < 0) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

bool valid_date(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (s[i] < '0' || s[i] > '9') return false;
  int y = std::stoi(s.substr(0, 4)), m = std::stoi(s.substr(5, 2)), d = std::stoi(s.substr(8, 2));
  static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1 || d > days[m - 1]) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return !(m == 2 && d == 29 && !leap);
}

}  // namespace

bool address_glob(const std::string& pattern, const std::string& address) { return glob_match(pattern, address); }

std::string today_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

WaiverFile load_waivers(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  auto text = read_file(path);
  if (!text) return {{}, {{"POL020", Severity::Error, "cannot read waivers file: " + text.error().message, {path, 0, 0}, "", ""}}};
  return parse_waivers(*text, path);
}

WaiverFile parse_waivers(const std::string& text, const std::string& path) {
  WaiverFile out;
  auto bad = [&](const std::string& msg, SourceLoc loc, const std::string& hint = "") {
    out.diagnostics.push_back({"POL020", Severity::Error, msg, std::move(loc), "", hint});
  };
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    bad("waivers file is not valid YAML: " + e.msg, {path, e.mark.line + 1, e.mark.column + 1});
    return out;
  } catch (const YAML::Exception& e) {
    bad("cannot read waivers file: " + std::string(e.what()), {path, 0, 0});
    return out;
  }
  if (root.IsNull()) return out;
  const char* shape = "waivers.yaml holds `waivers:` followed by a list of {policy, resource, justification, approver, expires}";
  if (!root.IsMap()) return bad(shape, loc_of(path, root)), out;
  for (const auto& kv : root) {
    std::string key = kv.first.as<std::string>("");
    if (key != "waivers") bad("unknown key '" + key + "' in waivers file", loc_of(path, kv.first), shape);
  }
  YAML::Node list = root["waivers"];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) return bad("'waivers' must be a list", loc_of(path, list), shape), out;
  for (const auto& item : list) {
    SourceLoc loc = loc_of(path, item);
    if (!item.IsMap()) {
      bad("a waiver must be a mapping with policy, resource, justification, approver, expires", loc);
      continue;
    }
    Waiver w;
    w.loc = loc;
    bool ok = true;
    std::vector<std::string> misspelled;  // fields an unknown key was meant to be: not also "missing"
    for (const auto& kv : item) {
      std::string key = kv.first.as<std::string>("");
      auto field = [&]() -> std::string* {
        if (key == "policy") return &w.policy;
        if (key == "resource") return &w.resource;
        if (key == "justification") return &w.justification;
        if (key == "approver") return &w.approver;
        if (key == "expires") return &w.expires;
        return nullptr;
      }();
      if (!field) {
        bad("unknown waiver field '" + key + "'", loc_of(path, kv.first), did_you_mean(key, kKeys));
        if (auto m = closest_match(key, kKeys)) misspelled.push_back(*m);
        ok = false;
      } else if (!kv.second.IsScalar()) {
        bad("waiver field '" + key + "' must be a string", loc_of(path, kv.second));
        ok = false;
      } else {
        *field = kv.second.Scalar();
      }
    }
    for (const auto& key : kKeys) {
      if (!item[key] && std::find(misspelled.begin(), misspelled.end(), key) == misspelled.end()) {
        bad("waiver is missing '" + key + "'", loc,
            key == "expires" ? "every waiver expires: add expires: YYYY-MM-DD" : "");
        ok = false;
      }
    }
    if (item["expires"] && !w.expires.empty() && !valid_date(w.expires)) {
      bad("waiver expiry '" + w.expires + "' is not a date in the form YYYY-MM-DD", loc_of(path, item["expires"]));
      ok = false;
    }
    if (ok) out.waivers.push_back(std::move(w));
  }
  return out;
}

void apply_waivers(const std::vector<Waiver>& waivers, const std::string& today, Evaluation& eval) {
  for (const auto& w : waivers) {
    bool expired = today > w.expires;  // YYYY-MM-DD compares as text
    size_t matched = 0;
    for (auto& v : eval.verdicts) {
      if (v.policy != w.policy || !address_glob(w.resource, v.address)) continue;
      if (v.outcome != Outcome::Fail && v.outcome != Outcome::Waived) continue;
      ++matched;
      if (expired || v.outcome == Outcome::Waived) continue;
      v.outcome = Outcome::Waived;
      v.waiver_justification = w.justification;
      v.waiver_approver = w.approver;
      v.waiver_loc = w.loc;
    }
    if (expired) {
      eval.diagnostics.push_back({"POL021", Severity::Error,
                                  "waiver for " + w.policy + " on '" + w.resource + "' expired on " + w.expires +
                                      (matched ? "; the " + std::to_string(matched) + " failure(s) it covered stand"
                                               : ""),
                                  w.loc, "", "fix the failure, or renew the waiver with a new expiry and approval"});
    } else if (matched == 0) {
      bool known = eval.find(w.policy) != nullptr;
      eval.diagnostics.push_back(
          {"POL022", Severity::Warning,
           known ? "waiver for " + w.policy + " on '" + w.resource + "' matches no failure"
                 : "waiver names policy " + w.policy + ", which did not run for this blueprint",
           w.loc, "", "remove the waiver, or correct its policy ID or resource pattern"});
    }
  }
}

}  // namespace plinth::policy
