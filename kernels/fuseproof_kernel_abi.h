/* fuseproof_kernel_abi.h: the versioned C ABI through which `fuseproof audit` loads a fused kernel built elsewhere. */
/*
 * A kernel author audits a kernel from another repository by building it into a shared library that exports ONE
 * function, fuseproof_kernel_descriptor(), and running
 *
 *     fuseproof audit --op bias_gelu_tanh --plugin ./libmy_kernel.so
 *
 * The suite dlopen()s the library, calls fuseproof_kernel_descriptor(), refuses the library unless abi_version equals
 * the FUSEPROOF_KERNEL_ABI_VERSION it was built with, then calls `entry` many times. Worked examples built in this
 * tree: kernels/plugins/ (the built-in CUDA kernel and its CPU emulation) and kernels/mutants/ (deliberately broken
 * kernels the audit must reject).
 *
 * This header is C (C99 and C++); it includes only <stddef.h> and <stdint.h>. Nothing is allocated or freed across it.
 *
 * Op "bias_gelu_tanh" (the only op of ABI version 1):
 *   out[r * width + c] = gelu_tanh( round_T( x[r * width + c] + bias[c] ) )   for 0 <= r < rows, 0 <= c < width
 * with T the 16-bit dtype, eager PyTorch semantics in binary32 (F.gelu(x + bias, approximate="tanh") on half tensors),
 * every NaN output 0x7FFF, as the GPU gives. Tensors are contiguous, row-major, and do not overlap `out`.
 * A call is VALID when all of these hold, and must then return 0 and write exactly rows * width elements of `out`:
 *   - dtype is FUSEPROOF_DTYPE_BF16 or FUSEPROOF_DTYPE_FP16
 *   - rows >= 1, width >= 1, width is a multiple of vector_bytes / 2
 *   - rows * width * 2 fits in int64_t (a kernel may reject smaller products too; the audit's valid calls never exceed
 *     2^25 elements, and its overflow probes overflow int64_t)
 *   - out, x and bias are non-null and aligned to vector_bytes
 * Any other call must be REJECTED: return non-zero, write a one-line message (no final period) naming the argument,
 * the rule and the value into `error` (e.g. "bias_gelu_tanh: width must be a multiple of 8, got 12"), and touch no
 * memory: not `out`, not beyond any buffer. The audit poisons `out` and guard bytes around every buffer and checks.
 *
 * Memory: FUSEPROOF_MEMORY_HOST entries receive host pointers and must have finished when they return.
 * FUSEPROOF_MEMORY_CUDA entries receive CUDA device pointers of the current device and a cudaStream_t (never the legacy
 * default stream); they enqueue work on that stream and return (the audit synchronizes). Work that reads x or bias must
 * be ordered after earlier work on the stream; a kernel launched with programmatic dependent launch (PDL,
 * cudaLaunchAttributeProgrammaticStreamSerialization) must call cudaGridDependencySynchronize() before reading them.
 * The audit checks this ordering with a producer kernel that releases dependents early and writes x and bias late.
 *
 * Threads: the audit calls `entry` from one thread at a time. The entry may use threads of its own.
 */
#ifndef FUSEPROOF_KERNEL_ABI_H_
#define FUSEPROOF_KERNEL_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on any change to the structs, the entry signature or the op contracts above. */
#define FUSEPROOF_KERNEL_ABI_VERSION 1u

/** The exported symbol's name, for dlsym. */
#define FUSEPROOF_KERNEL_DESCRIPTOR_SYMBOL "fuseproof_kernel_descriptor"

/** Element type codes passed to `entry`. Codes other than BF16/FP16 exist so that rejection can be audited. */
enum {
  FUSEPROOF_DTYPE_BF16 = 0,    /**< | S |EEEEEEEE|MMMMMMM| */
  FUSEPROOF_DTYPE_FP16 = 1,    /**< | S |EEEEE|MMMMMMMMMM| */
  FUSEPROOF_DTYPE_FLOAT32 = 2, /**< never valid for bias_gelu_tanh */
  FUSEPROOF_DTYPE_INT16 = 3    /**< never valid for bias_gelu_tanh */
};

/** Where the pointers passed to `entry` live. */
enum { FUSEPROOF_MEMORY_HOST = 0, FUSEPROOF_MEMORY_CUDA = 1 };

/**
 * Runs the op once. Returns 0 on success; non-zero on rejection, with a NUL-terminated one-line message written into
 * error[0 .. error_size) (error may be NULL when error_size is 0). `stream` is a cudaStream_t for CUDA entries, NULL
 * for host entries.
 */
typedef int (*fuseproof_kernel_entry_fn)(void* out, const void* x, const void* bias, int64_t rows, int64_t width,
                                         int32_t dtype, void* stream, char* error, size_t error_size);

/** What a plugin says about itself; returned by pointer, owned by the plugin, valid until dlclose. */
typedef struct fuseproof_kernel_descriptor_t {
  uint32_t abi_version;             /**< FUSEPROOF_KERNEL_ABI_VERSION the plugin was built against */
  uint32_t struct_size;             /**< sizeof(fuseproof_kernel_descriptor_t), a second guard against mismatches */
  const char* kernel_name;          /**< e.g. "fuseproof builtin bias_gelu_tanh (CUDA)"; shown in reports */
  const char* op;                   /**< "bias_gelu_tanh" */
  int32_t memory;                   /**< FUSEPROOF_MEMORY_HOST or FUSEPROOF_MEMORY_CUDA */
  int32_t vector_bytes;             /**< bytes per vector load/store (16 or 32); widths are multiples of this / 2 */
  fuseproof_kernel_entry_fn entry;  /**< the op */
} fuseproof_kernel_descriptor_t;

/** The one function a plugin exports (type of FUSEPROOF_KERNEL_DESCRIPTOR_SYMBOL). */
typedef const fuseproof_kernel_descriptor_t* (*fuseproof_kernel_descriptor_fn)(void);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#if defined(__GNUC__)
#define FUSEPROOF_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define FUSEPROOF_PLUGIN_EXPORT
#endif

/**
 * In a plugin's one translation unit:
 *   FUSEPROOF_DEFINE_PLUGIN(&my_descriptor)
 * defines the exported fuseproof_kernel_descriptor() returning it.
 */
#ifdef __cplusplus
#define FUSEPROOF_DEFINE_PLUGIN(descriptor_ptr)                                                              \
  extern "C" FUSEPROOF_PLUGIN_EXPORT const fuseproof_kernel_descriptor_t* fuseproof_kernel_descriptor(void) { \
    return (descriptor_ptr);                                                                                  \
  }
#else
#define FUSEPROOF_DEFINE_PLUGIN(descriptor_ptr)                                                            \
  FUSEPROOF_PLUGIN_EXPORT const fuseproof_kernel_descriptor_t* fuseproof_kernel_descriptor(void) {          \
    return (descriptor_ptr);                                                                                \
  }
#endif

#endif /* FUSEPROOF_KERNEL_ABI_H_ */
