// plugin_loader.cpp: dlopen, dlsym and descriptor checks; the version-1 shim.
#include "audit/plugin_loader.h"

#include "common/elf_check.h"
#include "common/sha256.h"
#include "reference/op_spec.h"
#include "reference/quant_spec.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fuseproof::audit {

namespace fs = std::filesystem;

bool PluginInfo::quant() const { return ref::find_quant_op(op) != nullptr; }

const char* memory_name(int32_t memory) { return memory == FUSEPROOF_MEMORY_CUDA ? "cuda" : "host"; }

std::string file_sha256(const std::string& path) {
  try {
    return Sha256::of_file(path);
  } catch (const std::exception&) {
    return "";
  }
}

namespace {

struct Header {
  uint32_t abi_version;
  uint32_t struct_size;
};

/// The checks every version shares, on the fields every version has.
void check_common(const std::string& shown, const char* kernel_name, const char* op, bool has_call, int32_t memory,
                  int32_t vb) {
  if (!kernel_name || !*kernel_name || !op || !has_call)
    throw PluginError("audit: plugin " + shown + " descriptor must name the kernel and op and give the call");
  if (!ref::find_op(op) && !ref::find_quant_op(op))
    throw PluginError("audit: plugin " + shown + " implements op " + op + ", which is not in the op spec (" +
                      ref::op_names() + ", " + ref::quant_op_names() + ")");
  if (memory != FUSEPROOF_MEMORY_HOST && memory != FUSEPROOF_MEMORY_CUDA)
    throw PluginError("audit: plugin " + shown + " memory must be host (0) or cuda (1), got " + std::to_string(memory));
  if (vb < 2 || vb > 256 || (vb & (vb - 1)) != 0)
    throw PluginError("audit: plugin " + shown + " vector_bytes must be a power of two in [2, 256], got " +
                      std::to_string(vb));
}

}  // namespace

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
  const void* raw = reinterpret_cast<fuseproof_kernel_descriptor_fn>(sym)();
  if (!raw) throw PluginError("audit: plugin " + shown + " returned a null descriptor");
  Header h;
  std::memcpy(&h, raw, sizeof h);
  p.info_.path = abs;
  p.info_.abi_version = h.abi_version;
  if (h.abi_version == FUSEPROOF_KERNEL_ABI_VERSION || h.abi_version == FUSEPROOF_KERNEL_ABI_VERSION_3 ||
      h.abi_version == FUSEPROOF_KERNEL_ABI_VERSION_2) {
    if (h.struct_size != sizeof(fuseproof_kernel_descriptor_t))
      throw PluginError("audit: plugin " + shown + " descriptor size must be " +
                        std::to_string(sizeof(fuseproof_kernel_descriptor_t)) + " for ABI version " +
                        std::to_string(h.abi_version) + ", got " + std::to_string(h.struct_size));
    const auto* d = static_cast<const fuseproof_kernel_descriptor_t*>(raw);
    check_common(shown, d->kernel_name, d->op, d->call != nullptr, d->memory, d->vector_bytes);
    p.call_ = d->call;
    p.info_.kernel_name = d->kernel_name;
    p.info_.op = d->op;
    p.info_.memory = d->memory;
    p.info_.vector_bytes = d->vector_bytes;
    if (d->contract && *d->contract) p.info_.contract = d->contract;
    else if (const ref::QuantOpSpec* q = ref::find_quant_op(d->op))
      p.info_.contract = ref::quant_contract_name(q->contracts.front().contract);
  } else if (h.abi_version == FUSEPROOF_KERNEL_ABI_VERSION_1) {
    if (h.struct_size != sizeof(fuseproof_kernel_descriptor_v1_t))
      throw PluginError("audit: plugin " + shown + " descriptor size must be " +
                        std::to_string(sizeof(fuseproof_kernel_descriptor_v1_t)) + " for ABI version 1, got " +
                        std::to_string(h.struct_size));
    const auto* d = static_cast<const fuseproof_kernel_descriptor_v1_t*>(raw);
    check_common(shown, d->kernel_name, d->op, d->entry != nullptr, d->memory, d->vector_bytes);
    if (std::string(d->op) != ref::seed_op().name)
      throw PluginError("audit: plugin " + shown + " speaks ABI version 1, which has op " + ref::seed_op().name +
                        " only, not " + d->op);
    p.entry_ = d->entry;
    p.info_.kernel_name = d->kernel_name;
    p.info_.op = d->op;
    p.info_.memory = d->memory;
    p.info_.vector_bytes = d->vector_bytes;
  } else {
    throw PluginError("audit: plugin " + shown + " speaks kernel ABI version " + std::to_string(h.abi_version) +
                      ", this audit speaks versions 1 to 4");
  }
  if (const ref::QuantOpSpec* q = ref::find_quant_op(p.info_.op)) {
    if (h.abi_version != FUSEPROOF_KERNEL_ABI_VERSION)
      throw PluginError("audit: plugin " + shown + " speaks ABI version " + std::to_string(h.abi_version) +
                        ", but op " + p.info_.op + " is a quantization op, which needs version 4 (the call's scales)");
    const auto contract = ref::parse_quant_contract(p.info_.contract);
    if (!contract || !q->contract(*contract)) {
      std::string has;
      for (const auto& c : q->contracts) has += (has.empty() ? "" : ", ") + std::string(ref::quant_contract_name(c.contract));
      throw PluginError("audit: plugin " + shown + " claims contract " + p.info_.contract + ", which op " +
                        p.info_.op + " does not have (" + has + ")");
    }
    if (!expected_op.empty() && expected_op != p.info_.op)
      throw PluginError("audit: plugin " + shown + " implements op " + p.info_.op + ", not " + expected_op);
    p.info_.sha256 = file_sha256(abs);
    return p;
  }
  const ref::OpSpec* spec = ref::find_op(p.info_.op);
  if (spec->has_groups() && h.abi_version < FUSEPROOF_KERNEL_ABI_VERSION_3)
    throw PluginError("audit: plugin " + shown + " speaks ABI version " + std::to_string(h.abi_version) + ", but op " +
                      p.info_.op + " has group-broadcast inputs, which need version 3 (the call's group_rows)");
  const auto contract = ref::parse_contract(p.info_.contract);
  if (!contract || !spec->contract(*contract))
    throw PluginError("audit: plugin " + shown + " claims contract " + p.info_.contract + ", which op " + p.info_.op +
                      " does not have");
  if (!expected_op.empty() && expected_op != p.info_.op)
    throw PluginError("audit: plugin " + shown + " implements op " + p.info_.op + ", not " + expected_op);
  p.info_.sha256 = file_sha256(abs);
  return p;
}

Plugin::Plugin(Plugin&& o) noexcept
    : handle_(o.handle_), call_(o.call_), entry_(o.entry_), info_(std::move(o.info_)) {
  o.handle_ = nullptr;
  o.call_ = nullptr;
  o.entry_ = nullptr;
}

Plugin::~Plugin() {
  // CUDA plugins register fat binaries whose teardown must run before the runtime's; never unload those early.
  if (handle_ && info_.memory == FUSEPROOF_MEMORY_HOST) dlclose(handle_);
}

int Plugin::call(fuseproof_call_t c, std::string* message) const {
  char error[512];
  error[0] = '\0';
  c.struct_size = info_.abi_version == FUSEPROOF_KERNEL_ABI_VERSION_2   ? FUSEPROOF_CALL_V2_SIZE
                  : info_.abi_version == FUSEPROOF_KERNEL_ABI_VERSION_3 ? FUSEPROOF_CALL_V3_SIZE
                                                                        : uint32_t(sizeof c);
  c.error = error;
  c.error_size = sizeof error;
  int rc;
  if (call_) {
    rc = call_(&c);
  } else {
    const int64_t w = c.shape[1];
    const bool v1_layout = c.n_inputs == 2 && c.inputs[0].stride[0] == w && c.inputs[0].stride[1] == 1 &&
                           c.inputs[1].stride[0] == 0 && c.inputs[1].stride[1] == 1;
    if (!v1_layout) {
      std::snprintf(error, sizeof error, "audit: ABI version 1 takes x {width, 1} and bias {0, 1} only");
      rc = 1;
    } else {
      rc = entry_(c.out, c.inputs[0].data, c.inputs[1].data, c.shape[0], w, c.dtype, c.stream, error, sizeof error);
    }
  }
  error[sizeof error - 1] = '\0';
  if (rc != 0 && message) *message = error;
  return rc;
}

int Plugin::call_with_bias(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype,
                           void* stream, std::string* message) const {
  fuseproof_call_t c{};
  c.dtype = dtype;
  c.shape[0] = rows;
  c.shape[1] = width;
  c.out = out;
  c.n_inputs = 2;
  c.inputs[0] = {x, {width, 1}};
  c.inputs[1] = {bias, {0, 1}};
  c.stream = stream;
  return call(c, message);
}

}  // namespace fuseproof::audit
