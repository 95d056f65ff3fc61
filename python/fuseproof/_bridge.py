"""_bridge.py: places the audit's guarded host images as torch tensors on the subject's device and calls the subject.

How tensors cross from C++ to Python: the C++ runner (python/python_runner.cpp) owns every buffer as a host image
(guard + data + guard, poisoned) and hands it over as a writable memoryview; torch.frombuffer wraps it without a copy
(torch 1.10 and later). On a CUDA device the whole image, guards included, is copied to one device allocation, the
subject runs on views into it, and the image is copied back, so guard writes and input changes are seen on the host.
"""

import torch

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
_POISON = 0xFFA5 - 0x10000  # audit::kPoison as an int16


def _one_line(e):
    text = str(e).strip().splitlines()
    head = type(e).__name__ + (": " + text[0] if text else "")
    return head[:400]


def _describe(t):
    return "%s %s on %s" % (list(t.shape), str(t.dtype).replace("torch.", ""), t.device)


def check_result(result, rows, width, dtype, device):
    """Why `result` is not a valid output of a (rows, width) call ("" when it is)."""
    if not isinstance(result, torch.Tensor):
        return "subject returned %s, expected a torch.Tensor" % type(result).__name__
    want = "%s %s on %s" % ([rows, width], str(dtype).replace("torch.", ""), device)
    if list(result.shape) != [rows, width] or result.dtype != dtype or result.device != device:
        return "subject returned a tensor of %s, expected %s" % (_describe(result), want)
    return ""


class Bridge:
    """One subject: fn(x, bias) -> out, or fn(x, bias, out) -> None when out_arg."""

    def __init__(self, fn, device, out_arg):
        self.fn = fn
        self.device = torch.device(device)
        self.out_arg = out_arg
        self.cuda = self.device.type == "cuda"

    def hardware(self):
        torch_line = "torch " + torch.__version__
        if self.cuda:
            i = self.device.index if self.device.index is not None else torch.cuda.current_device()
            p = torch.cuda.get_device_properties(i)
            return "%s, sm_%d%d, %d SMs, %s, CUDA %s" % (p.name, p.major, p.minor, p.multi_processor_count, torch_line,
                                                        torch.version.cuda)
        return torch_line + " (CPU)"

    def device_free_bytes(self):
        return torch.cuda.mem_get_info(self.device)[0] if self.cuda else 0

    def _run(self, x, bias, out, rows, width):
        """Calls the subject; (rc, message): rc 1 when it raised or returned a wrong tensor."""
        try:
            if self.out_arg:
                self.fn(x, bias, out)
                return 0, ""
            result = self.fn(x, bias)
        except Exception as e:  # a raise is the subject's rejection of the call
            return 1, _one_line(e)
        why = check_result(result, rows, width, x.dtype, x.device)
        if why:
            return 1, why
        try:
            out.copy_(result)
        except Exception as e:
            return 1, "subject's output cannot be copied into out: " + _one_line(e)
        return 0, ""

    def call(self, x_img, x_off, b_img, b_off, o_img, o_off, rows, width, dtype, n):
        hx, hb, ho = (torch.frombuffer(m, dtype=torch.int16) for m in (x_img, b_img, o_img))
        dx, db, do = (h.to(self.device) if self.cuda else h for h in (hx, hb, ho))
        dt = _DTYPES[dtype]
        x = dx[x_off:x_off + n].view(dt).view(rows, width)
        bias = db[b_off:b_off + width].view(dt)
        out = do[o_off:o_off + n].view(dt).view(rows, width)
        rc, message = self._run(x, bias, out, rows, width)
        try:
            if self.cuda:
                torch.cuda.synchronize(self.device)
                for h, d in ((hx, dx), (hb, db), (ho, do)):
                    h.copy_(d)
        except Exception as e:  # the device is broken (a sticky CUDA error): the backend cannot go on
            return rc, message, "after the call: " + _one_line(e)
        return rc, message, ""

    def domain(self, b_img, o_img, dtype):
        """x[r, c] = r for all 65,536 patterns r, bias[c] = biases[c]; writes out[c * 65536 + r] (bias-major)."""
        dt = _DTYPES[dtype]
        hb = torch.frombuffer(b_img, dtype=torch.int16)
        ho = torch.frombuffer(o_img, dtype=torch.int16)
        n = hb.numel()
        rows = torch.arange(65536, dtype=torch.int32, device=self.device).to(torch.int16)  # wraps: the bit patterns
        x = rows.view(65536, 1).expand(65536, n).contiguous().view(dt)
        bias = hb.to(self.device).view(dt)
        out = torch.full((65536, n), _POISON, dtype=torch.int16, device=self.device).view(dt)
        rc, message = self._run(x, bias, out, 65536, n)
        try:
            if rc == 0 and not torch.equal(x.view(torch.int16), rows.view(65536, 1).expand(65536, n)):
                rc, message = 1, "subject modified x"
            if self.cuda:
                hb.copy_(bias.view(torch.int16))  # the runner compares the biases after the call
            if rc == 0:
                ho.copy_(out.view(torch.int16).t().contiguous().view(-1))
            if self.cuda:
                torch.cuda.synchronize(self.device)
        except Exception as e:
            return rc, message, "after the domain call: " + _one_line(e)
        return rc, message, ""
