#pragma once
// What the fault tests share: a bare-metal blueprint, plinth started as a
// child that a test can kill, and what the redfish-emulator saw (resets per
// BMC from its request log, power states read over Redfish).
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/providers/baremetal/emulator.h"
#include "tests/support/run.h"

namespace plinth::test::fault {

inline const std::map<std::string, std::string> kEnv = {{"BMC_CREDENTIALS", "admin:admin"}};

/// One bare-metal pool of `count` H100 nodes whose BMCs are `endpoints` (a
/// YAML scalar or flow list), with `extra` lines (e.g. "    bios: {...}\n").
inline std::string pool(const std::string& name, int count, const std::string& endpoints, const std::string& ca,
                        const std::string& extra = "") {
  return "  - name: " + name + "\n"
         "    provider: baremetal\n"
         "    count: " + std::to_string(count) + "\n"
         "    role: inference\n"
         "    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 2048}\n"
         "    stack: train\n"
         "    boot: {method: pxe, image: \"http://pxe.example/ubuntu-24.04/\"}\n" +
         extra +
         "    bmc:\n"
         "      endpoints: " + endpoints + "\n"
         "      credentials: env:BMC_CREDENTIALS\n"
         "      ca_bundle: " + ca + "\n"
         "    mig: {profile: none}\n";
}

/// A blueprint named `name` with one stack and `pools` (pool() texts).
inline std::string blueprint(const std::string& name, const std::string& pools) {
  return "apiVersion: plinth/v1\n"
         "kind: Blueprint\n"
         "metadata: {name: " + name + ", owner: ml-platform}\n"
         "stacks:\n"
         "  train:\n"
         "    driver: \"550.54.15\"\n"
         "    cuda: \"12.4\"\n"
         "    cudnn: \"9.1.0\"\n"
         "    frameworks: {pytorch: \"2.3.1\"}\n"
         "    images: [\"nvcr.io/nvidia/pytorch@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58\"]\n"
         "node_pools:\n" + pools;
}

/// Starts plinth with `args` as a child (stdout and stderr to `out`, stdin
/// /dev/null, BMC_CREDENTIALS set, run from the repository root); returns its
/// pid. `in_child` runs in the child just before exec (limits, signals).
inline pid_t start_plinth(const std::vector<std::string>& args, const std::string& out,
                          const std::function<void()>& in_child = {}) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int n = ::open("/dev/null", O_RDONLY);
    dup2(o, 1);
    dup2(o, 2);
    dup2(n, 0);
    if (chdir(source_dir().c_str()) != 0) _exit(126);
    setenv("BMC_CREDENTIALS", "admin:admin", 1);
    if (in_child) in_child();
    std::vector<std::string> argv = {plinth_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  return pid;
}

/// Successful ComputerSystem.Reset requests per BMC in the request log at
/// `log`, from line `from` on.
inline std::map<int, int> resets(const std::string& log, size_t from = 0) {
  std::map<int, int> out;
  std::ifstream in(log);
  std::string line;
  for (size_t i = 0; std::getline(in, line); ++i) {
    if (i < from) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j["bmc"].is_number() || j["method"] != "POST") continue;
    if (j["path"].get<std::string>().find("ComputerSystem.Reset") == std::string::npos) continue;
    if (j["status"].is_number() && j["status"].get<int>() < 300) ++out[j["bmc"].get<int>()];
  }
  return out;
}

/// The PowerState of BMCs 0 .. n-1, read over Redfish with Debian's Python
/// (one kept-alive connection).
inline std::vector<std::string> power_states(const Emulator& emu, int n) {
  auto r = run_program({"/usr/bin/python3", "-c",
                        "import json,ssl,sys,http.client,base64,urllib.parse\n"
                        "ctx=ssl.create_default_context(cafile=sys.argv[1])\n"
                        "auth='Basic '+base64.b64encode(b'admin:admin').decode()\n"
                        "u=urllib.parse.urlparse(sys.argv[2])\n"
                        "c=http.client.HTTPSConnection(u.hostname,u.port,context=ctx)\n"
                        "for i in range(int(sys.argv[3])):\n"
                        "  c.request('GET','/bmc/%d/redfish/v1/Systems/437XR1138R2'%i,headers={'Authorization':auth})\n"
                        "  print(json.loads(c.getresponse().read())['PowerState'])\n",
                        emu.ca(), emu.base(), std::to_string(n)});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace plinth::test::fault
