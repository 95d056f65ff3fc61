// sha256.h: streaming SHA-256 over OpenSSL's EVP interface, hex digests.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace fuseproof {

/// Incremental SHA-256 (OpenSSL EVP). update() any number of times, then hex() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t bytes);
  /// Lower-case hex digest; finalises the context (a second call throws std::logic_error).
  std::string hex();

  /// One-shot digest of a buffer.
  static std::string of(const void* data, size_t bytes);
  /// Digest of a file's bytes; throws std::runtime_error (one line) when it cannot be read.
  static std::string of_file(const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fuseproof
