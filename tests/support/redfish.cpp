#include "tests/support/redfish.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace plinth::test {

std::vector<std::string> h100_emulator_args(int bmcs, const std::vector<std::string>& extra) {
  std::vector<std::string> a = {"--bmcs", std::to_string(bmcs), "--gpus", "8", "--memory-gib", "2048",
                                "--power-delay-ms", "20", "--power-state", "Off"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::map<int, int> resets(const std::string& log_path, size_t from) {
  std::map<int, int> out;
  std::ifstream in(log_path);
  std::string line;
  for (size_t i = 0; std::getline(in, line); ++i) {
    if (i < from) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j["bmc"].is_number() || j["method"] != "POST") continue;
    if (!j["path"].is_string() || j["path"].get<std::string>().find("ComputerSystem.Reset") == std::string::npos)
      continue;
    if (j["status"].is_number() && j["status"].get<int>() < 300) ++out[j["bmc"].get<int>()];
  }
  return out;
}

size_t changing_requests(const std::string& log_path) {
  size_t n = 0;
  std::ifstream in(log_path);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j["method"].is_string()) continue;
    const std::string method = j["method"], path = j["path"].is_string() ? j["path"].get<std::string>() : "";
    if (method == "PATCH" || (method == "POST" && path.find("SessionService") == std::string::npos)) ++n;
  }
  return n;
}

RunResult redfish_python(const std::string& body, const std::string& ca, const std::string& base,
                         const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/python3", "-c",
                                   "import json,ssl,sys,http.client,base64,urllib.parse\n"
                                   "ctx=ssl.create_default_context(cafile=sys.argv[1])\n"
                                   "auth='Basic '+base64.b64encode(b'admin:admin').decode()\n"
                                   "u=urllib.parse.urlparse(sys.argv[2])\n"
                                   "c=http.client.HTTPSConnection(u.hostname,u.port,context=ctx)\n" +
                                       body,
                                   ca, base};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

IsoContents read_iso(const std::string& path) {
  IsoContents out;
  auto info = run_program({"xorriso", "-indev", path, "-pvd_info"});
  if (info.exit_code != 0) return out;
  const std::string key = "Volume Id    : ";
  if (auto at = info.out.find(key); at != std::string::npos)
    out.volume_id = info.out.substr(at + key.size(), info.out.find('\n', at) - at - key.size());
  TempDir dir;
  auto x = run_program({"xorriso", "-osirrox", "on", "-indev", path, "-extract", "/", dir.path() + "/iso"});
  if (x.exit_code != 0) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/iso"))
    if (e.is_regular_file()) out.files[e.path().filename().string()] = slurp(e.path().string());
  return out;
}

}  // namespace plinth::test
