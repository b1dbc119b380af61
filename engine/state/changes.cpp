// Change records (engine/state/changes.h).
#include "engine/state/changes.h"

#include "engine/core/hash.h"
#include "engine/core/json_reader.h"

namespace plinth::state {

std::string change_line(const StateChanges& c) {
  Json j{{"lineage", c.lineage}, {"from", c.from_serial}, {"serial", c.serial}};
  if (!c.put.empty()) j["put"] = c.put;
  if (!c.removed.empty()) j["removed"] = c.removed;
  if (!c.deposed_added.empty()) j["deposed_added"] = c.deposed_added;
  if (!c.deposed_dropped.empty()) j["deposed_dropped"] = c.deposed_dropped;
  std::string body = j.dump();
  return sha256_hex(body) + " " + body + "\n";
}

Result<StateChanges> parse_change_line(std::string_view line) {
  const size_t space = line.find(' ');
  if (space != 64) return Error::invalid("it does not start with a SHA-256");
  const std::string_view body = line.substr(space + 1);
  if (sha256_hex(body) != line.substr(0, space)) return Error::invalid("it fails its checksum");
  try {
    Json j = parse_json_text(body);
    StateChanges c;
    c.lineage = j.at("lineage").get<std::string>();
    c.from_serial = j.at("from").get<uint64_t>();
    c.serial = j.at("serial").get<uint64_t>();
    auto resources = [&](const char* key, std::vector<Resource>& out) {
      if (auto it = j.find(key); it != j.end())
        for (auto& r : *it) out.push_back(take_resource(r));
    };
    resources("put", c.put);
    resources("deposed_added", c.deposed_added);
    resources("deposed_dropped", c.deposed_dropped);
    if (auto it = j.find("removed"); it != j.end()) c.removed = it->get<std::vector<std::string>>();
    if (c.serial <= c.from_serial) return Error::invalid("its serial does not grow");
    return c;
  } catch (const std::exception& e) {
    return Error::invalid(std::string("its record is malformed: ") + e.what());
  }
}

Status check_continues(const std::string& source, const char* noun, const std::string& lineage, uint64_t serial,
                       const StateChanges& c) {
  if (lineage != c.lineage)
    return Error{Error::Kind::Conflict,
                 "state was changed by another run: " + source + " now has lineage " + lineage +
                     " but this run's state has lineage " + c.lineage + "; nothing was written. Check --state points " +
                     "at the right " + noun + ", then plan again",
                 0};
  if (c.from_serial != serial || c.serial <= serial)
    return Error{Error::Kind::Conflict,
                 "state was changed by another run: " + source + " is at serial " + std::to_string(serial) +
                     " but this run's changes apply to serial " + std::to_string(c.from_serial) +
                     "; nothing was written. Plan again against the current state",
                 0};
  return {};
}

Status ChangeChain::add(StateChanges c) {
  if (c.lineage != lineage_ || c.serial <= serial_) return {};  // folded already
  if (c.from_serial != serial_)
    return Error::invalid("continues serial " + std::to_string(c.from_serial) + ", but the state is at serial " +
                          std::to_string(serial_));
  serial_ = c.serial;
  records_.push_back(std::move(c));
  return {};
}

}  // namespace plinth::state
