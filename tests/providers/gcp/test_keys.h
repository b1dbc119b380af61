#pragma once
// Keys and key files shared by the GCP auth tests. RSA-2048 generation takes
// a tenth of a second or more, so each key is made once per process, when first used.
#include <nlohmann/json.hpp>
#include <string>

#include "providers/gcp/jwt.h"

namespace plinth::test {

/// A service-account key generated once per process (index 0 or 1: two different keys).
inline const gcp::RsaSigner& test_signer(int index = 0) {
  if (index == 0) {
    static const gcp::RsaSigner key = std::move(gcp::RsaSigner::generate(2048)).value();
    return key;
  }
  static const gcp::RsaSigner other = std::move(gcp::RsaSigner::generate(2048)).value();
  return other;
}

/// A key file's JSON in the layout Google writes, for test_signer(index).
inline nlohmann::json test_key_json(int index = 0,
                                    const std::string& token_uri = "https://oauth2.googleapis.com/token") {
  return {{"type", "service_account"},
          {"project_id", "plinth-test"},
          {"private_key_id", "0123456789abcdef0123456789abcdef0123456" + std::to_string(index)},
          {"private_key", test_signer(index).private_key_pem()},
          {"client_email", "plinth@plinth-test.iam.gserviceaccount.com"},
          {"client_id", "100000000000000000001"},
          {"auth_uri", "https://accounts.google.com/o/oauth2/auth"},
          {"token_uri", token_uri},
          {"auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"},
          {"client_x509_cert_url",
           "https://www.googleapis.com/robot/v1/metadata/x509/plinth%40plinth-test.iam.gserviceaccount.com"}};
}

}  // namespace plinth::test
