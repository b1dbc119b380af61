#include "tests/support/burst_cloud.h"

#include <catch2/catch.hpp>
#include <sstream>

namespace plinth::test {

std::string CloudUnderTest::address(int index, const std::string& pool) const {
  return make_address(resource_type(), pool, index);
}

std::vector<CloudInstance> CloudUnderTest::active() {
  std::vector<CloudInstance> out;
  for (auto& i : instances())
    if (i.active) out.push_back(std::move(i));
  return out;
}

size_t CloudUnderTest::log_mark() {
  std::istringstream in(emulator().log());
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

namespace {

/// The request-log lines of `emulator` after the first `mark`.
std::vector<Json> log_lines(const CloudEmulator& emulator, size_t mark = 0) {
  std::vector<Json> out;
  std::istringstream in(emulator.log());
  size_t n = 0;
  for (std::string line; std::getline(in, line); ++n)
    if (n >= mark) out.push_back(Json::parse(line));
  return out;
}

}  // namespace

std::map<std::string, int> CloudUnderTest::requests_since(size_t mark) {
  std::map<std::string, int> out;
  for (const auto& line : log_lines(emulator(), mark))
    if (auto name = call_of(line); !name.empty()) ++out[name];
  return out;
}

std::string CloudUnderTest::call(Call c) const { return calls().at(static_cast<size_t>(c)); }

int CloudUnderTest::requests(Call c) { return requests(call(c)); }

int CloudUnderTest::requests(const std::string& name) {
  auto all = requests_since(0);
  return all.count(name) ? all[name] : 0;
}

std::vector<int> CloudUnderTest::pool_sizes_since(size_t mark, int start) {
  std::vector<int> out;
  for (const auto& line : log_lines(emulator(), mark))
    if (int d = launched(line)) out.push_back(start += d);
  return out;
}

int CloudUnderTest::token_requests() { return token_call().empty() ? 0 : requests(token_call()); }

CloudWorkspace::CloudWorkspace(CloudUnderTest& cloud)
    : Workspace(&cloud.emulator(), cloud.parallelism(), cloud.env()) {}

}  // namespace plinth::test
