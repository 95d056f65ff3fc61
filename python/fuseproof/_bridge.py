"""_bridge.py: places the audit's guarded host images as torch tensors on the subject's device and calls the subject.

How tensors cross from C++ to Python: the C++ runner (python/python_runner.cpp) owns every buffer of the op (x, bias;
or the packed x of a *_and_mul op) and out as a host image (guard + data + guard, poisoned) and hands each over as a
writable memoryview with the data's offset and shape; torch.frombuffer wraps it without a copy (torch 1.10 and
later). On a CUDA device the whole image, guards included, is copied to one device allocation, the subject runs on
views into it, and the image is copied back, so guard writes and input changes are seen on the host.
"""

import torch

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


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
    """One subject: fn(*buffers) -> out, or fn(*buffers, out) -> None when out_arg (buffers in the op's order)."""

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

    def arch(self):
        """The GPU architecture ("sm_90") the subject runs on; "" on the CPU."""
        if not self.cuda:
            return ""
        major, minor = torch.cuda.get_device_capability(self.device)
        return "sm_%d%d" % (major, minor)

    def device_free_bytes(self):
        return torch.cuda.mem_get_info(self.device)[0] if self.cuda else 0

    def _run(self, args, out, rows, width):
        """Calls the subject; (rc, message): rc 1 when it raised or returned a wrong tensor."""
        try:
            if self.out_arg:
                self.fn(*args, out)
                return 0, ""
            result = self.fn(*args)
        except Exception as e:  # a raise is the subject's rejection of the call
            return 1, _one_line(e)
        why = check_result(result, rows, width, out.dtype, out.device)
        if why:
            return 1, why
        try:
            out.copy_(result)
        except Exception as e:
            return 1, "subject's output cannot be copied into out: " + _one_line(e)
        return 0, ""

    def call(self, buffers, out_image, rows, width, dtype):
        """buffers: [(memoryview of the image, data offset in elements, shape)]; out_image: (memoryview, offset)."""
        dt = _DTYPES[dtype]
        hosts, devs, args = [], [], []
        for image, offset, shape in buffers:
            h = torch.frombuffer(image, dtype=torch.int16)
            d = h.to(self.device) if self.cuda else h
            n = 1
            for s in shape:
                n *= s
            hosts.append(h)
            devs.append(d)
            args.append(d[offset:offset + n].view(dt).view(*shape))
        ho = torch.frombuffer(out_image[0], dtype=torch.int16)
        do = ho.to(self.device) if self.cuda else ho
        out = do[out_image[1]:out_image[1] + rows * width].view(dt).view(rows, width)
        rc, message = self._run(args, out, rows, width)
        try:
            if self.cuda:
                torch.cuda.synchronize(self.device)
                for h, d in list(zip(hosts, devs)) + [(ho, do)]:
                    h.copy_(d)
        except Exception as e:  # the device is broken (a sticky CUDA error): the backend cannot go on
            return rc, message, "after the call: " + _one_line(e)
        return rc, message, ""
