"""composition.py: an op's contract, as the op spec declares it (`fuseproof ops --json`), run as eager PyTorch.

One interpreter of the spec's compositions, used by the golden capture (scripts/capture_golden.py) and by the Python
front end's built-in `eager` subject. It needs torch only (not the extension), so the capture can import it from the
source tree. Each node is one eager tensor op; a node whose precision is "half" leaves its tensor in the inputs'
dtype T (eager rounds there), a "float32" node computes on float32 tensors; the output is converted to T at the end.
A "const" node is a Python float in the expression, as eager code writes it: `1 + scale` on a T tensor computes in
binary32 and rounds to T, on a float32 tensor stays float32. An "fma" node (one binary32 rounding of a * b + c) has no
eager form: torch has no fmaf, and torch.addcmul is not guaranteed to round once; composition_fn refuses it.
"""

import torch
import torch.nn.functional as F

# The activation names of the spec (reference/activation.h), bound to the eager PyTorch calls they name.
ACTIVATIONS = {
    "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    "gelu_erf": lambda t: F.gelu(t),
    "silu": lambda t: F.silu(t),
}


class NotEager(ValueError):
    """A contract whose composition eager PyTorch cannot express (an fma node)."""


def _cast(t, precision, dtype):
    if not isinstance(t, torch.Tensor):  # a const: a Python scalar takes the tensor operand's dtype, as in eager code
        return t
    return t.float() if precision == "float32" else t.to(dtype)


def eager_expressible(contract):
    """"" when eager PyTorch can run the contract's composition, else why not (one line naming the contract)."""
    for n in contract["nodes"]:
        if n["op"] == "fma":
            return ("contract %s is one binary32 fma rounded once, which eager PyTorch cannot express (torch has no "
                    "fmaf, and torch.addcmul is not guaranteed one rounding)" % contract["name"])
    return ""


def composition_fn(contract):
    """fn(*inputs) -> out for one contract of the spec: `inputs` are the op's logical inputs in declared order (views
    or tensors broadcastable to the output shape), all of dtype T; the result is a T tensor. Raises NotEager (one
    line) for a contract with an fma node."""
    why = eager_expressible(contract)
    if why:
        raise NotEager("composition: " + why)
    nodes = contract["nodes"]

    def fn(*inputs):
        dtype = inputs[0].dtype
        values = []
        for n in nodes:
            op = n["op"]
            if op == "input":
                v = inputs[n["input"]]
            elif op == "const":
                v = float(n["value"])
            elif op == "activation":
                v = ACTIVATIONS[n["act"]](_cast(values[n["a"]], n["precision"], dtype))
            elif op == "add":
                v = _cast(values[n["a"]], n["precision"], dtype) + _cast(values[n["b"]], n["precision"], dtype)
            elif op == "mul":
                v = _cast(values[n["a"]], n["precision"], dtype) * _cast(values[n["b"]], n["precision"], dtype)
            else:
                raise ValueError("composition: unknown node op %r" % op)
            values.append(v)
        return values[-1].to(dtype)

    return fn


def logical_inputs(op, buffers, width):
    """The op's logical inputs as views of its buffers (in spec.buffers order): a packed [rows, 2w] buffer gives its
    two halves, a row-broadcast buffer its [w] vector (broadcast by the arithmetic)."""
    by_name = dict(zip(op["buffers"], buffers))
    views = []
    for inp in op["inputs"]:
        layout = inp["layout"]
        if layout == "packed-first":
            views.append(by_name["x"][..., :width])
        elif layout == "packed-second":
            views.append(by_name["x"][..., width:])
        else:
            views.append(by_name[inp["name"]])
    return views


def find_op(spec, name):
    for op in spec["ops"]:
        if op["name"] == name:
            return op
    raise KeyError(name)


def find_contract(op, name):
    for c in op["contracts"]:
        if c["name"] == name:
            return c
    raise KeyError(name)
