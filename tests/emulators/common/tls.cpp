#include "tests/emulators/common/tls.h"

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>

namespace plinth::emulator {
namespace {

std::string ssl_error(const std::string& what) {
  char buf[256] = "";
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  return what + ": " + buf;
}

bool add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

std::unique_ptr<X509, X509Free> new_cert(const std::string& cn, long serial, EVP_PKEY* key) {
  std::unique_ptr<X509, X509Free> cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 30L * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("Plinth tests"), -1, -1,
                             0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return cert;
}

bool is_ip(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace

std::string make_test_pki(const std::vector<std::string>& names, TestPki& out) {
  out.ca_key.reset(EVP_EC_gen("P-256"));
  out.server_key.reset(EVP_EC_gen("P-256"));
  if (!out.ca_key || !out.server_key) return ssl_error("cannot generate a key");

  out.ca_cert = new_cert("Plinth Redfish emulator test CA", 1, out.ca_key.get());
  X509* ca = out.ca_cert.get();
  X509_set_issuer_name(ca, X509_get_subject_name(ca));
  if (!add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE") ||
      !add_ext(ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_ext(ca, ca, NID_subject_key_identifier, "hash") ||
      !add_ext(ca, ca, NID_authority_key_identifier, "keyid:always"))
    return ssl_error("cannot add CA extensions");
  if (X509_sign(ca, out.ca_key.get(), EVP_sha256()) == 0) return ssl_error("cannot sign the CA certificate");

  std::string san = "IP:127.0.0.1,IP:::1,DNS:localhost";
  for (const auto& n : names)
    if (n != "127.0.0.1" && n != "::1" && n != "localhost" && !n.empty()) san += (is_ip(n) ? ",IP:" : ",DNS:") + n;
  out.server_cert = new_cert("127.0.0.1", 2, out.server_key.get());
  X509* srv = out.server_cert.get();
  X509_set_issuer_name(srv, X509_get_subject_name(ca));
  if (!add_ext(srv, ca, NID_basic_constraints, "critical,CA:FALSE") ||
      !add_ext(srv, ca, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
      !add_ext(srv, ca, NID_ext_key_usage, "serverAuth") || !add_ext(srv, ca, NID_subject_key_identifier, "hash") ||
      !add_ext(srv, ca, NID_authority_key_identifier, "keyid:always") || !add_ext(srv, ca, NID_subject_alt_name, san))
    return ssl_error("cannot add server certificate extensions");
  if (X509_sign(srv, out.ca_key.get(), EVP_sha256()) == 0) return ssl_error("cannot sign the server certificate");
  return "";
}

std::string write_pki(const TestPki& pki, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto write = [&](const std::string& name, auto&& writer) -> std::string {
    std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return "cannot write " + path;
    bool ok = writer(f);
    std::fclose(f);
    return ok ? "" : "cannot write " + path;
  };
  std::string err = write("ca.pem", [&](FILE* f) { return PEM_write_X509(f, pki.ca_cert.get()) == 1; });
  if (err.empty())
    err = write("server.pem", [&](FILE* f) {
      return PEM_write_X509(f, pki.server_cert.get()) == 1 && PEM_write_X509(f, pki.ca_cert.get()) == 1;
    });
  if (err.empty())
    err = write("server-key.pem", [&](FILE* f) {
      return PEM_write_PrivateKey(f, pki.server_key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
    });
  return err;
}

std::string make_client_cert(const TestPki& pki, const std::string& common_name,
                             const std::vector<std::string>& organizations, ClientCert& out) {
  if (!pki.ca_cert || !pki.ca_key) return "make_client_cert needs a CA (call make_test_pki first)";
  out.key.reset(EVP_EC_gen("P-256"));
  if (!out.key) return ssl_error("cannot generate a client key");
  out.cert.reset(X509_new());
  X509* c = out.cert.get();
  X509_set_version(c, 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  std::unique_ptr<BIGNUM, void (*)(BIGNUM*)> bn(BN_bin2bn(serial, sizeof serial, nullptr), BN_free);
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(c))) return ssl_error("cannot set a serial number");
  X509_gmtime_adj(X509_getm_notBefore(c), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c), 30L * 24 * 3600);
  X509_set_pubkey(c, out.key.get());
  X509_NAME* name = X509_get_subject_name(c);
  for (const auto& o : organizations)
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  X509* ca = pki.ca_cert.get();
  X509_set_issuer_name(c, X509_get_subject_name(ca));
  if (!add_ext(c, ca, NID_basic_constraints, "critical,CA:FALSE") ||
      !add_ext(c, ca, NID_key_usage, "critical,digitalSignature") || !add_ext(c, ca, NID_ext_key_usage, "clientAuth") ||
      !add_ext(c, ca, NID_authority_key_identifier, "keyid:always"))
    return ssl_error("cannot add client certificate extensions");
  if (X509_sign(c, pki.ca_key.get(), EVP_sha256()) == 0) return ssl_error("cannot sign the client certificate");
  return "";
}

namespace {
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
/// Runs `write` on a memory BIO and returns what it wrote ("" on failure).
template <typename Write>
std::string pem_text(Write&& write) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return "";
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : "";
}
}  // namespace

std::string to_pem(const X509* cert) {
  return pem_text([&](BIO* b) { return PEM_write_bio_X509(b, const_cast<X509*>(cert)); });
}

std::string to_pem(const EVP_PKEY* key) {
  return pem_text([&](BIO* b) { return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr); });
}

}  // namespace plinth::emulator
