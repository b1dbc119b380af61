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

/// A client certificate (for mTLS) that the test CA signed, and its key.
struct ClientCert {
  std::unique_ptr<X509, X509Free> cert;
  std::unique_ptr<EVP_PKEY, PkeyFree> key;
};

/// Issues a P-256 client certificate (extendedKeyUsage clientAuth, valid 30
/// days) with subject CN=`common_name` and one O= per entry of
/// `organizations`, in order: the way Kubernetes reads a user name and its
/// groups from a client certificate. Returns "" or an error message.
std::string make_client_cert(const TestPki& pki, const std::string& common_name,
                             const std::vector<std::string>& organizations, ClientCert& out);

/// The PEM text of a certificate, or of a private key (unencrypted PKCS#8);
/// "" when OpenSSL cannot encode it.
std::string to_pem(const X509* cert);
std::string to_pem(const EVP_PKEY* key);

}  // namespace plinth::emulator
