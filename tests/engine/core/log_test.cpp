// engine/core/log: level names and the redaction of URLs in trace lines.
#include "engine/core/log.h"

#include <catch2/catch.hpp>

namespace plinth::test::core_log {

TEST_CASE("log levels parse in any case, and anything else is refused", "[unit][log]") {
  CHECK(log::parse_level("TRACE") == log::Level::Trace);
  CHECK(log::parse_level("warning") == log::Level::Warn);
  CHECK(log::parse_level("debug") == log::Level::Debug);
  CHECK_FALSE(log::parse_level("verbose").has_value());
  CHECK_FALSE(log::parse_level("").has_value());
  log::set_level(log::Level::Info);
  CHECK(log::enabled(log::Level::Warn));
  CHECK(log::enabled(log::Level::Info));
  CHECK_FALSE(log::enabled(log::Level::Debug));
  log::set_level(log::Level::Warn);
}

TEST_CASE("redact_url hides credentials in the authority and secret-looking query values", "[unit][log]") {
  CHECK(log::redact_url("https://10.0.0.1/redfish/v1/Systems/1?$expand=.($levels=2)") ==
        "https://10.0.0.1/redfish/v1/Systems/1?$expand=.($levels=2)");
  CHECK(log::redact_url("https://admin:hunter2@bmc.example/redfish/v1/") == "https://REDACTED@bmc.example/redfish/v1/");
  CHECK(log::redact_url("https://s3.example/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F1&"
                        "X-Amz-Signature=abcdef&x=1") ==
        "https://s3.example/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&"
        "X-Amz-Signature=REDACTED&x=1");
  CHECK(log::redact_url("https://compute.example/v1/instances?pageToken=t0k&maxResults=500#frag") ==
        "https://compute.example/v1/instances?pageToken=REDACTED&maxResults=500#frag");
  CHECK(log::redact_url("https://login.example/token?client_secret=s3cr3t&code=c0de&api-version=2") ==
        "https://login.example/token?client_secret=REDACTED&code=REDACTED&api-version=2");
  // An @ in the path is not an authority.
  CHECK(log::redact_url("https://host/a@b?flag") == "https://host/a@b?flag");
}

}  // namespace plinth::test::core_log
