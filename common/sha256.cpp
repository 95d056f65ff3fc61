// sha256.cpp: OpenSSL EVP SHA-256.
#include "common/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace fuseproof {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
  bool done = false;
};

Sha256::Sha256() : impl_(new Impl) {
  impl_->ctx = EVP_MD_CTX_new();
  if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL could not initialise a SHA-256 context");
}

Sha256::~Sha256() { EVP_MD_CTX_free(impl_->ctx); }

void Sha256::update(const void* data, size_t bytes) {
  if (impl_->done) throw std::logic_error("sha256: update after hex()");
  EVP_DigestUpdate(impl_->ctx, data, bytes);
}

std::string Sha256::hex() {
  if (impl_->done) throw std::logic_error("sha256: hex() called twice");
  impl_->done = true;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, md, &len);
  static const char* kHex = "0123456789abcdef";
  std::string s(2 * len, '0');
  for (unsigned i = 0; i < len; ++i) {
    s[2 * i] = kHex[md[i] >> 4];
    s[2 * i + 1] = kHex[md[i] & 15];
  }
  return s;
}

std::string Sha256::of(const void* data, size_t bytes) {
  Sha256 h;
  h.update(data, bytes);
  return h.hex();
}

std::string Sha256::of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  Sha256 h;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    if (in.gcount() > 0) h.update(buf.data(), size_t(in.gcount()));
  }
  if (in.bad()) throw std::runtime_error("cannot read " + path + ": read error");
  return h.hex();
}

}  // namespace fuseproof
