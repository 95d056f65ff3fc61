// sha256.cpp: OpenSSL EVP SHA-256 wrappers.
#include "sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace fuseproof::e2e {
namespace {

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

MdCtx new_sha256() {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("sha256: OpenSSL could not initialise a SHA-256 context");
  }
  return ctx;
}

std::string finish_hex(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx, digest, &len) != 1) throw std::runtime_error("sha256: OpenSSL digest failed");
  static const char* kHex = "0123456789abcdef";
  std::string hex(2 * len, '0');
  for (unsigned int i = 0; i < len; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  return hex;
}

}  // namespace

std::string sha256_hex(const void* data, size_t size) {
  MdCtx ctx = new_sha256();
  EVP_DigestUpdate(ctx.get(), data, size);
  return finish_hex(ctx.get());
}

std::string sha256_file_hex(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw std::runtime_error("sha256: cannot open '" + path + "'");
  MdCtx ctx = new_sha256();
  std::vector<unsigned char> buf(1 << 20);
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f.get())) > 0) EVP_DigestUpdate(ctx.get(), buf.data(), n);
  if (std::ferror(f.get())) throw std::runtime_error("sha256: read error on '" + path + "'");
  return finish_hex(ctx.get());
}

std::vector<std::string> frame_sha256(const VideoFrames& frames) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(frames.count));
  for (int f = 0; f < frames.count; ++f) out.push_back(sha256_hex(frames.frame(f), frames.frame_bytes()));
  return out;
}

}  // namespace fuseproof::e2e
