"""subjects.py: the built-in subjects (--subject NAME) of every op, and the loader of --callable MODULE:FUNCTION.

Every built-in subject takes the op's buffers, as a user's callable does: fn(x, bias) for the bias ops, fn(x) for the
packed *_and_mul ops (x = [rows, 2d], gate = x[:, :d], up = x[:, d:]), and for the ops with group-broadcast inputs
DiT's 3-D tensors: fn(x, gate, y) (gated_residual) and fn(x, scale, shift) (modulate) with x and y
[rows / group_rows, group_rows, d], gate, scale and shift [rows / group_rows, 1, d].

A quantization op's built-in subjects (`--subject eager` and `--subject torch-compile` with --op OP --contract C) are
the projects' torch references of quant_references.py, one per (op, contract) (quant_reference_pairs()), called as a
user's quantization callable is: codes, scales = fn(*buffers, *scalars) (_quant_bridge.py, docs/SUBJECTS.md).
"""

import collections
import importlib
import importlib.util
import inspect

import torch

from fuseproof import Unavailable
from fuseproof._import_probe import exit_words
from fuseproof.composition import composition_fn, eager_expressible, find_contract, logical_inputs


class Refused(ValueError):
    """A built-in subject that cannot be judged against the contract asked for (one line, a usage error)."""


def eager_subject(op, contract="eager"):
    """The op's contract run as eager PyTorch (composition.py), on the op's buffers; composition.NotEager for a
    contract with an fma node."""
    fn = composition_fn(find_contract(op, contract))

    def subject(*buffers):
        width = buffers[0].shape[-1] // 2 if op["inputs"][0]["layout"] == "packed-first" else buffers[0].shape[-1]
        return fn(*logical_inputs(op, buffers, width))

    subject.__qualname__ = "eager_" + op["name"]
    return subject


def _raise_recompile_limit():
    # Every check class calls the op at many shapes; past Dynamo's recompile limit (8 by default) torch.compile falls
    # back to eager without a word, and the audit would check eager instead. Raising the limit keeps every call
    # compiled; Inductor's code generation is untouched.
    import torch._dynamo.config as dc
    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(dc, name):
            setattr(dc, name, max(getattr(dc, name), 4096))


def _compiled(op, emulate_precision_casts, mode=None):
    if not hasattr(torch, "compile"):
        raise Unavailable("torch %s has no torch.compile (PyTorch 2.0 or later)" % torch.__version__)
    try:
        import torch._inductor.config as ic
    except ImportError as e:
        raise Unavailable("torch %s has no Inductor: %s" % (torch.__version__, e))
    if emulate_precision_casts:
        if not hasattr(ic, "emulate_precision_casts"):
            raise Unavailable("torch %s has no torch._inductor.config.emulate_precision_casts" % torch.__version__)
        ic.emulate_precision_casts = True
    _raise_recompile_limit()
    return torch.compile(eager_subject(op), **({"mode": mode} if mode else {}))


def _cuda_graph(op, budget_bytes=16 << 30):
    """The eager composition as a model runs it under CUDA graphs: per shape and dtype, a warm-up on a side stream, a
    torch.cuda.graph capture on static input copies, then every call copies its inputs in, replays, and returns a copy
    of the static output. Graphs are kept least recently used first while their static tensors fit budget_bytes."""
    if not torch.cuda.is_available():
        raise Unavailable("torch.cuda.graph needs a CUDA device (torch.cuda.is_available() is False)")
    fn = eager_subject(op)
    cache = collections.OrderedDict()

    def nbytes(entry):
        _, static, out = entry
        return sum(t.numel() * t.element_size() for t in static) + out.numel() * out.element_size()

    def subject(*buffers):
        key = tuple((tuple(b.shape), b.dtype, b.device) for b in buffers)
        entry = cache.get(key)
        if entry is None:
            need = sum(b.numel() * b.element_size() for b in buffers) * 2
            while cache and sum(nbytes(e) for e in cache.values()) + need > budget_bytes:
                cache.popitem(last=False)
            static = [b.clone() for b in buffers]
            side = torch.cuda.Stream(buffers[0].device)
            side.wait_stream(torch.cuda.current_stream(buffers[0].device))
            with torch.cuda.stream(side):
                fn(*static)
            torch.cuda.current_stream(buffers[0].device).wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = fn(*static)
            entry = cache[key] = (graph, static, out)
        else:
            cache.move_to_end(key)
        graph, static, out = entry
        for dst, src in zip(static, buffers):
            dst.copy_(src)
        graph.replay()
        return out.clone()

    subject.__qualname__ = "cuda_graph_eager_" + op["name"]
    return subject


def _triton(op, contract="eager", fp_fusion=False):
    if not any(c["name"] == contract for c in op["contracts"]):
        raise Refused("subject triton-%s: op %s has no contract %s" % (contract, op["name"], contract))
    if fp_fusion and not any(i["layout"] == "group-broadcast" for i in op["inputs"]):
        raise Refused("subject triton-fp-fusion: op %s has no product and sum to fuse; it is for the DiT ops "
                      "(gated_residual, modulate)" % op["name"])
    try:
        import triton  # noqa: F401
    except ImportError:
        raise Unavailable("Triton is not installed")
    from fuseproof import triton_ops
    return triton_ops.subject(op, contract, fp_fusion)


# ---- quantization ops: the projects' torch references (quant_references.py) ---------------------------------------

def _quant_references():
    from fuseproof import quant_references as q
    return q


def quant_reference_pairs():
    """Every (op, contract) with a reference in quant_references.py, in its order."""
    q = _quant_references()
    return [(op, c) for op, (family, _, _) in q.OPS.items() for c in q.FAMILIES[family]["contracts"]]


def quant_reference_subject(op, contract):
    """The torch reference of (op, contract) as a quantization callable: the op's buffers (x [rows, width]; a bias
    [width]; the packed gate|up [rows, 2 * width]) and the contract's scalars (0-dim float32 tensors) in; the activation
    stage (if any) in eager torch, rounded to T, on the whole tensor, as eager runs it; then the reference on the
    [rows * blocks, block] view of the result, the scalar broadcast to [rows * blocks, 1]; out (codes [rows, width], one
    per element, scales [rows, blocks], or for scale_layout "swizzled-128x4" quant_references.swizzle_blockscale of
    them, as the subject's fuseproof_scale_layouts declares). Raises Refused for a contract the op has not,
    Unavailable where it cannot run here (no torch.float8_e4m3fn and no emulation installed; rcp-approx without
    CuPy; rcp-approx also needs CUDA tensors, --backend cuda)."""
    q = _quant_references()
    family, names, activation = q.OPS[op["name"]]
    fam = q.FAMILIES[family]
    if contract not in fam["contracts"]:
        raise Refused("op %s has no torch reference of contract %s (%s)"
                      % (op["name"], contract, ", ".join(fam["contracts"])))
    ref = fam["contracts"][contract]
    if ref is q.nvfp4_rcp_approx_cuda:
        if importlib.util.find_spec("cupy") is None:
            raise Unavailable("contract rcp-approx runs as a CuPy kernel (quant_references.py); CuPy is not installed")
    elif not q.has_float8():
        from fuseproof import quant_emulation
        if not quant_emulation.installed():
            raise Unavailable("torch %s has no torch.float8_e4m3fn, which the %s reference casts to (torch 2.1 or "
                              "newer has it)" % (torch.__version__, contract))
    block = fam["block"]
    packed = op["inputs"][0]["layout"] == "packed-first"

    def subject(*args, scale_layout="linear"):
        n = 1 if packed else len(names)
        buffers, scalars = args[:n], args[n:]
        if packed:
            w = buffers[0].shape[-1] // 2
            inputs = (buffers[0][:, :w], buffers[0][:, w:])
        else:
            inputs = tuple(buffers)
        y = activation(*inputs) if activation else inputs[0]
        rows, width = y.shape
        blocks = y.reshape(-1, block)
        if fam["scalar"]:
            codes, scales = ref(blocks, scalars[0].to(torch.float32).reshape(1, 1).expand(blocks.shape[0], 1))
        else:
            codes, scales = ref(blocks)
        scales = scales.reshape(rows, width // block)
        if scale_layout == "swizzled-128x4":
            scales = q.swizzle_blockscale(scales)
        return codes.reshape(rows, width), scales

    subject.__qualname__ = subject.__name__ = "%s_%s_reference" % (op["name"], contract.replace("-", "_"))
    subject.fuseproof_contract = contract
    subject.fuseproof_scale_layouts = tuple(op["scale_layouts"])  # NVFP4: linear and vLLM's swizzle_blockscale
    return subject


def _quant_compiled(op, contract):
    if not hasattr(torch, "compile"):
        raise Unavailable("torch %s has no torch.compile (PyTorch 2.0 or later)" % torch.__version__)
    fn = quant_reference_subject(op, contract)
    _raise_recompile_limit()
    compiled = torch.compile(fn)
    compiled.fuseproof_contract = contract
    compiled.fuseproof_scale_layouts = fn.fuseproof_scale_layouts
    return compiled


# name: (what it is, a factory of a quantization op's spec entry and contract)
QUANT_BUILTIN = {
    "eager": ("the project's torch reference of the contract, eager (python/fuseproof/quant_references.py)",
              quant_reference_subject),
    "torch-compile": ("torch.compile of the project's torch reference of the contract, Inductor default settings",
                      _quant_compiled),
}


# name: (what it is, a factory of the op spec's entry)
BUILTIN = {
    "eager": ("eager PyTorch: the op's eager contract run op by op (python/fuseproof/composition.py)",
              lambda op: eager_subject(op)),
    "torch-compile": ("torch.compile of the eager composition, Inductor default settings",
                      lambda op: _compiled(op, False)),
    "torch-compile-emulated": ("torch.compile of the eager composition, "
                               "torch._inductor.config.emulate_precision_casts = True",
                               lambda op: _compiled(op, True)),
    "torch-compile-reduce-overhead": ("torch.compile of the eager composition, mode=\"reduce-overhead\" (Inductor "
                                      "with CUDA graphs)", lambda op: _compiled(op, False, mode="reduce-overhead")),
    "torch-cuda-graph": ("the eager composition captured per shape with torch.cuda.graph and replayed with each "
                         "call's inputs copied in", _cuda_graph),
    "triton": ("a Triton kernel of the op that rounds where eager rounds (python/fuseproof/triton_ops.py)", _triton),
    "triton-fma": ("a Triton kernel of the op's fma contract: one tl.fma in binary32, rounded once; claims contract "
                   "fma (python/fuseproof/triton_ops.py)", lambda op: _triton(op, "fma")),
    "triton-fp-fusion": ("the DiT ops' eager Triton kernel with Triton's default enable_fp_fusion=True: the casts "
                         "stay, yet LLVM shrinks the product to a half multiply and fuses it with the sum into one "
                         "half fma (a known-bad kernel: docs/SUBJECTS.md)", lambda op: _triton(op, fp_fusion=True)),
}

# The subjects that run the eager composition itself: judged against a contract that eager PyTorch cannot express
# (fma), they are refused; the fma contract is judged for kernels that claim it (triton-fma, a plugin).
_EAGER_COMPOSITION = ("eager", "torch-cuda-graph")


def builtin(name, op, contract=None):
    """(description, fn) of a built-in subject for the op (its spec entry), to be judged against `contract` (None:
    the subject's own claim); raises Unavailable, Refused (one line), or KeyError."""
    if op.get("quant"):
        if name not in QUANT_BUILTIN:
            raise Refused("subject %s has no form for quantization op %s (%s)"
                          % (name, op["name"], ", ".join(QUANT_BUILTIN)))
        description, make = QUANT_BUILTIN[name]
        return description, make(op, contract if contract is not None else op["contracts"][0]["name"])
    description, make = BUILTIN[name]
    if name in _EAGER_COMPOSITION and contract is not None:
        c = [c for c in op["contracts"] if c["name"] == contract]
        why = eager_expressible(c[0]) if c else ""
        if why:
            raise Refused("subject %s cannot be judged against contract %s of %s: %s; the %s contract is judged for "
                          "kernels that claim it (--subject triton-%s, a plugin)"
                          % (name, contract, op["name"], why, contract, contract))
    return description, make(op)


def load_callable(spec):
    """The function named by MODULE:FUNCTION (FUNCTION may be dotted); ValueError with one line when it is not there."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError("--callable must be MODULE:FUNCTION, got %s" % spec)
    try:
        obj = importlib.import_module(module)
    except SystemExit as e:
        raise ValueError("--callable %s: importing '%s' exited with %s before the audit ran"
                         % (spec, module, exit_words(e.code)))
    except Exception as e:
        text = str(e).strip().splitlines()
        raise ValueError("--callable %s: cannot import %s: %s" % (spec, module, type(e).__name__ +
                                                                   (": " + text[0] if text else "")))
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ValueError("--callable %s: %s has no attribute %s" % (spec, module, name))
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError("--callable %s: %s is not callable" % (spec, type(obj).__name__))
    return obj


def takes_out(fn, n_buffers=2):
    """True for fn(*buffers, out) -> None (one required positional parameter more than the op's buffers)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in sig.parameters.values() if p.kind in positional and p.default is inspect.Parameter.empty]
    return len(required) == n_buffers + 1


def importable_name(fn):
    """MODULE:QUALNAME when a fresh process can import fn again (for fault isolation), else None."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    try:
        return module + ":" + qualname if load_callable(module + ":" + qualname) is fn else None
    except ValueError:
        return None
