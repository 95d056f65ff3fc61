// plugin_loader.h: dlopen()s a kernel plugin, checks its ABI version and descriptor (versions 2 to 4, or version 1
// through a shim; a quantization op at version 4 only), and calls it.
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
  std::string contract = "eager";  ///< the contract the descriptor claims (v1: eager; a quantization op's NULL: its
                                   ///< first contract)
  uint32_t abi_version = 0;
  int32_t memory = FUSEPROOF_MEMORY_HOST;
  int32_t vector_bytes = 0;

  bool cuda() const { return memory == FUSEPROOF_MEMORY_CUDA; }
  /// Whether op is a quantization op (reference/quant_spec.h): its subject runs through a QuantRunner.
  bool quant() const;
  int64_t vector_elems() const { return vector_bytes / 2; }  ///< for the 16-bit dtypes
};

/// "host" or "cuda".
const char* memory_name(int32_t memory);

/// A loaded plugin; dlclose()s on destruction. Move-only.
class Plugin {
 public:
  /// Loads `path`. `expected_op` (when not empty) must be the descriptor's op. Throws PluginError on a missing file, a
  /// file that is not a shared library, a missing descriptor symbol, an ABI version other than 1 to 4 or a struct
  /// size that is not that version's, an incomplete descriptor, an op not in the op spec (elementwise or
  /// quantization), a quantization op below version 4, a contract the op does not have, or an op other than
  /// `expected_op`.
  static Plugin load(const std::string& path, const std::string& expected_op);

  Plugin(Plugin&& other) noexcept;
  Plugin& operator=(Plugin&&) = delete;
  Plugin(const Plugin&) = delete;
  ~Plugin();

  const PluginInfo& info() const { return info_; }

  /// Calls the kernel with `call` (its error fields are set here); on a non-zero return `message` receives the
  /// plugin's one-line message. A version-1 plugin gets (out, x, bias, rows, width) when the call has v1's layout
  /// (x {width, 1}, bias {0, 1}); any other layout is refused by the shim with a message.
  int call(fuseproof_call_t call, std::string* message) const;
  /// A call of an op with inputs (x [rows, width], bias [width]) as contiguous buffers (bias_gelu_tanh's layout).
  int call_with_bias(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype,
                     void* stream, std::string* message) const;

 private:
  Plugin() = default;
  void* handle_ = nullptr;
  fuseproof_kernel_call_fn call_ = nullptr;   // version 2
  fuseproof_kernel_entry_fn entry_ = nullptr;  // version 1
  PluginInfo info_;
};

/// SHA-256 of a file as 64 lower-case hex digits; empty when unreadable.
std::string file_sha256(const std::string& path);

}  // namespace fuseproof::audit
