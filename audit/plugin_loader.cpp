// plugin_loader.cpp: dlopen, dlsym and descriptor checks.
#include "audit/plugin_loader.h"

#include "common/elf_check.h"
#include "common/sha256.h"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace fuseproof::audit {

namespace fs = std::filesystem;

const char* memory_name(int32_t memory) { return memory == FUSEPROOF_MEMORY_CUDA ? "cuda" : "host"; }

std::string file_sha256(const std::string& path) {
  try {
    return Sha256::of_file(path);
  } catch (const std::exception&) {
    return "";
  }
}

Plugin Plugin::load(const std::string& path, const std::string& expected_op) {
  std::error_code ec;
  const std::string shown = path;
  if (!fs::exists(path, ec)) throw PluginError("audit: plugin " + shown + " not found");
  if (!fs::is_regular_file(path, ec)) throw PluginError("audit: plugin " + shown + " is not a regular file");
  // Check the ELF headers first: dlopen's message for a text file is obscure, and a damaged ELF can crash ld.so.
  if (const std::string why = elf_file_problem(path); !why.empty())
    throw PluginError("audit: plugin " + shown + " is not a shared library: " + why);
  Plugin p;
  const std::string abs = fs::absolute(path, ec).string();
  p.handle_ = dlopen(abs.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p.handle_) {
    const char* e = dlerror();
    throw PluginError("audit: plugin " + shown + " cannot be loaded: " + (e ? e : "dlopen failed"));
  }
  dlerror();
  void* sym = dlsym(p.handle_, FUSEPROOF_KERNEL_DESCRIPTOR_SYMBOL);
  if (!sym)
    throw PluginError("audit: plugin " + shown + " does not export " FUSEPROOF_KERNEL_DESCRIPTOR_SYMBOL
                      " (see kernels/fuseproof_kernel_abi.h)");
  const auto get = reinterpret_cast<fuseproof_kernel_descriptor_fn>(sym);
  const fuseproof_kernel_descriptor_t* d = get();
  if (!d) throw PluginError("audit: plugin " + shown + " returned a null descriptor");
  if (d->abi_version != FUSEPROOF_KERNEL_ABI_VERSION)
    throw PluginError("audit: plugin " + shown + " speaks kernel ABI version " + std::to_string(d->abi_version) +
                      ", this audit speaks version " + std::to_string(FUSEPROOF_KERNEL_ABI_VERSION));
  if (d->struct_size != sizeof(fuseproof_kernel_descriptor_t))
    throw PluginError("audit: plugin " + shown + " descriptor size must be " +
                      std::to_string(sizeof(fuseproof_kernel_descriptor_t)) + ", got " + std::to_string(d->struct_size));
  if (!d->kernel_name || !*d->kernel_name || !d->op || !d->entry)
    throw PluginError("audit: plugin " + shown + " descriptor must name the kernel and op and give an entry");
  if (expected_op != d->op)
    throw PluginError("audit: plugin " + shown + " implements op " + d->op + ", not " + expected_op);
  if (d->memory != FUSEPROOF_MEMORY_HOST && d->memory != FUSEPROOF_MEMORY_CUDA)
    throw PluginError("audit: plugin " + shown + " memory must be host (0) or cuda (1), got " +
                      std::to_string(d->memory));
  const int32_t vb = d->vector_bytes;
  if (vb < 2 || vb > 256 || (vb & (vb - 1)) != 0)
    throw PluginError("audit: plugin " + shown + " vector_bytes must be a power of two in [2, 256], got " +
                      std::to_string(vb));
  p.entry_ = d->entry;
  p.info_.path = abs;
  p.info_.sha256 = file_sha256(abs);
  p.info_.kernel_name = d->kernel_name;
  p.info_.op = d->op;
  p.info_.abi_version = d->abi_version;
  p.info_.memory = d->memory;
  p.info_.vector_bytes = vb;
  return p;
}

Plugin::Plugin(Plugin&& o) noexcept : handle_(o.handle_), entry_(o.entry_), info_(std::move(o.info_)) {
  o.handle_ = nullptr;
  o.entry_ = nullptr;
}

Plugin::~Plugin() {
  // CUDA plugins register fat binaries whose teardown must run before the runtime's; never unload those early.
  if (handle_ && info_.memory == FUSEPROOF_MEMORY_HOST) dlclose(handle_);
}

int Plugin::call(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype, void* stream,
                 std::string* message) const {
  char error[512];
  error[0] = '\0';
  const int rc = entry_(out, x, bias, rows, width, dtype, stream, error, sizeof error);
  error[sizeof error - 1] = '\0';
  if (rc != 0 && message) *message = error;
  return rc;
}

}  // namespace fuseproof::audit
