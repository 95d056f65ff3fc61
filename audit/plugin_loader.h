// plugin_loader.h: dlopen()s a kernel plugin, checks its ABI version and descriptor, and calls its entry.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/fuseproof_kernel_abi.h"

namespace fuseproof::audit {

/// A refused plugin: the message is one line, no final period, naming the path and the reason.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What the descriptor said, plus where it came from.
struct PluginInfo {
  std::string path;         ///< absolute path
  std::string sha256;       ///< of the file, for the report
  std::string kernel_name;
  std::string op;
  uint32_t abi_version = 0;
  int32_t memory = FUSEPROOF_MEMORY_HOST;
  int32_t vector_bytes = 0;

  bool cuda() const { return memory == FUSEPROOF_MEMORY_CUDA; }
  int64_t vector_elems() const { return vector_bytes / 2; }  ///< for the 16-bit dtypes
};

/// "host" or "cuda".
const char* memory_name(int32_t memory);

/// A loaded plugin; dlclose()s on destruction. Move-only.
class Plugin {
 public:
  /// Loads `path`, requiring op == `expected_op`. Throws PluginError on a missing file, a file that is not a shared
  /// library, a missing descriptor symbol, a wrong ABI version or struct size, or an incomplete descriptor.
  static Plugin load(const std::string& path, const std::string& expected_op);

  Plugin(Plugin&& other) noexcept;
  Plugin& operator=(Plugin&&) = delete;
  Plugin(const Plugin&) = delete;
  ~Plugin();

  const PluginInfo& info() const { return info_; }

  /// Calls the entry; on a non-zero return `message` receives the plugin's one-line message.
  int call(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype, void* stream,
           std::string* message) const;

 private:
  Plugin() = default;
  void* handle_ = nullptr;
  fuseproof_kernel_entry_fn entry_ = nullptr;
  PluginInfo info_;
};

/// SHA-256 of a file as 64 lower-case hex digits; empty when unreadable.
std::string file_sha256(const std::string& path);

}  // namespace fuseproof::audit
