"""_quant_bridge.py: calls a quantization subject written in Python and converts what it returns into the kernel ABI's
bytes (kernels/fuseproof_kernel_abi.h, version 4): the codes tensor and the scales tensor in the call's layout.

The calling convention (docs/SUBJECTS.md, Quantization subjects):

    codes, scales = fn(*buffers, *scalars[, scale_layout=NAME])

- buffers: the op's buffers in T (bf16 or fp16) on the subject's device, as the elementwise ops lay them out: x
  [rows, width]; a bias [width]; the packed gate|up [rows, 2 * width] (gate = x[:, :width]);
- scalars: the contract's binary32 scalars, each a 0-dim float32 tensor on that device (the NVFP4 contracts: the
  global encode scale; the FP8 group contracts: none);
- scale_layout: passed only to a subject whose `fuseproof_scale_layouts` attribute lists the layouts it writes
  ("linear", "swizzled-128x4"); any other subject is called for the linear layout only.
- codes: uint8 (or int8) [rows, width], one code per element (E2M1 in the low nibble, bit 3 the sign; the E4M3 byte),
  or for E2M1 [rows, width / 2] already packed (element 2j in the low nibble of byte j); torch.float8_e4m3fn [rows,
  width] and torch.float4_e2m1fn_x2 [rows, width / 2] are read as their bytes. A per-element E2M1 byte 0xFF is a
  reference's "no code" (vLLM's table on a NaN): it is written as its low nibble, 0xF, as a kernel would have to;
  any other byte above 0xF is no code and fails the call.
- scales: the E4M3 bytes (uint8 or torch.float8_e4m3fn) of an NVFP4 contract, or the float32 values of an FP8 group
  contract (fp32 and UE8M0 alike, as the references return them, NaN payloads as given); rows * blocks cells for the
  linear layout (any shape, read in row-major order), the padded 128x4 tile tensor for the swizzled one.

Every conversion is one vectorised torch expression on the subject's device; the bytes cross to the runner as one
bytes object per tensor. A raise, or a result the convention does not allow, is the subject's rejection of a valid
call (rc 1, with the reason).
"""

import torch

from fuseproof._bridge import _one_line

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
E2M1_NO_CODE = 0xFF  # quant_references.kE2m1NanValue, reference/quant_spec.h kQuantNoCode


class Rejected(Exception):
    """The subject's result breaks the calling convention (one line)."""


def _describe(t):
    return "%s %s on %s" % (list(t.shape), str(t.dtype).replace("torch.", ""), t.device)


def _as_bytes(t, what):
    """t's storage bytes as a uint8 tensor of t's shape (uint8, int8 and the 8-bit float formats)."""
    if not isinstance(t, torch.Tensor):
        raise Rejected("subject returned %s as %s, expected a torch.Tensor" % (type(t).__name__, what))
    if t.dtype == torch.uint8:
        return t
    names = ("float8_e4m3fn", "float4_e2m1fn_x2")
    if t.dtype == torch.int8 or any(getattr(torch, n, None) == t.dtype for n in names):
        return t.contiguous().view(torch.uint8)
    raise Rejected("subject returned %s as %s, expected uint8" % (_describe(t), what))


def pack_e2m1(codes, rows, width):
    """Packed E2M1 bytes [rows, width / 2] of per-element codes [rows, width] (or the packed tensor itself)."""
    c = _as_bytes(codes, "codes")
    if c.dim() == 2 and c.shape[0] == rows and c.shape[1] == width // 2 and width > 1:
        return c
    if c.numel() != rows * width:
        raise Rejected("subject returned codes %s, expected [%d, %d] codes or [%d, %d] packed bytes"
                       % (_describe(codes), rows, width, rows, width // 2))
    c = c.reshape(rows, width)
    # 0xFF, a reference's NaN without a code, goes out as its low nibble, as a kernel would write; nothing else
    # above 0xF is a code.
    bad = (c > 0xF) & (c != E2M1_NO_CODE)
    if bool(bad.any()):
        at = bad.nonzero()[0].tolist()
        raise Rejected("subject returned E2M1 code 0x%02X at [r=%d,c=%d], which is no code (0x0..0xF, 0xFF for none)"
                       % (int(c[at[0], at[1]]), at[0], at[1]))
    c = c & 0xF
    return c[:, 0::2] | (c[:, 1::2] << 4)


def e4m3_codes(codes, rows, width):
    c = _as_bytes(codes, "codes")
    if c.numel() != rows * width:
        raise Rejected("subject returned codes %s, expected [%d, %d] E4M3 bytes" % (_describe(codes), rows, width))
    return c.reshape(rows, width)


def scale_cells(layout, rows, blocks):
    """Cells of a scales tensor (reference/quant_spec.h scale_tensor_size)."""
    if layout == "linear":
        return rows * blocks
    return (rows + 127) // 128 * 128 * ((blocks + 3) // 4 * 4)


def scale_bytes(scales, scale_format, layout, rows, blocks):
    """The scales tensor's bytes: an E4M3 byte per cell, or four little-endian bytes of a binary32 per cell."""
    cells = scale_cells(layout, rows, blocks)
    if scale_format == "e4m3":
        s = _as_bytes(scales, "scales")
    else:
        if not isinstance(scales, torch.Tensor) or scales.dtype != torch.float32:
            raise Rejected("subject returned %s as scales, expected float32 (%s scales as their binary32 values)"
                           % (_describe(scales) if isinstance(scales, torch.Tensor) else type(scales).__name__,
                              scale_format))
        s = scales.contiguous().view(torch.int32)
    if s.numel() != cells:
        raise Rejected("subject returned scales %s, expected %d cells (%s layout, %d rows of %d blocks)"
                       % (_describe(scales), cells, layout, rows, blocks))
    s = s.reshape(-1)
    if scale_format != "e4m3":  # little-endian bytes of each binary32
        s = torch.stack([(s >> (8 * i)) & 0xFF for i in range(4)], dim=1).to(torch.uint8).reshape(-1)
    return s


def to_host_bytes(t):
    return t.contiguous().cpu().numpy().tobytes()


def convert(result, call):
    """(codes bytes, scales bytes) of the subject's result for `call` (the runner's dict); raises Rejected."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise Rejected("subject returned %s, expected (codes, scales)" % type(result).__name__)
    codes, scales = result
    rows, width, block = call["rows"], call["width"], call["block"]
    if call["element"] == "e2m1":
        c = pack_e2m1(codes, rows, width)
    else:
        c = e4m3_codes(codes, rows, width)
    s = scale_bytes(scales, call["scale"], call["layout"], rows, width // block)
    return to_host_bytes(c), to_host_bytes(s)


class QuantBridge:
    """One quantization subject: codes, scales = fn(*buffers, *scalars) (see the module's comment)."""

    def __init__(self, fn, device, layouts=None):
        self.fn = fn
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.layouts = tuple(layouts) if layouts is not None else None

    # The same descriptions as the elementwise bridge's.
    def hardware(self):
        from fuseproof._bridge import Bridge
        return Bridge(self.fn, self.device, False).hardware()

    def arch(self):
        from fuseproof._bridge import Bridge
        return Bridge(self.fn, self.device, False).arch()

    def device_free_bytes(self):
        return torch.cuda.mem_get_info(self.device)[0] if self.cuda else 0

    def writes_layout(self, layout):
        return layout == "linear" if self.layouts is None else layout in self.layouts

    def call(self, buffers, scalars, call):
        """buffers: [(writable memoryview of the buffer, shape)] in the op's order; scalars: [float]; call: dict of
        rows, width, block, dtype ("bf16"/"fp16"), element ("e2m1"/"e4m3"), scale ("e4m3", "fp32", "ue8m0"),
        layout ("linear", "swizzled-128x4"). (rc, message, fault, codes bytes, scales bytes). On CUDA the inputs are
        copied to the device and back after the call, so that the runner sees what the subject did to them."""
        dt = _DTYPES[call["dtype"]]
        hosts, args = [], []
        for view, shape in buffers:
            h = torch.frombuffer(view, dtype=torch.int16) if len(view) else torch.empty(0, dtype=torch.int16)
            d = h.to(self.device) if self.cuda else h
            hosts.append((h, d))
            args.append(d.view(dt).view(*shape))
        for v in scalars:
            args.append(torch.tensor(v, dtype=torch.float32, device=self.device))
        kwargs = {} if self.layouts is None else {"scale_layout": call["layout"]}
        rc, message, codes, scales = 0, "", b"", b""
        try:
            result = self.fn(*args, **kwargs)
        except Exception as e:  # a raise is the subject's rejection of the call
            rc, message = 1, _one_line(e)
        else:
            try:
                codes, scales = convert(result, call)
            except Rejected as e:
                rc, message = 1, str(e)
            except Exception as e:  # a result torch cannot convert: the subject's
                rc, message = 1, "subject's result cannot be converted: " + _one_line(e)
        try:
            if self.cuda:
                torch.cuda.synchronize(self.device)
                for h, d in hosts:
                    h.copy_(d)
        except Exception as e:  # the device is broken (a sticky CUDA error): the backend cannot go on
            return rc, message, "after the call: " + _one_line(e), b"", b""
        return rc, message, "", codes, scales
