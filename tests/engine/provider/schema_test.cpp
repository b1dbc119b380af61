// Provider schemas, the registry the engine learns them from, option parsing
// and the docs generated from them.
#include <catch2/catch.hpp>

#include "engine/core/files.h"
#include "engine/provider/docs.h"
#include "engine/provider/options.h"
#include "engine/provider/registry.h"
#include "providers/baremetal/redfish_provider.h"

using namespace plinth;

namespace {

ProviderSchema sample() {
  ProviderSchema s;
  s.name = "acme";
  s.version = "1.2.3";
  s.resource_types = {{"acme.box", "", "A box.", {{"size", true, false, "Size.", ValueType::Int}}}};
  s.sections = {{"burst_pools", "acme.box", false, {{"image", ValueType::String, true, {}, "Image."}}}};
  s.options = {{"region", ValueType::String, "", {"ACME_REGION", "ACME_DEFAULT_REGION"}, "Region."},
               {"token", ValueType::String, "", {"ACME_TOKEN"}, "API token.", true},
               {"verify", ValueType::Bool, "true", {}, "Verify TLS."},
               {"tier", ValueType::String, "gold", {}, "Tier.", false, {"gold", "silver"}}};
  return s;
}

}  // namespace

TEST_CASE("registry: the built-in providers describe every resource type and blueprint section") {
  const auto types = resource_types();
  std::vector<std::string> names;
  for (const auto* t : types) names.push_back(t->type);
  CHECK(names == std::vector<std::string>{"access.audit_logging", "access.namespace", "access.role", "access.transport",
                                          "aws.instance", "azure.vm", "baremetal.node", "gcp.instance",
                                          "kubernetes.cluster", "kubernetes.namespace", "kubernetes.role", "net.fabric",
                                          "net.vlan", "plinth.monitoring", "plinth.stack", "storage.backup",
                                          "storage.tier"});
  for (const auto* t : types) {
    INFO(t->type);
    CHECK(find_resource_type(t->type, t->provider) == t);
    CHECK(parse_address(make_address(t->type, "x", 1)).has_value());
    CHECK_FALSE(t->description.empty());
    for (const auto& a : t->attributes) CHECK_FALSE(a.description.empty());
  }
  CHECK(find_resource_type("baremetal.nodes") == nullptr);
  const ResourceType* node = find_resource_type("baremetal.node");
  REQUIRE(node);
  CHECK(node->provider == "baremetal");
  CHECK(node->find("user_data_hash")->force_new);
  CHECK(node->find("bmc_endpoint")->force_new);
  CHECK_FALSE(node->find("bios")->force_new);
  CHECK(node->find("bmc_credentials")->sensitive);
  CHECK(find_resource_type("storage.tier")->find("encryption.at_rest")->force_new);
  CHECK(find_resource_type("azure.vm")->find("resource_group"));
  CHECK(find_resource_type("aws.instance")->find("resource_group") == nullptr);
  // Every logical section has a default provider; pools are served by name.
  for (const auto& sec : blueprint_sections()) {
    INFO(sec);
    if (sec == "burst_pools") CHECK(schema_registry().default_provider(sec).empty());
    else CHECK_FALSE(schema_registry().default_provider(sec).empty());
  }
  CHECK(schema_registry().default_provider("node_pools") == "baremetal");
  CHECK(schema_registry().providers_for("burst_pools") == std::vector<std::string>{"aws", "azure", "gcp"});
  CHECK(schema_registry().section("burst_pools", "aws")->resource_type == "aws.instance");
  CHECK(schema_registry().section("node_pools", "aws") == nullptr);
}

TEST_CASE("registry: refuses a second provider of the same name, a duplicate default and a malformed schema") {
  SchemaRegistry reg;
  REQUIRE(reg.add(sample()).ok());
  CHECK(reg.add(sample()).ok());  // identical: a no-op
  ProviderSchema other = sample();
  other.version = "2.0.0";
  other.source = "/opt/plinth-provider-acme";
  auto dup = reg.add(other);
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.error().message ==
        "provider 'acme' is defined twice: by built-in and by /opt/plinth-provider-acme; remove one of them");

  ProviderSchema d1 = sample(), d2 = sample();
  d1.name = "one";
  d1.resource_types[0].type = "one.box";
  d1.sections = {{"monitoring", "one.box", true, {}}};
  d2.name = "two";
  d2.resource_types[0].type = "two.box";
  d2.sections = {{"monitoring", "two.box", true, {}}};
  REQUIRE(reg.add(d1).ok());
  auto twice = reg.add(d2);
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().message.find("wants to serve section 'monitoring' by default, which provider 'one' already does") !=
        std::string::npos);

  ProviderSchema bad = sample();
  bad.resource_types[0].type = "box";
  CHECK(check_schema(bad).error().message == "provider 'acme': resource type 'box' is not PREFIX.KIND (two lower-case words)");
  bad = sample();
  bad.sections[0].resource_type = "acme.other";
  CHECK(check_schema(bad).error().message ==
        "provider 'acme': section 'burst_pools' makes resource type 'acme.other', which the provider does not declare");
  bad = sample();
  bad.sections[0].section = "burst_pool";
  CHECK(check_schema(bad).error().message == "provider 'acme': serves unknown blueprint section 'burst_pool'");
  bad = sample();
  bad.options.push_back({"rate", ValueType::Int});
  CHECK(check_schema(bad).error().message == "provider 'acme': option 'rate' is declared twice (or is a common option)");
}

TEST_CASE("options: defaults, vendor variables, blueprint, PLINTH_<NAME>_<KEY> and flags, in that order") {
  const ProviderSchema s = sample();
  auto c = parse_provider_config(s, {"ACME_DEFAULT_REGION=eu-1", "UNRELATED=1"}, {}, {});
  REQUIRE(c.ok());
  CHECK(c->str("region") == "eu-1");
  CHECK(c->origins.at("region") == "environment ACME_DEFAULT_REGION");
  CHECK(c->flag("verify"));
  CHECK(c->origins.at("verify") == "default");
  CHECK_FALSE(c->is_set("verify"));
  CHECK(c->integer("retry_attempts") == 5);
  CHECK(c->duration("create_deadline") == std::chrono::minutes(30));

  // The first vendor variable wins over the second.
  c = parse_provider_config(s, {"ACME_REGION=us-1", "ACME_DEFAULT_REGION=eu-1"}, {}, {});
  CHECK(c->str("region") == "us-1");
  // Blueprint beats the vendor variable, PLINTH_ACME_* beats the blueprint, a flag beats all.
  std::vector<OptionInput> bp = {{"region", "bp-1", "blueprint bp.yaml:3:5"}};
  c = parse_provider_config(s, {"ACME_REGION=us-1"}, bp, {});
  CHECK(c->str("region") == "bp-1");
  c = parse_provider_config(s, {"ACME_REGION=us-1", "PLINTH_ACME_REGION=env-1"}, bp, {});
  CHECK(c->str("region") == "env-1");
  c = parse_provider_config(s, {"PLINTH_ACME_REGION=env-1"}, bp,
                            {"acme.region=flag-1", "other.region=x", "acme.create_deadline=2s"});
  CHECK(c->str("region") == "flag-1");
  CHECK(c->origins.at("region") == "--provider-option");
  CHECK(c->duration("create_deadline") == std::chrono::seconds(2));
}

TEST_CASE("options: a typo gets a did-you-mean, a wrong type names the option and the type") {
  const ProviderSchema s = sample();
  auto typo = parse_provider_config(s, {}, {}, {"acme.regoin=x"});
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message == "provider acme has no option 'regoin' (--provider-option acme.regoin); did you mean 'region'?");
  auto env_typo = parse_provider_config(s, {"PLINTH_ACME_VERIFYY=1"}, {}, {});
  REQUIRE_FALSE(env_typo.ok());
  CHECK(env_typo.error().message ==
        "provider acme has no option 'verifyy' (environment variable PLINTH_ACME_VERIFYY); did you mean 'verify'?");
  auto wrong = parse_provider_config(s, {}, {}, {"acme.verify=maybe"});
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().message == "provider acme option verify = 'maybe' (--provider-option) is not a bool (true or false)");
  auto number = parse_provider_config(s, {"PLINTH_ACME_RETRY_ATTEMPTS=three"}, {}, {});
  CHECK(number.error().message ==
        "provider acme option retry_attempts = 'three' (environment PLINTH_ACME_RETRY_ATTEMPTS) is not an integer (a whole "
        "number >= 0)");
  auto dur = parse_provider_config(s, {}, {}, {"acme.read_deadline=5"});
  CHECK(dur.error().message ==
        "provider acme option read_deadline = '5' (--provider-option) is not a duration (500ms, 30s, 2m, 1h or 1m30s)");
  auto allowed = parse_provider_config(s, {}, {}, {"acme.tier=gld"});
  CHECK(allowed.error().message ==
        "provider acme option tier = 'gld' (--provider-option) is not one of gold, silver; did you mean 'gold'?");
  auto malformed = parse_provider_config(s, {}, {}, {"acme-region=x"});
  CHECK(malformed.error().message ==
        "--provider-option 'acme-region=x' is not NAME.KEY=VALUE (for example PROVIDER.timeout_ms=5000; plinth providers lists every option)");
  auto secret = parse_provider_config(s, {}, {{"token", "abc", "blueprint bp.yaml:7:9"}}, {});
  REQUIRE_FALSE(secret.ok());
  CHECK(secret.error().message ==
        "provider acme option token (blueprint bp.yaml:7:9) is a secret and must not be written in a blueprint; set "
        "ACME_TOKEN or PLINTH_ACME_TOKEN instead");
  auto ok = parse_provider_config(s, {"ACME_TOKEN=hunter2"}, {}, {});
  CHECK(redacted_options(s, *ok)["token"] == "(secret)");
}

TEST_CASE("options: the baremetal provider keeps the option names users already set") {
  auto c = parse_provider_config(baremetal::schema(),
                                 {"PLINTH_BAREMETAL_CA_BUNDLE=/etc/ca.pem", "PLINTH_BAREMETAL_INSECURE=1"}, {},
                                 {"baremetal.timeout_ms=2000", "baremetal.retry_attempts=2"});
  REQUIRE(c.ok());
  auto o = baremetal::options_from(*c);
  CHECK(o.ca_bundle == "/etc/ca.pem");
  CHECK(o.insecure);
  CHECK(o.timeout_ms == 2000);
  CHECK(o.parallelism == 16);
  CHECK(c->integer("retry_attempts") == 2);
  auto typo = parse_provider_config(baremetal::schema(), {}, {}, {"baremetal.ca_bundel=/x"});
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message ==
        "provider baremetal has no option 'ca_bundel' (--provider-option baremetal.ca_bundel); did you mean 'ca_bundle'? "
        "(docs/providers/baremetal.md)");
}

TEST_CASE("schemas: JSON round trip (the plugin handshake's form)") {
  ProviderSchema s = sample();
  Json j = s;
  ProviderSchema back = j.get<ProviderSchema>();
  for (auto& t : s.resource_types) t.provider = s.name;
  CHECK(back == s);
  CHECK(j["options"][0]["env"] == Json{"ACME_REGION", "ACME_DEFAULT_REGION"});
  CHECK(j["resource_types"][0]["attributes"][0]["type"] == "integer");
  Json bad = j;
  bad["resource_types"][0]["attributes"][0]["type"] = "integr";
  CHECK_THROWS(bad.get<ProviderSchema>());
}

TEST_CASE("schemas: fields take attributes from a block only the provider reads, and must name its own attributes") {
  ProviderSchema s = sample();
  s.sections[0].fields = {{"lease.hosts", "size", nullptr, nullptr, true}, {"lease", "size", 7, nullptr, false}};
  CHECK(check_schema(s).ok());
  const Json j = s;
  CHECK(j["sections"][0]["fields"][0] == Json{{"from", "lease.hosts"}, {"to", "size"}, {"per_member", true}});
  CHECK(j["sections"][0]["fields"][1] == Json{{"from", "lease"}, {"to", "size"}, {"value", 7}});
  CHECK(j.get<ProviderSchema>().sections[0].fields == s.sections[0].fields);
  s.sections[0].fields = {{"lease.hosts", "hosts", nullptr, nullptr, true}};
  CHECK(check_schema(s).error().message ==
        "provider 'acme': section 'burst_pools' fills attribute 'hosts' from 'lease.hosts', but acme.box does not "
        "declare it");
  s.sections[0].fields = {{"lease.", "size", nullptr, nullptr, false}};
  CHECK_FALSE(check_schema(s).ok());
  // The bare-metal provider takes its node pools' bmc: block this way.
  const SectionSpec& pools = baremetal::schema().sections.front();
  CHECK(pools.fields.size() == 4);
  CHECK(pools.fields.front().to == "bmc_endpoint");
  CHECK(pools.fields.front().per_member);
}

TEST_CASE("docs/resources.md and docs/providers/*.md match the schemas they are generated from") {
  std::vector<const ProviderSchema*> builtin;
  for (const ProviderSchema* s : schema_registry().providers())
    if (s->source == "built-in") builtin.push_back(s);
  const std::string hint = "; run: build/engine/plinth providers --write-docs docs";
  auto page = read_file("docs/resources.md");
  REQUIRE(page.ok());
  auto block = generated_block(*page, "resource types");
  REQUIRE(block.ok());
  INFO("docs/resources.md drifted from the schemas" << hint);
  CHECK(*block == resource_types_markdown(builtin));
  for (const ProviderSchema* s : builtin) {
    auto p = read_file("docs/providers/" + s->name + ".md");
    if (!p) continue;
    auto b = generated_block(*p, "options");
    INFO("docs/providers/" << s->name << ".md" << hint);
    REQUIRE(b.ok());
    CHECK(*b == options_markdown(*s));
    if (s->instance_types.empty()) continue;
    auto t = generated_block(*p, "instance types");
    REQUIRE(t.ok());
    CHECK(*t == instance_types_markdown(*s));
  }
}

TEST_CASE("docs/plinth-v1.schema.json takes the burst-pool settings the providers declare, and docs/blueprint.md names "
          "each of them") {
  std::vector<const ProviderSchema*> builtin;
  for (const ProviderSchema* s : schema_registry().providers())
    if (s->source == "built-in") builtin.push_back(s);
  auto text = read_file("docs/plinth-v1.schema.json");
  REQUIRE(text.ok());
  const Json schema = Json::parse(*text, nullptr, false);
  REQUIRE_FALSE(schema.is_discarded());
  INFO("docs/plinth-v1.schema.json drifted from the schemas; run: build/engine/plinth providers --write-docs docs");
  CHECK(schema["$defs"]["burst_pool_settings"] == settings_json_schema(builtin, "burst_pools"));
  const Json& props = schema["$defs"]["burst_pool_settings"]["properties"];
  for (const char* gcp : {"machine_types", "termination_action", "network", "boot_disk", "subnetwork",
                          "service_account", "labels", "zones"})
    CHECK(props.contains(gcp));

  auto page = read_file("docs/blueprint.md");
  REQUIRE(page.ok());
  const std::string burst = page->substr(page->find("## burst_pools"), page->find("## access") - page->find("## burst_pools"));
  for (const ProviderSchema* s : builtin)
    for (const auto& sec : s->sections) {
      if (sec.section != "burst_pools") continue;
      for (const auto& setting : sec.settings) {
        INFO("docs/blueprint.md, burst_pools, does not name " << s->name << "'s setting " << setting.name);
        CHECK(burst.find("`" + setting.name + "`") != std::string::npos);
      }
    }
}
