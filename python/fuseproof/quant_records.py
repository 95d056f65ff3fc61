"""quant_records.py: the record files of `fuseproof eval` for the block ops (fp8_group_quant, nvfp4_quant and their
fused forms), read and written with numpy.

Input record, one per block: each input's block values as little-endian uint16 in declared order (silu_and_mul's gate
then up, bias_gelu_tanh's x then bias), then each scalar input as little-endian float32 (NVFP4's global scale).
Output record: the block's codes, one byte each (E2M1: the code in the low nibble, bit 3 the sign; E4M3: the byte),
then the block's scale (NVFP4: the E4M3 byte; FP8 groups: the little-endian float32 scale, for fp8-group-ue8m0 the
power of two). No padding anywhere. Needs numpy only (no torch), so the CPU tests and --check-only runs use it.
"""

import numpy as np

# family -> (block size, scalar inputs, scale dtype); the op -> family table is quant_references.OPS, repeated here
# as data so that this module needs no torch.
FAMILY_LAYOUT = {"nvfp4": (16, 1, "u1"), "fp8": (128, 0, "<f4")}
OP_LAYOUT = {  # op -> (family, number of block inputs)
    "fp8_group_quant": ("fp8", 1),
    "nvfp4_quant": ("nvfp4", 1),
    "silu_and_mul_fp8_group_quant": ("fp8", 2),
    "silu_and_mul_nvfp4_quant": ("nvfp4", 2),
    "bias_gelu_tanh_nvfp4_quant": ("nvfp4", 2),
}


class RecordError(ValueError):
    """Bytes that are not a whole number of records of the op; str() is one line."""


def input_dtype(op):
    family, n = OP_LAYOUT[op]
    block, scalars, _ = FAMILY_LAYOUT[family]
    fields = [("values", "<u2", (n, block))]
    if scalars:
        fields.append(("scalars", "<f4", (scalars,)))
    return np.dtype(fields)


def output_dtype(op):
    family, _ = OP_LAYOUT[op]
    block, _, scale = FAMILY_LAYOUT[family]
    return np.dtype([("codes", "u1", (block,)), ("scale", scale)])


def pack_inputs(op, values, scalars=None):
    """values uint16 [N, n_inputs, block] (bit patterns), scalars float32 [N, k] or None -> bytes."""
    dt = input_dtype(op)
    rec = np.zeros(values.shape[0], dtype=dt)
    rec["values"] = values
    if "scalars" in dt.names:
        if scalars is None:
            raise ValueError(f"{op} has a scalar input: scalars are required")
        rec["scalars"] = np.asarray(scalars, dtype=np.float32).reshape(values.shape[0], -1)
    return rec.tobytes()


def pack_outputs(op, codes, scales):
    """codes uint8 [N, block], scales uint8 [N] (E4M3 bytes) or float32 [N] -> bytes."""
    rec = np.zeros(codes.shape[0], dtype=output_dtype(op))
    rec["codes"] = codes
    rec["scale"] = scales
    return rec.tobytes()


def _unpack(op, data, dt, what):
    if len(data) % dt.itemsize:
        raise RecordError(f"{op} {what}: {len(data)} bytes is not a whole number of {dt.itemsize}-byte records")
    return np.frombuffer(data, dtype=dt)


def unpack_inputs(op, data):
    """bytes -> (values uint16 [N, n_inputs, block], scalars float32 [N, k] or None)."""
    rec = _unpack(op, data, input_dtype(op), "input")
    return rec["values"], (rec["scalars"] if "scalars" in rec.dtype.names else None)


def unpack_outputs(op, data):
    """bytes -> (codes uint8 [N, block], scales uint8 or float32 [N])."""
    rec = _unpack(op, data, output_dtype(op), "output")
    return rec["codes"], rec["scale"]
