/* fuseproof_kernel_abi.h: the versioned C ABI through which `fuseproof audit` loads a fused kernel built elsewhere. */
/*
 * A kernel author audits a kernel from another repository by building it into a shared library that exports ONE
 * function, fuseproof_kernel_descriptor(), and running
 *
 *     fuseproof audit --plugin ./libmy_kernel.so            (the op and the contract come from the descriptor)
 *
 * The suite dlopen()s the library, calls fuseproof_kernel_descriptor(), reads abi_version and struct_size first and
 * refuses the library unless they name a version it knows (1 to 4) and that version's struct, then calls the kernel
 * many times. `fuseproof ops` lists every op with its inputs, layouts and contracts (reference/op_registry.cpp is the
 * one description). Worked examples built in this tree: kernels/plugins/ (the built-in kernels and their CPU
 * emulations) and kernels/mutants/ (deliberately broken kernels the audit must reject).
 *
 * This header is C (C99 and C++); it includes only <stddef.h> and <stdint.h>. Nothing is allocated or freed across it.
 *
 * ABI version 4 (this header): version 3's call with the fields of the quantization ops (`fuseproof ops`, section
 *   "quantization ops": fp8_group_quant, nvfp4_quant and the fused ones), whose outputs are several tensors of
 *   several dtypes. For such an op `out` is the CODES tensor and `scales` the SCALES tensor:
 *       codes, E4M3 elements (fp8_group_quant, silu_and_mul_fp8_group_quant): [rows, width] bytes, row-major
 *       codes, E2M1 elements (the *nvfp4_quant ops): [rows, width / 2] bytes, element 2j of a row in the low nibble of
 *           byte j and element 2j + 1 in the high nibble; a nibble is | S | E E | M | (bit 3 the sign)
 *       scales, one per block of block_size elements of a row (16 for NVFP4, 128 for the FP8 groups), block k of row r:
 *           FUSEPROOF_SCALE_LINEAR:          at r * (width / block_size) + k
 *           FUSEPROOF_SCALE_SWIZZLED_128X4:  the 128x4 tiles of cuBLAS / tcgen05 block scaling, a tensor of
 *               ceil(rows / 128) * 128 * ceil(blocks / 4) * 4 cells; block k of row r at
 *               ((r / 128) * ceil(blocks / 4) + k / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + k % 4
 *               A PADDING cell (row >= rows or block >= blocks of a tile) must be written 0x00: a GEMM reads it.
 *           E4M3 scales (NVFP4) are one byte per cell; fp32 and UE8M0 scales (the FP8 groups) are binary32 values,
 *           four bytes per cell (UE8M0 scales as the power of two the reference returns), linear layout only.
 *   scalars[0 .. n_scalars-1] are the contract's binary32 scalar inputs in the order `fuseproof ops` lists them (the
 *   NVFP4 contracts: global_scale; the FP8 group contracts: none). Every binary32 value is a valid scalar: the kernel
 *   computes what its contract computes with it (an Inf global scale included).
 *   For every other op, scales is NULL, scale_layout 0, n_scalars 0, and the kernel ignores them.
 *   A version-3 plugin is still loaded for the ops it could serve before: it is called with struct_size
 *   FUSEPROOF_CALL_V3_SIZE and never reads the fields after group_rows. A quantization op needs version 4.
 * ABI version 3: version 2's call with one field more, group_rows, for the ops whose inputs are
 *   group-broadcast (gated_residual's gate, modulate's scale and shift: a DiT's [batch, 1, d] over each batch's
 *   tokens). Element (r, c) of a group-broadcast input is
 *       inputs[i].data[(r / group_rows) * inputs[i].stride[0] + c * inputs[i].stride[1]]
 *   with shape[0] a multiple of group_rows >= 1: group_rows 1 is one row per output row (per element), group_rows
 *   shape[0] one row shared by all. Inputs of every other layout ignore it (the audit passes 1 with them).
 *   A version-2 plugin is still loaded for the ops without group-broadcast inputs: it is called with struct_size
 *   FUSEPROOF_CALL_V2_SIZE and never reads group_rows.
 * ABI version 2: one op-generic call.
 *   The op's logical output is out[r][c] for 0 <= r < shape[0], 0 <= c < shape[1] (rank 2) and each declared input is
 *   a strided view of the same logical shape: element (r, c) of input i is
 *       inputs[i].data[r * inputs[i].stride[0] + c * inputs[i].stride[1]]      (strides in elements)
 *   so every layout of the op spec is expressed by strides:
 *       elementwise x:            stride {width, 1}
 *       row-broadcast bias [w]:   stride {0, 1}                      (bias_gelu_tanh, bias_gelu_erf)
 *       packed gate / up:         data x and x + width, stride {2 * width, 1} into one [rows, 2 * width] tensor
 *                                 (silu_and_mul, gelu_tanh_and_mul, gelu_and_mul: vLLM's and sglang's layout)
 *       group-broadcast [rows / group_rows, w]: stride {width, 1}, row r / group_rows (version 3; gated_residual,
 *                                 modulate)
 *   out is contiguous row-major (stride {width, 1}). The audit passes inputs in the op's declared order (x, bias),
 *   (gate, up), (x, gate, y) or (x, scale, shift), every one with the layout the spec declares; a kernel may refuse any other layout.
 * ABI version 1 (kept through a shim): the entry `(out, x, bias, rows, width, dtype, stream, error, error_size)` of
 *   op bias_gelu_tanh only; its contract is eager.
 *
 * A call is VALID when all of these hold, and must then return 0 and write exactly rows * width elements of out (a
 * quantization op: every byte of codes and every cell of scales, padding included, and nothing else):
 *   - dtype is FUSEPROOF_DTYPE_BF16 or FUSEPROOF_DTYPE_FP16; n_inputs and the strides are the op's
 *   - rows >= 1, width >= 1, width is a multiple of vector_bytes / 2
 *   - for a quantization op: width is a multiple of the op's block_size; scales is non-null and aligned to 4 bytes;
 *     scale_layout is one of the op's layouts; n_scalars is the contract's count
 *   - for an op with group-broadcast inputs: group_rows >= 1 and rows is a multiple of group_rows
 *   - every buffer's size in bytes fits in int64_t (the audit's overflow probes overflow int64_t)
 *   - out and every input pointer are non-null and aligned to vector_bytes
 * Any other call must be REJECTED: return non-zero, write a one-line message (no final period) naming the argument,
 * the rule and the value into `error` (e.g. "silu_and_mul: width must be a multiple of 8, got 12"), and touch no
 * memory: not out, not beyond any buffer. The audit poisons out and guard bytes around every buffer and checks.
 *
 * Contracts (descriptor field `contract`, "eager" when NULL; `fuseproof audit --contract` overrides). A quantization
 * op's contracts are named as `fuseproof ops` lists them ("vllm-ref", "rcp-approx", "te", "flashinfer-exact",
 * "fp8-group", "fp8-group-ue8m0"; docs/OPS.md, Quantization ops and contracts); NULL is the op's first. The others:
 *   "eager"  bit-exact with eager PyTorch's composition on the device, every intermediate tensor rounded to T
 *   "fp32"   (the *_and_mul ops) to_T(act(f32(gate)) * f32(up)) as PyTorch's float32 kernels compute it
 *   "fma"    (gated_residual, modulate) one binary32 fmaf rounded once to T: fmaf(gate, y, x), fmaf(x, 1 + scale,
 *            shift) with 1 + scale in binary32
 * Every NaN output is 0x7FFF, as the GPU's cvt.rn gives it.
 *
 * Memory: FUSEPROOF_MEMORY_HOST kernels receive host pointers and must have finished when they return.
 * FUSEPROOF_MEMORY_CUDA kernels receive CUDA device pointers of the current device and a cudaStream_t (never the
 * legacy default stream); they enqueue work on that stream and return (the audit synchronizes). Work that reads an
 * input must be ordered after earlier work on the stream; a kernel launched with programmatic dependent launch (PDL,
 * cudaLaunchAttributeProgrammaticStreamSerialization) must call cudaGridDependencySynchronize() before reading them.
 * The audit checks this ordering with a producer kernel that releases dependents early and writes the inputs late.
 *
 * Threads, streams and graphs: as models run kernels, the audit calls one from several threads at once (host
 * kernels, the `streams` class) and enqueues calls on several CUDA streams from one thread with no synchronisation
 * between them (CUDA kernels); each call has buffers of its own, so a kernel must not share mutable state between
 * calls (a static workspace). It captures CUDA kernels' calls into a CUDA graph (cudaStreamCaptureModeGlobal) after
 * one eager warm-up call of each shape, and replays the graph with new inputs in the same buffers (the `graph` class):
 * a call may allocate on its first call, but not in every call (cudaMalloc, cudaFree and synchronous copies are not
 * permitted while a stream captures). The kernel may use threads of its own.
 */
#ifndef FUSEPROOF_KERNEL_ABI_H_
#define FUSEPROOF_KERNEL_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version this header defines; bumped on any change to the structs, the call or the op contracts above. */
#define FUSEPROOF_KERNEL_ABI_VERSION 4u
/** Version 3: the same descriptor, the call up to group_rows. */
#define FUSEPROOF_KERNEL_ABI_VERSION_3 3u
/** Version 2: the same descriptor, the call without group_rows. */
#define FUSEPROOF_KERNEL_ABI_VERSION_2 2u
/** The first version, still loaded (bias_gelu_tanh, one entry with raw pointers). */
#define FUSEPROOF_KERNEL_ABI_VERSION_1 1u

/** The exported symbol's name, for dlsym. */
#define FUSEPROOF_KERNEL_DESCRIPTOR_SYMBOL "fuseproof_kernel_descriptor"

/** Element type codes. Codes other than BF16/FP16 exist so that rejection can be audited. */
enum {
  FUSEPROOF_DTYPE_BF16 = 0,    /**< | S |EEEEEEEE|MMMMMMM| */
  FUSEPROOF_DTYPE_FP16 = 1,    /**< | S |EEEEE|MMMMMMMMMM| */
  FUSEPROOF_DTYPE_FLOAT32 = 2, /**< never valid */
  FUSEPROOF_DTYPE_INT16 = 3    /**< never valid */
};

/** Where the pointers passed to the kernel live. */
enum { FUSEPROOF_MEMORY_HOST = 0, FUSEPROOF_MEMORY_CUDA = 1 };

/** Most inputs an op of this ABI has. */
#define FUSEPROOF_MAX_INPUTS 4
/** Most binary32 scalar inputs of a quantization contract (version 4). */
#define FUSEPROOF_MAX_SCALARS 4

/** Where a quantization op's scales go (version 4; see the header comment). */
enum { FUSEPROOF_SCALE_LINEAR = 0, FUSEPROOF_SCALE_SWIZZLED_128X4 = 1 };

/** One input: a strided view of the output's logical shape (see the header comment). */
typedef struct fuseproof_input_t {
  const void* data;
  int64_t stride[2]; /**< elements between consecutive rows, columns; 0 broadcasts */
} fuseproof_input_t;

/** One call of a version-2 kernel. */
typedef struct fuseproof_call_t {
  uint32_t struct_size;  /**< sizeof(fuseproof_call_t) */
  int32_t dtype;         /**< FUSEPROOF_DTYPE_* of out and every input */
  int64_t shape[2];      /**< rows, width of out */
  void* out;             /**< contiguous rows x width */
  int32_t n_inputs;      /**< the op's declared inputs, in order */
  fuseproof_input_t inputs[FUSEPROOF_MAX_INPUTS];
  void* stream;          /**< cudaStream_t for CUDA kernels, NULL for host ones */
  char* error;           /**< a rejection's one-line message goes here (NUL-terminated); NULL when error_size is 0 */
  size_t error_size;
  int64_t group_rows;    /**< version 3: output rows per row of a group-broadcast input (>= 1, divides shape[0]) */
  void* scales;          /**< version 4, quantization ops: the block scales (out holds the codes); NULL otherwise */
  int32_t scale_layout;  /**< version 4: FUSEPROOF_SCALE_* of scales */
  int32_t n_scalars;     /**< version 4: the contract's scalar inputs in scalars[] */
  float scalars[FUSEPROOF_MAX_SCALARS]; /**< version 4: binary32 scalars ("global_scale"), declared order */
} fuseproof_call_t;

/** struct_size of a call made to a version-2 plugin: the struct up to group_rows. */
#define FUSEPROOF_CALL_V2_SIZE ((uint32_t)offsetof(fuseproof_call_t, group_rows))
/** struct_size of a call made to a version-3 plugin: the struct up to scales. */
#define FUSEPROOF_CALL_V3_SIZE ((uint32_t)offsetof(fuseproof_call_t, scales))

/** Versions 2 to 4: runs the op once; 0 on success, non-zero on rejection with the message in call->error. */
typedef int (*fuseproof_kernel_call_fn)(const fuseproof_call_t* call);

/** Version 1: bias_gelu_tanh's entry. */
typedef int (*fuseproof_kernel_entry_fn)(void* out, const void* x, const void* bias, int64_t rows, int64_t width,
                                         int32_t dtype, void* stream, char* error, size_t error_size);

/** What a version-2 plugin says about itself; returned by pointer, owned by the plugin, valid until dlclose. */
typedef struct fuseproof_kernel_descriptor_t {
  uint32_t abi_version;           /**< FUSEPROOF_KERNEL_ABI_VERSION the plugin was built against */
  uint32_t struct_size;           /**< sizeof(fuseproof_kernel_descriptor_t), a second guard against mismatches */
  const char* kernel_name;        /**< e.g. "fuseproof built-in silu_and_mul (CUDA)"; shown in reports */
  const char* op;                 /**< an op of `fuseproof ops`: "silu_and_mul" */
  const char* contract;           /**< the contract the kernel claims: "eager" (also when NULL), "fp32", "fma", or a
                                       quantization contract ("vllm-ref", ...; NULL: the op's first) */
  int32_t memory;                 /**< FUSEPROOF_MEMORY_HOST or FUSEPROOF_MEMORY_CUDA */
  int32_t vector_bytes;           /**< bytes per vector load/store (2, 16 or 32); widths are multiples of this / 2 */
  fuseproof_kernel_call_fn call;  /**< the op */
} fuseproof_kernel_descriptor_t;

/** What a version-1 plugin says about itself (bias_gelu_tanh only). */
typedef struct fuseproof_kernel_descriptor_v1_t {
  uint32_t abi_version; /**< 1 */
  uint32_t struct_size; /**< sizeof(fuseproof_kernel_descriptor_v1_t) */
  const char* kernel_name;
  const char* op; /**< "bias_gelu_tanh" */
  int32_t memory;
  int32_t vector_bytes;
  fuseproof_kernel_entry_fn entry;
} fuseproof_kernel_descriptor_v1_t;

/** The one function a plugin exports (type of FUSEPROOF_KERNEL_DESCRIPTOR_SYMBOL); a version-1 plugin's returns a
 * fuseproof_kernel_descriptor_v1_t (both structs begin with abi_version and struct_size). */
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
 * defines the exported fuseproof_kernel_descriptor() returning it (a version-2 or a version-1 descriptor).
 */
#ifdef __cplusplus
#define FUSEPROOF_DEFINE_PLUGIN(descriptor_ptr)                                                              \
  extern "C" FUSEPROOF_PLUGIN_EXPORT const fuseproof_kernel_descriptor_t* fuseproof_kernel_descriptor(void) { \
    return reinterpret_cast<const fuseproof_kernel_descriptor_t*>(descriptor_ptr);                          \
  }
#else
#define FUSEPROOF_DEFINE_PLUGIN(descriptor_ptr)                                                            \
  FUSEPROOF_PLUGIN_EXPORT const fuseproof_kernel_descriptor_t* fuseproof_kernel_descriptor(void) {          \
    return (const fuseproof_kernel_descriptor_t*)(descriptor_ptr);                                          \
  }
#endif

#endif /* FUSEPROOF_KERNEL_ABI_H_ */
