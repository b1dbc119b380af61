#include <catch2/catch.hpp>

#include <regex>

#include "engine/core/hash.h"
#include "engine/state/state.h"

namespace plinth::test::state_document {

using namespace plinth::state;

namespace {

Resource node(const std::string& pool, int index) {
  Resource r;
  r.type = "baremetal.node";
  r.name = pool;
  r.index = index;
  r.address = make_address(r.type, r.name, index);
  r.provider = "baremetal";
  r.attributes = Json{{"gpu", "H100"}, {"bios", {{"SriovEnable", true}}}, {"user_data_sha256", "ab12"}};
  r.computed = Json{{"bmc_serial", "SN-" + std::to_string(index)}};
  r.depends_on = {"net.vlan.ml-fabric"};
  r.source = {"blueprints/examples/cluster.yaml", 42, 5};
  return r;
}

StateDocument sample() {
  StateDocument doc = new_document();
  doc.serial = 7;
  doc.resources.push_back(node("train-a", 1));
  doc.resources.push_back(node("train-a", 0));
  Resource vlan;
  vlan.type = "net.vlan";
  vlan.name = "ml-fabric";
  vlan.address = "net.vlan.ml-fabric";
  vlan.provider = "plinth";
  vlan.attributes = Json{{"id", 120}, {"mtu", 9000}, {"ratio", 1.5}};
  doc.resources.push_back(vlan);
  return doc;
}

/// A document JSON with a correct checksum over everything else (what a
/// hand-crafted but well-sealed file looks like).
std::string sealed(Json j) {
  j.erase("checksum");
  j["checksum"] = "sha256:" + sha256_hex(j.dump());
  return j.dump(2);
}

const std::string kRecovery =
    " Plinth left the file untouched. Restore a good version with 'plinth state history' and "
    "'plinth state restore SERIAL' (or from your backup of s.json), then run again.";

}  // namespace

TEST_CASE("new documents get a random UUID v4 lineage and this plinth's version") {
  StateDocument a = new_document(), b = new_document();
  std::regex uuid4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  CHECK(std::regex_match(a.lineage, uuid4));
  CHECK(std::regex_match(b.lineage, uuid4));
  CHECK(a.lineage != b.lineage);
  CHECK(a.serial == 0);
  CHECK(a.format_version == 1);  // 2 (kFormatVersion) only once something is encrypted
  CHECK(a.plinth_version == PLINTH_VERSION);
  CHECK(a.resources.empty());
}

TEST_CASE("a state document survives a round trip through JSON, resources sorted by address") {
  StateDocument doc = sample();
  std::string text = to_json_text(doc);
  auto back = parse(text, "s.json");
  REQUIRE(back.ok());
  StateDocument expected = doc;
  std::sort(expected.resources.begin(), expected.resources.end(),
            [](const Resource& x, const Resource& y) { return x.address < y.address; });
  CHECK(*back == expected);
  CHECK(back->find("baremetal.node.train-a[1]")->computed["bmc_serial"] == "SN-1");
  CHECK(back->find("baremetal.node.train-a[1]")->source == SourceLoc{"blueprints/examples/cluster.yaml", 42, 5});
  CHECK(back->find("baremetal.node.train-a[9]") == nullptr);
  // Written the same way twice: the text is deterministic.
  CHECK(to_json_text(*back) == text);
}

TEST_CASE("deposed objects survive a round trip and a document without any has no deposed field") {
  StateDocument doc = sample();
  CHECK(to_json_text(doc).find("deposed") == std::string::npos);
  doc.deposed.push_back(node("train-a", 0));
  std::string text = to_json_text(doc);
  CHECK(text.find("\"deposed\": [") != std::string::npos);
  auto back = parse(text, "s.json");
  REQUIRE(back.ok());
  REQUIRE(back->deposed.size() == 1);
  CHECK(back->deposed[0] == doc.deposed[0]);
  CHECK(to_json_text(*back) == text);
}

TEST_CASE("outputs survive a round trip under the checksum and a document without any has no outputs field") {
  StateDocument doc = sample();
  CHECK(to_json_text(doc).find("outputs") == std::string::npos);
  doc.outputs = {{"bmcs", {{"description", ""}, {"sensitive", false}, {"value", {{"train-a", {{"train-a-0", "https://b0"}}}}}}}};
  std::string text = to_json_text(doc);
  auto back = parse(text, "s.json");
  REQUIRE(back.ok());
  CHECK(back->outputs == doc.outputs);
  CHECK(to_json_text(*back) == text);
  std::string edited = text;
  edited.replace(edited.find("https://b0"), 10, "https://b9");
  auto refused = parse(edited, "s.json");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("fails its checksum") != std::string::npos);
}

TEST_CASE("the JSON text puts the header fields first and a sha256 checksum") {
  std::string text = to_json_text(sample());
  Json j = Json::parse(text);
  CHECK(text.rfind("{\n  \"format_version\": 1,\n  \"lineage\": \"", 0) == 0);
  CHECK(j["serial"] == 7);
  std::regex sum("sha256:[0-9a-f]{64}");
  CHECK(std::regex_match(j["checksum"].get<std::string>(), sum));
  CHECK(j["resources"][0]["address"] == "baremetal.node.train-a[0]");
  CHECK(j["resources"][0]["source"] == "blueprints/examples/cluster.yaml:42:5");
  CHECK(j["resources"][2]["index"] == -1);
}

TEST_CASE("source positions without a column or without a line round-trip") {
  StateDocument doc = new_document();
  Resource a = node("a", 0), b = node("b", 0), c = node("c", 0);
  a.source = {"x.yaml", 3, 0};
  b.source = {};
  c.source = {"dir:with:colons/x.yaml", 1, 2};
  doc.resources = {a, b, c};
  auto back = parse(to_json_text(doc), "s.json");
  REQUIRE(back.ok());
  CHECK(back->resources[0].source == SourceLoc{"x.yaml", 3, 0});
  CHECK(back->resources[1].source == SourceLoc{});
  CHECK(back->resources[2].source == SourceLoc{"dir:with:colons/x.yaml", 1, 2});
}

TEST_CASE("invalid JSON is refused with its line and column") {
  auto r = parse("{\n  \"format_version\": 1,\n  \"lineage\": nope\n}\n", "s.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "state file s.json:3:15 is not valid JSON (value - invalid literal)." + kRecovery);
}

TEST_CASE("a number too large for a double is invalid JSON, not an abort") {
  // Found by fuzz_state (tests/fuzz/regressions/fuzz_state/number-overflow.json).
  auto r = parse("{\"format_version\": 1, \"serial\": 8e4328}", "s.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "state file s.json is not valid JSON (number overflow parsing '8e4328')." + kRecovery);
}

TEST_CASE("a truncated state file is refused as truncated") {
  std::string text = to_json_text(sample());
  // Cut inside a string and between tokens: both are truncation.
  size_t at = GENERATE(200, 61);
  std::string cut = text.substr(0, at);
  auto r = parse(cut, "s.json");
  REQUIRE_FALSE(r.ok());
  size_t lines = static_cast<size_t>(std::count(cut.begin(), cut.end(), '\n'));
  size_t col = cut.size() - cut.rfind('\n');
  CHECK(r.error().message == "state file s.json is truncated: the JSON ends at s.json:" + std::to_string(lines + 1) +
                                 ":" + std::to_string(col) + " before the document is complete." + kRecovery);
}

TEST_CASE("an empty state file is refused") {
  auto r = parse("", "s.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "state file s.json is empty (0 bytes)." + kRecovery);
}

TEST_CASE("a hand-edited state file fails its checksum") {
  std::string text = to_json_text(sample());
  std::string stored = Json::parse(text)["checksum"];
  size_t p = text.find("\"H100\"");
  REQUIRE(p != std::string::npos);
  text.replace(p, 6, "\"A100\"");
  Json edited = Json::parse(text);
  edited.erase("checksum");
  std::string computed = "sha256:" + sha256_hex(edited.dump());
  auto r = parse(text, "s.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "state file s.json fails its checksum (stored " + stored + ", computed " + computed +
                                 "): it was damaged or edited by hand." + kRecovery);
}

TEST_CASE("a state file from a newer plinth asks for an upgrade") {
  Json j = Json::parse(to_json_text(sample()));
  j["format_version"] = 3;
  auto r = parse(j.dump(), "s.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "state file s.json has format_version 3, but this plinth (" PLINTH_VERSION
                             ") reads format_version 2 and older; upgrade plinth to use this state. Plinth left "
                             "the file untouched.");
}

TEST_CASE("duplicate addresses are refused") {
  StateDocument doc = sample();
  doc.resources.push_back(node("train-a", 0));
  auto r = parse(to_json_text(doc), "s.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "state file s.json lists address 'baremetal.node.train-a[0]' twice (resources[0] and resources[1])." +
            kRecovery);
}

TEST_CASE("missing and mistyped fields are refused, naming the field") {
  Json j = Json::parse(to_json_text(sample()));
  SECTION("a resource without a type") {
    j["resources"][1].erase("type");
    auto r = parse(sealed(j), "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json has a malformed 'resources[1]': 'type' is missing." + kRecovery);
  }
  SECTION("no serial") {
    j.erase("serial");
    auto r = parse(sealed(j), "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json has no field 'serial'." + kRecovery);
  }
  SECTION("a negative serial") {
    j["serial"] = -3;
    auto r = parse(sealed(j), "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json has a field 'serial' that is not a non-negative integer." +
                                   kRecovery);
  }
  SECTION("attributes that are not an object") {
    j["resources"][0]["attributes"] = "gpu=H100";
    auto r = parse(sealed(j), "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json has a malformed 'resources[0]': 'attributes' is not an object." +
                                   kRecovery);
  }
  SECTION("a dependency that is not a string") {
    j["resources"][0]["depends_on"] = Json::array({"net.vlan.ml-fabric", 4});
    auto r = parse(sealed(j), "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "state file s.json has a malformed 'resources[0]': 'depends_on[1]' is not a string." + kRecovery);
  }
  SECTION("no checksum") {
    j.erase("checksum");
    auto r = parse(j.dump(), "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json has no field 'checksum'." + kRecovery);
  }
  SECTION("not an object at all") {
    auto r = parse("[1, 2]", "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json is not a JSON object." + kRecovery);
  }
}

TEST_CASE("resources_splits cuts between two elements of the top-level resources array only") {
  using detail::resources_splits;
  const std::string text = R"({"format_version":2,"lineage":"a,b","resources":[{"x":[1,2]},{"y":"]}, \"z\""},{"z":3}],"serial":1})";
  // Every comma between elements, when asked for pieces of a byte.
  const std::vector<size_t> at = resources_splits(text, 1);
  REQUIRE(at.size() == 2);
  CHECK(text[at[0]] == ',');
  CHECK(text[at[1]] == ',');
  // The pieces, closed, bracketed and opened, are documents whose union is the whole.
  Json first = Json::parse(text.substr(0, at[0]) + "]}");
  Json middle = Json::parse("[" + text.substr(at[0] + 1, at[1] - at[0] - 1) + "]");
  Json last = Json::parse("{\"resources\":[" + text.substr(at[1] + 1));
  CHECK(first["resources"].size() + middle.size() + last["resources"].size() == 3);
  CHECK(middle[0].contains("y"));
  CHECK(last["serial"] == 1);
  // Pieces of half the text: the comma nearest after the middle; of more than
  // the text, the last comma.
  REQUIRE(at[0] >= text.size() / 2);
  CHECK(resources_splits(text, text.size() / 2) == std::vector<size_t>{at[0]});
  CHECK(resources_splits(text, text.size() * 2) == std::vector<size_t>{at[1]});
  // One element, no resources, a repeated or escaped key, not an object: one piece.
  CHECK(resources_splits(R"({"resources":[{"x":1}],"serial":1})", 1).empty());
  CHECK(resources_splits(R"({"lineage":[1,2,3],"serial":1})", 1).empty());
  CHECK(resources_splits(R"({"resources":[1,2],"resources":[3,4]})", 1).empty());
  CHECK(resources_splits(R"({"resources":[1,2],"resour\u0063es":[3,4]})", 1).empty());
  CHECK(resources_splits(R"([{"resources":[1,2]}])", 1).empty());
  // Commas inside strings and nested values are not cuts.
  CHECK(resources_splits(R"({"resources":[{"a":"1,2,3","b":[1,2,3]}]})", 1).empty());
}

namespace {

/// A document of more than 4 MiB and 16,384 resources: parse reads it in
/// pieces on two threads and computes its checksum on another.
const StateDocument& large() {
  static const StateDocument doc = [] {
    StateDocument d = new_document();
    d.serial = 3;
    for (int i = 0; i < 17000; ++i) {
      Resource r = node("pool-" + std::to_string(i % 7), i);
      r.attributes["user_data"] = std::string(100, static_cast<char>('a' + i % 26)) + "\"\\\u00e9";
      d.resources.push_back(std::move(r));
    }
    d.deposed.push_back(node("old", 1));
    d.outputs = Json{{"endpoint", "https://10.0.0.1"}};
    return d;
  }();
  return doc;
}

}  // namespace

TEST_CASE("a state file of several MiB parses in pieces to the same document") {
  StateDocument doc = large();
  std::string text = to_json_text(doc);
  REQUIRE(doc.resources.size() > 16384);
  REQUIRE(text.size() > (4u << 20));
  REQUIRE(detail::resources_splits(text, 64u << 10).size() >= 2);
  auto r = parse(text, "s.json");
  REQUIRE(r.ok());
  std::sort(doc.resources.begin(), doc.resources.end(),
            [](const Resource& a, const Resource& b) { return a.address < b.address; });
  CHECK(r->resources == doc.resources);
  CHECK(r->deposed == doc.deposed);
  CHECK(r->outputs == doc.outputs);
  CHECK(to_json_text(*r) == text);
}

TEST_CASE("a state file between 256 KiB and 4 MiB parses in pieces on one thread to the same document") {
  StateDocument doc = new_document();
  for (int i = 0; i < 3000; ++i) doc.resources.push_back(node("pool-" + std::to_string(i % 5), i));
  std::sort(doc.resources.begin(), doc.resources.end(),
            [](const Resource& a, const Resource& b) { return a.address < b.address; });
  const std::string text = to_json_text(doc);
  REQUIRE(text.size() > (256u << 10));
  REQUIRE(text.size() < (4u << 20));
  REQUIRE(detail::resources_splits(text, 64u << 10).size() >= 3);
  auto r = parse(text, "s.json");
  REQUIRE(r.ok());
  CHECK(r->resources == doc.resources);
  CHECK(to_json_text(*r) == text);
  // A damaged middle piece is reported from the whole text, with its line and column.
  std::string damaged = text;
  const size_t p = damaged.find("\"H100\"", text.size() / 2);
  REQUIRE(p != std::string::npos);
  damaged[p] = 'x';
  auto bad = parse(damaged, "s.json");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("is not valid JSON (value - invalid literal)"));
}

TEST_CASE("a large state file damaged in any piece names the damage as a small one does") {
  std::string text = to_json_text(large());
  const std::vector<size_t> splits = detail::resources_splits(text, 64u << 10);
  REQUIRE(splits.size() >= 2);
  const size_t split = splits.back();
  SECTION("a hand edit after the cut fails the checksum") {
    size_t p = text.find("\"H100\"", split);
    REQUIRE(p != std::string::npos);
    text.replace(p, 6, "\"A100\"");
    auto r = parse(text, "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("fails its checksum"));
  }
  SECTION("invalid JSON in the first, middle or last piece names its line and column") {
    size_t p = GENERATE_COPY(splits[0] / 2, (splits[0] + splits[1]) / 2, split + (text.size() - split) / 2);
    p = text.find("\"H100\"", p);
    REQUIRE(p != std::string::npos);
    text[p] = 'x';  // "gpu": xH100"
    size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(p), '\n'));
    size_t col = p - text.rfind('\n', p);
    auto r = parse(text, "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json:" + std::to_string(line) + ":" + std::to_string(col) +
                                   " is not valid JSON (value - invalid literal)." + kRecovery);
  }
  SECTION("a trailing comma at the cut is invalid JSON, as in one piece") {
    // The cut is the first comma 64 KiB in or after: here the trailing one,
    // after which the last piece's array would be empty.
    std::string trailing =
        R"({"format_version":2,"resources":[{"a":1},{"b":")" + std::string(5u << 20, 'b') + R"("},]})";
    REQUIRE(detail::resources_splits(trailing, 64u << 10) == std::vector<size_t>{trailing.size() - 3});
    auto r = parse(trailing, "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json:1:" + std::to_string(trailing.size() - 1) +
                                   " is not valid JSON (value - unexpected ']'; expected '[', '{', or a literal)." +
                                   kRecovery);
  }
  SECTION("a malformed or repeated resource far in is named, the checksum being taken on another thread") {
    Json j = Json::parse(text);
    j["resources"][16500].erase("type");
    auto r = parse(sealed(j), "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json has a malformed 'resources[16500]': 'type' is missing." + kRecovery);
    j = Json::parse(text);
    j["resources"][16501] = j["resources"][12];
    r = parse(sealed(j), "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "state file s.json lists address '" + j["resources"][12]["address"].get<std::string>() +
                                   "' twice (resources[12] and resources[16501])." + kRecovery);
  }
  SECTION("truncated after the cut") {
    auto r = parse(text.substr(0, split + 1000), "s.json");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("is truncated: the JSON ends at s.json:"));
  }
}

}  // namespace plinth::test::state_document
