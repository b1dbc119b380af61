#include "tests/emulators/redfish/service.h"

#include <cctype>
#include <regex>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace plinth::redfish_emulator {
namespace {

namespace fs = std::filesystem;

const char* const kRegistry = "Base.1.8.1.";
const char* const kSessions = "/redfish/v1/SessionService/Sessions";
const char* const kTasks = "/redfish/v1/TaskService/Tasks";
const char* const kTaskMonitors = "/redfish/v1/TaskService/TaskMonitors/";
/// ProtocolFeaturesSupported.ExpandQuery.MaxLevels with --expand on (as the DMTF mockups say).
constexpr int kMaxExpandLevels = 6;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(s.substr(start));
  return out;
}


const std::vector<std::string> kResetTypes = {
    "On",      "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "PowerCycle",
    "ForceOn", "Nmi",      "PushPowerButton"};

/// Base registry messages the emulator answers with: id -> {text, resolution}.
const std::map<std::string, std::pair<std::string, std::string>>& base_messages() {
  static const std::map<std::string, std::pair<std::string, std::string>> m = {
      {"PropertyNotWritable",
       {"The property %1 is a read only property and cannot be assigned a value.",
        "Remove the property from the request body and resubmit the request if the operation failed."}},
      {"PropertyUnknown",
       {"The property %1 is not in the list of valid properties for the resource.",
        "Remove the unknown property from the request body and resubmit the request if the operation failed."}},
      {"PropertyValueNotInList",
       {"The value %1 for the property %2 is not in the list of acceptable values.",
        "Choose a value from the enumeration list that the implementation can support and resubmit the request if "
        "the operation failed."}},
      {"PropertyValueTypeError",
       {"The value %1 for the property %2 is of a different type than the property can accept.",
        "Correct the value for the property in the request body and resubmit the request if the operation failed."}},
      {"PropertyMissing",
       {"The property %1 is a required property and must be included in the request.",
        "Ensure that the property is in the request body and has a valid value and resubmit the request if the "
        "operation failed."}},
      {"ActionParameterNotSupported",
       {"The parameter %1 for the action %2 is not supported on the target resource.",
        "Remove the parameter supplied and resubmit the request if the operation failed."}},
      {"ActionParameterMissing",
       {"The action %1 requires the parameter %2 to be present in the request body.",
        "Supply the action with the required parameter in the request body when the request is resubmitted."}},
      {"ActionNotSupported",
       {"The action %1 is not supported by the resource.",
        "The action supplied cannot be resubmitted to the implementation.  Perhaps the action was invalid, the "
        "wrong resource was the target or the implementation documentation may be of assistance."}},
      {"PreconditionFailed",
       {"The ETag supplied did not match the ETag required to change this resource.",
        "Try the operation again using the appropriate ETag."}},
      {"NoValidSession",
       {"There is no valid session established with the implementation.",
        "Establish a session before attempting any operations."}},
      {"ResourceAtUriUnauthorized",
       {"While accessing the resource at %1, the service received an authorization error %2.",
        "Ensure that the appropriate access is provided for the service in order for it to access the URI."}},
      {"CouldNotEstablishConnection",
       {"The service failed to establish a connection with the URI %1.",
        "Ensure that the URI contains a valid and reachable node name, protocol information and other URI "
        "components."}},
      {"SourceDoesNotSupportProtocol",
       {"The other end of the connection at %1 does not support the specified protocol %2.",
        "Change protocols or URIs. "}},
      {"ResourceMissingAtURI",
       {"The resource at the URI %1 was not found.",
        "Place a valid resource at the URI or correct the URI and resubmit the request."}},
      {"MalformedJSON",
       {"The request body submitted was malformed JSON and could not be parsed by the receiving service.",
        "Ensure that the request body is valid JSON and resubmit the request."}},
      {"ResourceInUse",
       {"The change to the requested resource failed because the resource is in use or in transition.",
        "Remove the condition and resubmit the request if the operation failed."}},
      {"GeneralError",
       {"A general error has occurred. See Resolution for information on how to resolve the error.", "None."}},
      {"Success", {"Successfully Completed Request", "None."}},
      {"ServiceTemporarilyUnavailable",
       {"The service is temporarily unavailable.  Retry in %1 seconds.",
        "Wait for the indicated retry duration and retry the operation."}},
      {"QueryParameterValueFormatError",
       {"The value %1 for the parameter %2 is of a different format than the parameter can accept.",
        "Correct the value for the query parameter in the request and resubmit the request if the operation "
        "failed."}},
      {"QueryParameterOutOfRange",
       {"The value %1 for the query parameter %2 is out of range %3.",
        "Reduce the value for the query parameter to a value that is within range, such as a start or count "
        "value that is within bounds of the number of resources in a collection or a page that is within the "
        "range of valid pages."}},
      {"InternalError",
       {"The request failed due to an internal service error.  The service is still operational.",
        "Resubmit the request.  If the problem persists, consider resetting the service."}},
  };
  return m;
}

json message(const std::string& id, const std::vector<std::string>& args, const std::string& related = "",
             const std::string& resolution = "") {
  const auto& [text, default_resolution] = base_messages().at(id);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 1 < text.size() && text[i + 1] >= '1' && text[i + 1] <= '9') {
      size_t n = static_cast<size_t>(text[i + 1] - '1');
      out += n < args.size() ? args[n] : "";
      ++i;
    } else {
      out += text[i];
    }
  }
  json m = {{"@odata.type", "#Message.v1_1_1.Message"},
            {"MessageId", kRegistry + id},
            {"Message", out},
            {"MessageArgs", args},
            {"Severity", "Warning"},
            {"MessageSeverity", "Warning"},
            {"Resolution", resolution.empty() ? default_resolution : resolution}};
  if (!related.empty()) m["RelatedProperties"] = json::array({"#/" + related});
  return m;
}

Response error(int status, std::vector<json> messages) {
  Response r;
  r.status = status;
  json e;
  if (messages.size() == 1) {
    e["code"] = messages[0]["MessageId"];
    e["message"] = messages[0]["Message"];
  } else {
    e["code"] = std::string(kRegistry) + "GeneralError";
    e["message"] = "A general error has occurred. See ExtendedInfo for more information.";
  }
  e["@Message.ExtendedInfo"] = std::move(messages);
  r.body = json{{"error", e}}.dump();
  return r;
}

}  // namespace

Response error_response(int status, const std::string& message_id, const std::vector<std::string>& args) {
  return error(status, {message(message_id, args)});
}

namespace {

Response not_found(const std::string& uri) { return error(404, {message("ResourceMissingAtURI", {uri})}); }

Response method_not_allowed(const std::string& uri, const std::string& method, const std::string& allow,
                            const std::string& hint = "") {
  Response r = error(405, {message("GeneralError", {}, "",
                                   method + " is not allowed on " + uri + "; allowed: " + allow + "." +
                                       (hint.empty() ? "" : " " + hint))});
  r.headers.emplace_back("Allow", allow);
  return r;
}

std::string type_of(const json& r) {
  if (!r.is_object()) return "";
  std::string t = r.value("@odata.type", "");
  auto dot = t.rfind('.');
  return dot == std::string::npos ? t : t.substr(dot + 1);
}

std::string link(const json& r, const std::string& key) {
  if (!r.is_object() || !r.contains(key) || !r[key].is_object()) return "";
  return r[key].value("@odata.id", "");
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string hex(uint64_t v, int digits) {
  static const char* d = "0123456789abcdef";
  std::string s(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = d[v & 15];
  return s;
}

std::string base64_decode(const std::string& in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  int buf = 0, bits = 0;
  for (char c : in) {
    int v = val(c);
    if (v < 0) break;
    buf = (buf << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xff);
    }
  }
  return out;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

/// The start-up adjustments docs/emulators.md lists under "Changes to the mockup".
void adjust(Mockup& m) {
  for (auto& [uri, r] : m.resources) {
    std::string type = type_of(r);
    if (uri == "/redfish/v1") {
      r["ProtocolFeaturesSupported"] = {
          {"ExpandQuery", {{"ExpandAll", false}, {"Levels", false}, {"Links", false}, {"NoLinks", false}}},
          {"SelectQuery", false},
          {"FilterQuery", false},
          {"OnlyMemberQuery", false},
          {"ExcerptQuery", false}};
    } else if (type == "ComputerSystem") {
      auto& reset = r["Actions"]["#ComputerSystem.Reset"];
      reset["target"] = uri + "/Actions/ComputerSystem.Reset";
      reset["ResetType@Redfish.AllowableValues"] = kResetTypes;
      if (!r.contains("PowerState")) r["PowerState"] = "On";
      auto& boot = r["Boot"];
      if (!boot.contains("BootSourceOverrideEnabled")) boot["BootSourceOverrideEnabled"] = "Disabled";
      if (!boot.contains("BootSourceOverrideTarget")) boot["BootSourceOverrideTarget"] = "None";
      auto& allowed = boot["BootSourceOverrideTarget@Redfish.AllowableValues"];
      if (!allowed.is_array()) allowed = json::array({"None", "Pxe", "Cd", "Usb", "Hdd", "BiosSetup"});
      if (std::find(allowed.begin(), allowed.end(), "UefiHttp") == allowed.end()) allowed.push_back("UefiHttp");
    } else if (type == "VirtualMedia") {
      r["Actions"]["#VirtualMedia.InsertMedia"] = {{"target", uri + "/Actions/VirtualMedia.InsertMedia"}};
      r["Actions"]["#VirtualMedia.EjectMedia"] = {{"target", uri + "/Actions/VirtualMedia.EjectMedia"}};
    } else if (type == "Bios" && r.contains("@Redfish.Settings")) {
      r["@Redfish.Settings"].erase("Messages");
      r["@Redfish.Settings"].erase("ETag");
      if (r.contains("ResetBiosToDefaultsPending")) r["ResetBiosToDefaultsPending"] = false;
    }
  }
  // Nothing is pending on a fresh BMC.
  for (auto& [uri, r] : m.resources) {
    if (type_of(r) != "Bios" || !r.contains("@Redfish.Settings")) continue;
    std::string settings = r["@Redfish.Settings"]["SettingsObject"].value("@odata.id", "");
    if (auto it = m.resources.find(settings); it != m.resources.end()) it->second["Attributes"] = json::object();
  }
  if (!m.resources.count(kTasks) && m.resources.count("/redfish/v1/TaskService"))
    m.resources[kTasks] = {{"@odata.type", "#TaskCollection.TaskCollection"},
                           {"@odata.id", kTasks},
                           {"Name", "Task Collection"},
                           {"Members", json::array()},
                           {"Members@odata.count", 0}};
}

struct Rule {
  enum Kind { String, Bool, Int, Array, NullableString } kind;
  std::vector<std::string> allowed;  ///< empty: any value of the kind
};

bool kind_matches(const json& v, Rule::Kind k) {
  switch (k) {
    case Rule::String:
      return v.is_string();
    case Rule::NullableString:
      return v.is_string() || v.is_null();
    case Rule::Bool:
      return v.is_boolean();
    case Rule::Int:
      return v.is_number_integer();
    case Rule::Array:
      return v.is_array();
  }
  return false;
}

}  // namespace

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string load_mockup(const std::vector<MockupFile>& files, const std::string& what, Mockup& out) {
  std::map<std::string, std::string> other_json;  // URI -> body, served only when a resource links it
  for (const MockupFile& f : files) {
    std::string_view rel = f.path;
    size_t slash = rel.rfind('/');
    std::string dir = slash == std::string_view::npos ? std::string() : "/" + std::string(rel.substr(0, slash));
    std::string name(slash == std::string_view::npos ? rel : rel.substr(slash + 1));
    std::string uri = "/redfish/v1" + dir;
    if (name == "index.json") {
      try {
        out.resources[uri] = json::parse(f.content);
      } catch (const std::exception& e) {
        return "mockup " + what + ": " + std::string(rel) + ": not valid JSON: " + e.what();
      }
    } else if (name == "index.xml") {
      out.files[uri] = {"application/xml", std::string(f.content)};
    } else if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) {
      other_json[uri + "/" + name] = std::string(f.content);
    }
  }
  if (!out.resources.count("/redfish/v1")) return "mockup " + what + " has no index.json (ServiceRoot)";
  std::string all;
  for (const auto& [uri, r] : out.resources) all += r.dump();
  for (auto& [uri, body] : other_json)
    if (all.find("\"" + uri + "\"") != std::string::npos) out.files[uri] = {"application/json", std::move(body)};
  adjust(out);
  return "";
}

std::string load_mockup(const std::string& dir, Mockup& out) {
  if (dir.empty()) return load_mockup(builtin_mockup(), std::string("(built-in) ") + kBuiltinMockupName, out);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "mockup directory '" + dir + "' does not exist";
  std::vector<std::string> paths, contents;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    paths.push_back(fs::relative(it->path(), dir).generic_string());
    contents.push_back(read_file(it->path()));
  }
  if (ec) return "cannot read mockup directory '" + dir + "': " + ec.message();
  std::vector<MockupFile> files;
  for (size_t i = 0; i < paths.size(); ++i) files.push_back({paths[i], contents[i]});
  return load_mockup(files, "directory '" + dir + "'", out);
}

Bmc::Bmc(std::shared_ptr<const Mockup> mockup, const BmcProfile& profile, const ServiceSettings& settings,
         std::string prefix)
    : mockup_(std::move(mockup)),
      profile_(profile),
      settings_(settings),
      prefix_(std::move(prefix)),
      token_rng_(std::random_device{}()) {
  apply_profile();
}

const json* Bmc::find(const std::string& uri) const {
  if (erased_.count(uri)) return nullptr;
  if (auto it = overlay_.find(uri); it != overlay_.end()) return &it->second;
  if (auto it = mockup_->resources.find(uri); it != mockup_->resources.end()) return &it->second;
  return nullptr;
}

json& Bmc::edit(const std::string& uri) {
  if (auto it = overlay_.find(uri); it != overlay_.end()) return it->second;
  auto base = mockup_->resources.find(uri);
  erased_.erase(uri);
  return overlay_[uri] = base != mockup_->resources.end() ? base->second : json::object();
}

void Bmc::put(const std::string& uri, json value) {
  erased_.erase(uri);
  overlay_[uri] = std::move(value);
}

void Bmc::erase(const std::string& uri) {
  overlay_.erase(uri);
  erased_.insert(uri);
}

std::vector<std::string> Bmc::uris_of_type(const std::string& type) const {
  std::vector<std::string> out;
  for (const auto& [uri, r] : mockup_->resources)
    if (const json* cur = find(uri); cur && type_of(*cur) == type) out.push_back(uri);
  for (const auto& [uri, r] : overlay_)
    if (!mockup_->resources.count(uri) && type_of(r) == type) out.push_back(uri);
  return out;
}

namespace {
void set_members(json& collection, json members) {
  collection["Members@odata.count"] = members.size();
  collection["Members"] = std::move(members);
}
}  // namespace

void Bmc::apply_profile() {
  for (const std::string& system : uris_of_type("ComputerSystem")) {
    if (profile_.power_state) edit(system)["PowerState"] = *profile_.power_state;
    if (profile_.memory_gib) edit(system)["MemorySummary"]["TotalSystemMemoryGiB"] = *profile_.memory_gib;
    // Each BMC's server has its own identity (import checks it), unless told otherwise.
    const json& sys = *find(system);
    if (profile_.serial) edit(system)["SerialNumber"] = *profile_.serial;
    else if (profile_.index > 0 && sys.contains("SerialNumber"))
      edit(system)["SerialNumber"] = sys.value("SerialNumber", "") + "-" + std::to_string(profile_.index);
    if (profile_.uuid) {
      edit(system)["UUID"] = *profile_.uuid;
    } else if (profile_.index > 0 && sys.value("UUID", "").size() == 36) {
      char tail[13];
      std::snprintf(tail, sizeof tail, "%012x", static_cast<unsigned>(profile_.index));
      edit(system)["UUID"] = sys.value("UUID", "").substr(0, 24) + tail;
    }
    std::string processors = link(*find(system), "Processors");
    if (processors.empty()) continue;
    if (profile_.processors_absent) {
      if (const json* coll = find(processors))
        for (const auto& m : coll->value("Members", json::array())) erase(m.value("@odata.id", ""));
      erase(processors);
      edit(system).erase("Processors");
      continue;
    }
    if (!profile_.gpus) continue;
    json members = json::array();
    for (const auto& m : find(processors)->value("Members", json::array())) {
      std::string uri = m.value("@odata.id", "");
      const json* p = find(uri);
      if (p && p->value("ProcessorType", "") == "GPU")
        erase(uri);
      else
        members.push_back(m);
    }
    std::string manufacturer = profile_.gpu_manufacturer;
    if (manufacturer.empty()) manufacturer = profile_.gpu_model.substr(0, profile_.gpu_model.find(' '));
    for (int i = 1; i <= *profile_.gpus; ++i) {
      std::string id = "GPU" + std::to_string(i);
      std::string uri = processors + "/" + id;
      json gpu = {{"@odata.type", "#Processor.v1_22_0.Processor"},
                  {"@odata.id", uri},
                  {"Id", id},
                  {"Name", id},
                  {"ProcessorType", "GPU"},
                  {"ProcessorArchitecture", "OEM"},
                  {"InstructionSet", "OEM"},
                  {"Manufacturer", manufacturer},
                  {"Model", profile_.gpu_model},
                  {"Socket", "GPU slot " + std::to_string(i)},
                  {"Status", {{"State", "Enabled"}, {"Health", "OK"}}}};
      if (profile_.gpu_memory_mib) gpu["MemorySummary"] = {{"TotalMemorySizeMiB", *profile_.gpu_memory_mib}};
      put(uri, std::move(gpu));
      members.push_back({{"@odata.id", uri}});
    }
    set_members(edit(processors), std::move(members));
  }
}

void Bmc::schedule(int delay_ms, std::function<void()> run) {
  if (delay_ms <= 0) {
    run();
    return;
  }
  events_.push_back({Clock::now() + std::chrono::milliseconds(delay_ms), std::move(run)});
}

void Bmc::advance(Clock::time_point now) {
  std::vector<Event> due;
  auto split = std::stable_partition(events_.begin(), events_.end(), [&](const Event& e) { return e.at > now; });
  std::move(split, events_.end(), std::back_inserter(due));
  events_.erase(split, events_.end());
  std::stable_sort(due.begin(), due.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
  for (auto& e : due) e.run();
}

std::string Bmc::etag_of(const json& resource) const {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : resource.dump()) h = (h ^ c) * 1099511628211ull;
  return "\"" + hex(h, 16) + "\"";
}

Response Bmc::json_response(int status, const json& body) {
  Response r;
  r.status = status;
  r.body = body.dump();
  return r;
}

Response Bmc::with_resource(int status, const std::string& uri) {
  json copy = *find(uri);
  std::string tag = etag_of(copy);
  copy["@odata.etag"] = tag;
  Response r = json_response(status, copy);
  r.headers.emplace_back("ETag", tag);
  return r;
}

Response Bmc::handle(const Request& in) {
  Request req = in;
  if (!prefix_.empty()) replace_all(req.body, "\"" + prefix_ + "/redfish/v1", "\"/redfish/v1");
  Response r;
  {
    std::lock_guard<std::mutex> lock(mu_);
    advance(Clock::now());
    r = dispatch(req);
  }
  r.headers.emplace_back("OData-Version", "4.0");
  if (!prefix_.empty()) {
    replace_all(r.body, "\"/redfish/v1", "\"" + prefix_ + "/redfish/v1");
    for (auto& [k, v] : r.headers)
      if (k == "Location" && v.rfind("/redfish/v1", 0) == 0) v = prefix_ + v;
  }
  if (profile_.malformed_json && r.content_type.rfind("application/json", 0) == 0 && !r.body.empty())
    r.body.resize(r.body.size() / 2);
  if (profile_.deep_json > 0 && r.content_type.rfind("application/json", 0) == 0) {
    const size_t n = static_cast<size_t>(profile_.deep_json);
    std::string deep;
    deep.reserve(n * 6 + r.body.size() + n);
    for (size_t i = 0; i < n; ++i) deep += "{\"x\":";
    deep += r.body.empty() ? "{}" : r.body;
    deep.append(n, '}');
    r.body = std::move(deep);
  }
  return r;
}

std::string Bmc::authenticate(const Request& r) {
  if (auto it = r.headers.find("x-auth-token"); it != r.headers.end()) {
    auto s = sessions_.find(it->second);
    if (s == sessions_.end()) return "unknown";
    int timeout = settings_.session_timeout_s.value_or(
        find("/redfish/v1/SessionService") ? find("/redfish/v1/SessionService")->value("SessionTimeout", 0) : 0);
    auto now = Clock::now();
    if (timeout > 0 && now - s->second.last_used > std::chrono::seconds(timeout)) {
      std::string uri = std::string(kSessions) + "/" + s->second.id;
      erase(uri);
      json& coll = edit(kSessions);
      json members = json::array();
      for (const auto& m : coll["Members"])
        if (m.value("@odata.id", "") != uri) members.push_back(m);
      set_members(coll, std::move(members));
      sessions_.erase(s);
      return "unknown";
    }
    s->second.last_used = now;
    return "";
  }
  if (auto it = r.headers.find("authorization"); it != r.headers.end()) {
    if (it->second.rfind("Basic ", 0) != 0) return "missing";
    std::string pair = base64_decode(it->second.substr(6));
    return pair == profile_.user + ":" + profile_.password ? "" : "wrong";
  }
  return "missing";
}

Response Bmc::dispatch(const Request& r) {
  std::string uri = r.path;
  while (uri.size() > 1 && uri.back() == '/') uri.pop_back();
  if (uri == "/redfish") {
    if (r.method != "GET") return method_not_allowed(uri, r.method, "GET, HEAD");
    return json_response(200, {{"v1", "/redfish/v1/"}});
  }
  if (uri != "/redfish/v1" && uri.rfind("/redfish/v1/", 0) != 0) return not_found(r.path);
  if (r.method == "POST" && uri == kSessions) return create_session(r);
  bool open = uri == "/redfish/v1" || uri == "/redfish/v1/odata" || uri == "/redfish/v1/$metadata";
  if (!open) {
    std::string why = authenticate(r);
    if (!why.empty()) {
      Response e = why == "wrong" ? error(401, {message("ResourceAtUriUnauthorized",
                                                        {r.path, "401 Unauthorized: wrong user name or password"})})
                                  : error(401, {message("NoValidSession", {})});
      e.headers.emplace_back("WWW-Authenticate", "Basic realm=\"Redfish\"");
      return e;
    }
  }
  if (r.method == "GET" || r.method == "HEAD") return get(r, uri);
  if (r.method == "PATCH") return patch(r, uri);
  if (r.method == "POST") return post(r, uri);
  if (r.method == "DELETE") return del(r, uri);
  if (!find(uri)) return not_found(uri);
  return method_not_allowed(uri, r.method, "GET, HEAD");
}

Response Bmc::get(const Request& r, const std::string& uri) {
  if (auto f = mockup_->files.find(uri); f != mockup_->files.end()) {
    Response out;
    out.content_type = f->second.first;
    out.body = f->second.second;
    return out;
  }
  if (uri.rfind(kTaskMonitors, 0) == 0) return task_monitor(uri.substr(std::string(kTaskMonitors).size()));
  const json* res = find(uri);
  if (!res) return not_found(uri);
  if (auto it = r.headers.find("if-none-match"); it != r.headers.end() && it->second == etag_of(*res)) {
    Response out;
    out.status = 304;
    out.headers.emplace_back("ETag", it->second);
    return out;
  }
  if (uri == "/redfish/v1" && settings_.expand != "off") {
    // What the DMTF mockups advertise, now that it is true (or, with
    // --expand ignored, claimed).
    json root = *find(uri);
    root["ProtocolFeaturesSupported"]["ExpandQuery"] = {
        {"ExpandAll", true}, {"Levels", true}, {"Links", true}, {"NoLinks", true}, {"MaxLevels", kMaxExpandLevels}};
    std::string tag = etag_of(root);
    root["@odata.etag"] = tag;
    Response out = json_response(200, root);
    out.headers.emplace_back("ETag", tag);
    return out;
  }
  if (settings_.expand == "on") {
    // $expand (DSP0266 7.3): "*" every reference, "." those outside Links,
    // "~" those inside Links; ($levels=N) follows the expanded resources' own
    // references N deep (default 1, at most MaxLevels).
    std::string expand;
    for (const auto& part : split(r.query, '&'))
      if (part.rfind("$expand=", 0) == 0) expand = part.substr(part.find('=') + 1);
    if (!expand.empty()) {
      static const std::regex form(R"(^([*.~])(\(\$levels=(\d{1,3})\))?$)");
      std::smatch m;
      if (!std::regex_match(expand, m, form))
        return error(400, {message("QueryParameterValueFormatError", {expand, "$expand"})});
      int levels = m[3].matched ? std::stoi(m[3]) : 1;
      if (levels < 1 || levels > kMaxExpandLevels)
        return error(400, {message("QueryParameterOutOfRange",
                                   {std::to_string(levels), "$levels", "1-" + std::to_string(kMaxExpandLevels)})});
      json body = *find(uri);
      expand_refs(body, expand[0], levels, false);
      std::string tag = etag_of(*find(uri));
      body["@odata.etag"] = tag;
      Response out = json_response(200, body);
      out.headers.emplace_back("ETag", tag);
      return out;
    }
  }
  return with_resource(200, uri);
}

void Bmc::expand_refs(json& node, char which, int levels, bool in_links) const {
  if (node.is_array()) {
    for (auto& v : node) expand_refs(v, which, levels, in_links);
    return;
  }
  if (!node.is_object()) return;
  // A reference: an object whose only property is @odata.id.
  if (node.size() == 1 && node.contains("@odata.id") && node["@odata.id"].is_string()) {
    const bool wanted = which == '*' || (which == '.' && !in_links) || (which == '~' && in_links);
    std::string target = node["@odata.id"].get<std::string>();
    while (target.size() > 1 && target.back() == '/') target.pop_back();
    const json* res = wanted ? find(target) : nullptr;
    if (!res) return;
    json copy = *res;
    copy["@odata.etag"] = etag_of(*res);
    if (levels > 1) expand_refs(copy, which, levels - 1, false);
    node = std::move(copy);
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    // Annotations (@Redfish.Settings, @odata.*) and Actions are not navigation properties.
    if (!it.key().empty() && it.key()[0] == '@') continue;
    if (it.key() == "Actions" || it.key() == "Oem") continue;
    expand_refs(it.value(), which, levels, in_links || it.key() == "Links");
  }
}

Response Bmc::patch(const Request& r, const std::string& uri) {
  const json* res = find(uri);
  if (!res) return not_found(uri);
  if (auto it = r.headers.find("if-match"); it != r.headers.end() && it->second != "*") {
    std::string want = it->second, have = etag_of(*res);
    if (want.rfind("W/", 0) == 0) want = want.substr(2);
    if (want != have) return error(412, {message("PreconditionFailed", {})});
  }
  json body;
  try {
    body = json::parse(r.body);
  } catch (const std::exception&) {
    return error(400, {message("MalformedJSON", {})});
  }
  if (!body.is_object()) return error(400, {message("MalformedJSON", {})});

  std::string type = type_of(*res);
  std::map<std::string, Rule> rules;
  std::set<std::string> containers;
  const json* current_bios = nullptr;  // for Bios/Settings: the attributes it may set
  if (type == "ComputerSystem") {
    const json& boot = res->value("Boot", json::object());
    std::vector<std::string> targets;
    for (const auto& t : boot.value("BootSourceOverrideTarget@Redfish.AllowableValues", json::array()))
      targets.push_back(t.get<std::string>());
    containers = {"Boot"};
    rules = {{"AssetTag", {Rule::String, {}}},
             {"HostName", {Rule::String, {}}},
             {"IndicatorLED", {Rule::String, {"Lit", "Blinking", "Off"}}},
             {"LocationIndicatorActive", {Rule::Bool, {}}},
             {"Boot/BootSourceOverrideTarget", {Rule::String, targets}},
             {"Boot/BootSourceOverrideEnabled", {Rule::String, {"Once", "Continuous", "Disabled"}}},
             {"Boot/BootSourceOverrideMode", {Rule::String, {"UEFI", "Legacy"}}},
             {"Boot/UefiTargetBootSourceOverride", {Rule::NullableString, {}}},
             {"Boot/HttpBootUri", {Rule::NullableString, {}}},
             {"Boot/BootNext", {Rule::NullableString, {}}},
             {"Boot/BootOrder", {Rule::Array, {}}}};
  } else if (type == "VirtualMedia") {
    rules = {{"Image", {Rule::NullableString, {}}},
             {"Inserted", {Rule::Bool, {}}},
             {"WriteProtected", {Rule::Bool, {}}},
             {"UserName", {Rule::String, {}}},
             {"Password", {Rule::String, {}}},
             {"TransferMethod", {Rule::String, {"Stream", "Upload"}}},
             {"TransferProtocolType",
              {Rule::String, {"CIFS", "FTP", "SFTP", "HTTP", "HTTPS", "NFS", "SCP", "TFTP", "OEM"}}}};
  } else if (type == "Bios" && res->contains("@Redfish.Settings")) {
    std::string settings = (*res)["@Redfish.Settings"]["SettingsObject"].value("@odata.id", "");
    return method_not_allowed(uri, "PATCH", "GET, HEAD",
                              "BIOS attributes change through the settings object " + settings +
                                  " (see @Redfish.Settings) and apply on the next reset.");
  } else if (type == "Bios") {
    std::string parent = uri.substr(0, uri.rfind('/'));
    current_bios = find(parent);
    if (current_bios && type_of(*current_bios) == "Bios") {
      containers = {"Attributes"};
      json attributes = current_bios->value("Attributes", json::object());
      for (const auto& [k, v] : attributes.items()) {
        Rule::Kind kind = v.is_boolean() ? Rule::Bool : v.is_number_integer() ? Rule::Int : Rule::String;
        rules["Attributes/" + k] = {kind, {}};
      }
    }
  } else if (type == "Manager") {
    rules = {{"DateTime", {Rule::String, {}}}, {"DateTimeLocalOffset", {Rule::String, {}}}};
  } else if (type == "SessionService") {
    rules = {{"SessionTimeout", {Rule::Int, {}}}};
  }

  std::vector<json> errors;
  std::vector<std::pair<json::json_pointer, json>> writes;
  std::function<void(const json&, const json&, const std::string&)> walk = [&](const json& patch_obj, const json& cur,
                                                                               const std::string& base) {
    for (const auto& [k, v] : patch_obj.items()) {
      if (!k.empty() && k[0] == '@') continue;
      std::string path = base.empty() ? k : base + "/" + k;
      const json* existing = cur.is_object() && cur.contains(k) ? &cur[k] : nullptr;
      if (containers.count(path)) {
        if (!v.is_object()) {
          errors.push_back(message("PropertyValueTypeError", {v.dump(), path}, path));
          continue;
        }
        walk(v, existing ? *existing : json::object(), path);
        continue;
      }
      auto rule = rules.find(path);
      if (rule == rules.end()) {
        bool known =
            existing != nullptr || (current_bios == nullptr && path.find('/') == std::string::npos && res->contains(k));
        errors.push_back(message(known ? "PropertyNotWritable" : "PropertyUnknown", {path}, path));
      } else if (!kind_matches(v, rule->second.kind)) {
        errors.push_back(message("PropertyValueTypeError", {v.dump(), path}, path));
      } else if (!rule->second.allowed.empty() && std::find(rule->second.allowed.begin(), rule->second.allowed.end(),
                                                            v.get<std::string>()) == rule->second.allowed.end()) {
        errors.push_back(message("PropertyValueNotInList", {v.get<std::string>(), path}, path));
      } else {
        writes.emplace_back(json::json_pointer("/" + path), v);
      }
    }
  };
  walk(body, *res, "");
  if (!errors.empty()) return error(400, std::move(errors));
  json& target = edit(uri);
  for (auto& [ptr, v] : writes) target[ptr] = std::move(v);
  return with_resource(200, uri);
}

Response Bmc::post(const Request& r, const std::string& uri) {
  auto at = uri.rfind("/Actions/");
  if (at == std::string::npos) {
    if (!find(uri)) return not_found(uri);
    return method_not_allowed(uri, "POST", "GET, HEAD");
  }
  std::string owner = uri.substr(0, at);
  std::string action = uri.substr(at + 9);
  const json* res = find(owner);
  if (!res || !res->contains("Actions") || !(*res)["Actions"].contains("#" + action) ||
      (*res)["Actions"]["#" + action].value("target", "") != uri)
    return not_found(uri);
  json body = json::object();
  if (!r.body.empty()) {
    try {
      body = json::parse(r.body);
    } catch (const std::exception&) {
      return error(400, {message("MalformedJSON", {})});
    }
    if (!body.is_object()) return error(400, {message("MalformedJSON", {})});
  }
  Response out;
  if (action == "ComputerSystem.Reset") {
    out = reset(owner, body);
  } else if (action == "VirtualMedia.InsertMedia") {
    out = insert_media(owner, body);
  } else if (action == "VirtualMedia.EjectMedia") {
    out = eject_media(owner);
  } else {
    return error(501, {message("ActionNotSupported", {action}, "",
                               "The emulator implements ComputerSystem.Reset, VirtualMedia.InsertMedia and "
                               "VirtualMedia.EjectMedia only.")});
  }
  return out;
}

Response Bmc::finish_action(const Request& r, const std::string& target, int delay_ms, std::function<void()> run) {
  if (!settings_.async_tasks) {
    if (run) run();
    Response out;
    out.status = 204;
    return out;
  }
  std::string id = std::to_string(1000 + next_id_++);
  std::string task = std::string(kTasks) + "/" + id;
  std::string monitor = kTaskMonitors + id;
  put(task, {{"@odata.type", "#Task.v1_7_4.Task"},
             {"@odata.id", task},
             {"Id", id},
             {"Name", "Task " + id},
             {"TaskState", "Running"},
             {"TaskStatus", "OK"},
             {"PercentComplete", 0},
             {"StartTime", now_iso()},
             {"TaskMonitor", monitor},
             {"Payload",
              {{"HttpOperation", "POST"}, {"TargetUri", target}, {"JsonBody", r.body}, {"HttpHeaders", json::array()}}},
             {"Messages", json::array()}});
  json& coll = edit(kTasks);
  json members = coll.value("Members", json::array());
  members.push_back({{"@odata.id", task}});
  set_members(coll, std::move(members));
  task_monitors_[id] = task;
  schedule(delay_ms, [this, task, run]() {
    if (run) run();
    json& t = edit(task);
    t["TaskState"] = "Completed";
    t["PercentComplete"] = 100;
    t["EndTime"] = now_iso();
    t["Messages"] = json::array({message("Success", {})});
  });
  Response out = with_resource(202, task);
  out.headers.emplace_back("Location", monitor);
  out.headers.emplace_back("Retry-After", "1");
  return out;
}

Response Bmc::task_monitor(const std::string& id) {
  auto it = task_monitors_.find(id);
  if (it == task_monitors_.end()) return not_found(kTaskMonitors + id);
  bool running = find(it->second)->value("TaskState", "") == "Running";
  Response out = with_resource(running ? 202 : 200, it->second);
  if (running) {
    out.headers.emplace_back("Location", kTaskMonitors + id);
    out.headers.emplace_back("Retry-After", "1");
  }
  return out;
}

void Bmc::power_transition(const std::string& system, const std::string& through, const std::string& final_state,
                           bool boots) {
  uint64_t gen = ++power_gen_[system];
  auto set_state = [this, &system](const std::string& state) {
    edit(system)["PowerState"] = state;
    if (settings_.on_power_state) settings_.on_power_state(profile_.index, system, state);
  };
  if (settings_.power_delay_ms > 0) set_state(through);
  schedule(settings_.power_delay_ms, [this, system, final_state, boots, gen]() {
    if (power_gen_[system] != gen) return;  // a later reset took over
    edit(system)["PowerState"] = final_state;
    if (settings_.on_power_state) settings_.on_power_state(profile_.index, system, final_state);
    if (boots) on_boot(system);
  });
}

Response Bmc::reset(const std::string& system, const json& body) {
  const std::string action = "ComputerSystem.Reset";
  for (const auto& [k, v] : body.items())
    if (k != "ResetType") return error(400, {message("ActionParameterNotSupported", {k, action}, k)});
  if (!body.contains("ResetType"))
    return error(400, {message("ActionParameterMissing", {action, "ResetType"}, "ResetType")});
  const json& type = body["ResetType"];
  if (!type.is_string() ||
      std::find(kResetTypes.begin(), kResetTypes.end(), type.get<std::string>()) == kResetTypes.end()) {
    std::string allowed;
    for (const auto& t : kResetTypes) allowed += (allowed.empty() ? "" : ", ") + t;
    return error(400, {message("ActionParameterNotSupported", {"ResetType", action}, "ResetType",
                               "ResetType " + type.dump() + " is not supported; use one of " + allowed + ".")});
  }
  std::string t = type.get<std::string>();
  std::string state = find(system)->value("PowerState", "On");
  bool on = state == "On" || state == "PoweringOn";
  if (t == "PushPowerButton") t = on ? "ForceOff" : "On";
  if (t == "On" || t == "ForceOn") {
    if (!on) power_transition(system, "PoweringOn", "On", true);
  } else if (t == "ForceOff" || t == "GracefulShutdown") {
    if (on) power_transition(system, "PoweringOff", "Off", false);
  } else if (t != "Nmi") {  // ForceRestart, GracefulRestart, PowerCycle: the host boots again
    power_transition(system, "PoweringOn", "On", true);
  }
  return finish_action(Request{"POST", system + "/Actions/" + action, "", {}, body.dump()},
                       system + "/Actions/" + action, settings_.power_delay_ms, {});
}

Response Bmc::insert_media(const std::string& media, const json& body) {
  const std::string action = "VirtualMedia.InsertMedia";
  static const std::set<std::string> known = {"Image",    "Inserted",       "WriteProtected",      "UserName",
                                              "Password", "TransferMethod", "TransferProtocolType"};
  for (const auto& [k, v] : body.items())
    if (!known.count(k)) return error(400, {message("ActionParameterNotSupported", {k, action}, k)});
  if (!body.contains("Image")) return error(400, {message("ActionParameterMissing", {action, "Image"}, "Image")});
  if (!body["Image"].is_string() || body["Image"].get<std::string>().empty())
    return error(400, {message("PropertyValueTypeError", {body["Image"].dump(), "Image"}, "Image")});
  for (const char* b : {"Inserted", "WriteProtected"})
    if (body.contains(b) && !body[b].is_boolean())
      return error(400, {message("PropertyValueTypeError", {body[b].dump(), b}, b)});
  if (find(media)->value("Inserted", false))
    return error(409, {message("ResourceInUse", {}, "Inserted",
                               "Media is already inserted in " + media + "; POST VirtualMedia.EjectMedia first.")});
  std::string image = body["Image"].get<std::string>();
  if (settings_.fetch_media) {  // the BMC reads the image before it says yes
    std::vector<std::string> failed = settings_.fetch_media(profile_.index, media, image);
    if (!failed.empty()) {
      const std::string id = failed.front();
      failed.erase(failed.begin());
      return error(400, {message(id, failed, "Image")});
    }
  }
  bool inserted = body.value("Inserted", true);
  bool write_protected = body.value("WriteProtected", true);
  std::string transfer = body.value("TransferMethod", "");
  return finish_action(Request{"POST", media, "", {}, body.dump()}, media + "/Actions/" + action,
                       settings_.power_delay_ms, [this, media, image, inserted, write_protected, transfer]() {
                         json& m = edit(media);
                         m["Image"] = image;
                         m["ImageName"] = image.substr(image.rfind('/') + 1);
                         m["Inserted"] = inserted;
                         m["WriteProtected"] = write_protected;
                         m["ConnectedVia"] = "URI";
                         if (!transfer.empty()) m["TransferMethod"] = transfer;
                       });
}

Response Bmc::eject_media(const std::string& media) {
  return finish_action(Request{"POST", media, "", {}, "{}"}, media + "/Actions/VirtualMedia.EjectMedia",
                       settings_.power_delay_ms, [this, media]() {
                         json& m = edit(media);
                         m["Image"] = nullptr;
                         m["ImageName"] = nullptr;
                         m["Inserted"] = false;
                         m["ConnectedVia"] = "NotConnected";
                       });
}

void Bmc::on_boot(const std::string& system) {
  json& s = edit(system);
  std::string bios = link(s, "Bios");
  if (const json* b = bios.empty() ? nullptr : find(bios); b && b->contains("@Redfish.Settings")) {
    std::string settings = (*b)["@Redfish.Settings"]["SettingsObject"].value("@odata.id", "");
    const json* pending = find(settings);
    if (pending && !pending->value("Attributes", json::object()).empty()) {
      json& current = edit(bios);
      current["Attributes"].update((*pending)["Attributes"]);
      current["@Redfish.Settings"]["Time"] = now_iso();
      edit(settings)["Attributes"] = json::object();
    }
  }
  json& boot = s["Boot"];
  std::string enabled = boot.value("BootSourceOverrideEnabled", "Disabled");
  std::string target = boot.value("BootSourceOverrideTarget", "None");
  std::string source = enabled != "Disabled" && target != "None" ? target : "BootOrder";
  json image = nullptr;
  if (source == "Cd" || source == "Usb") {
    std::string want = source == "Cd" ? "CD" : "USBStick";
    for (const std::string& m : uris_of_type("VirtualMedia")) {
      const json& vm = *find(m);
      auto types = vm.value("MediaTypes", json::array());
      if (vm.value("Inserted", false) && std::find(types.begin(), types.end(), want) != types.end()) {
        image = vm.value("Image", json(nullptr));
        break;
      }
    }
  } else if (source == "UefiHttp") {
    image = boot.value("HttpBootUri", json(nullptr));
  }
  if (enabled == "Once") boot["BootSourceOverrideEnabled"] = "Disabled";
  json& oem = s["Oem"]["PlinthEmulator"];
  int count = oem.is_object() ? oem.value("BootCount", 0) : 0;
  oem = {{"@odata.type", "#PlinthEmulator.v1_0_0.ComputerSystem"},
         {"BootCount", count + 1},
         {"LastBootSource", source},
         {"LastBootImage", image}};
  s["LastResetTime"] = now_iso();
}

Response Bmc::del(const Request&, const std::string& uri) {
  std::string sessions = kSessions;
  if (uri.rfind(sessions + "/", 0) == 0 && find(uri)) {
    std::string id = uri.substr(sessions.size() + 1);
    erase(uri);
    json& coll = edit(kSessions);
    json members = json::array();
    for (const auto& m : coll["Members"])
      if (m.value("@odata.id", "") != uri) members.push_back(m);
    set_members(coll, std::move(members));
    for (auto it = sessions_.begin(); it != sessions_.end();)
      it = it->second.id == id ? sessions_.erase(it) : std::next(it);
    Response out;
    out.status = 204;
    return out;
  }
  if (!find(uri)) return not_found(uri);
  return method_not_allowed(uri, "DELETE", "GET, HEAD");
}

Response Bmc::create_session(const Request& r) {
  json body;
  try {
    body = json::parse(r.body);
  } catch (const std::exception&) {
    return error(400, {message("MalformedJSON", {})});
  }
  for (const char* k : {"UserName", "Password"})
    if (!body.is_object() || !body.contains(k) || !body[k].is_string())
      return error(400, {message("PropertyMissing", {k}, k)});
  std::string user = body["UserName"], password = body["Password"];
  if (user != profile_.user || password != profile_.password) {
    Response e = error(
        401, {message("ResourceAtUriUnauthorized", {kSessions, "401 Unauthorized: wrong user name or password"})});
    e.headers.emplace_back("WWW-Authenticate", "Basic realm=\"Redfish\"");
    return e;
  }
  std::string id = hex(token_rng_(), 16);
  std::string token = hex(token_rng_(), 16) + hex(token_rng_(), 16);
  std::string uri = std::string(kSessions) + "/" + id;
  put(uri, {{"@odata.type", "#Session.v1_6_0.Session"},
            {"@odata.id", uri},
            {"Id", id},
            {"Name", "User Session"},
            {"Description", "Manager User Session"},
            {"UserName", user},
            {"CreatedTime", now_iso()}});
  json& coll = edit(kSessions);
  json members = coll.value("Members", json::array());
  members.push_back({{"@odata.id", uri}});
  set_members(coll, std::move(members));
  sessions_[token] = {id, user, Clock::now()};
  Response out = with_resource(201, uri);
  out.headers.emplace_back("X-Auth-Token", token);
  out.headers.emplace_back("Location", uri);
  return out;
}

}  // namespace plinth::redfish_emulator
