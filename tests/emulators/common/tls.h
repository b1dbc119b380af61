#pragma once
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <vector>

namespace plinth::emulator {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

/// A throw-away test CA and a server certificate it signed.
struct TestPki {
  std::unique_ptr<X509, X509Free> ca_cert;
  std::unique_ptr<EVP_PKEY, PkeyFree> ca_key;
  std::unique_ptr<X509, X509Free> server_cert;
  std::unique_ptr<EVP_PKEY, PkeyFree> server_key;
};

/// Generates a P-256 CA (valid 30 days) and a server certificate for
/// 127.0.0.1, ::1, localhost and each of `names` (IP addresses or DNS names).
/// Returns "" or an error message.
std::string make_test_pki(const std::vector<std::string>& names, TestPki& out);

/// Writes ca.pem, server.pem and server-key.pem into `dir` (created if needed).
std::string write_pki(const TestPki& pki, const std::string& dir);

}  // namespace plinth::emulator
