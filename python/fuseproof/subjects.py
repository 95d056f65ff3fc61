"""subjects.py: the built-in subjects (--subject NAME) and the loader of --callable MODULE:FUNCTION."""

import importlib
import inspect

import torch
import torch.nn.functional as F

from fuseproof import Unavailable


def eager(x, bias):
    """PyTorch's own eager op: one bf16/fp16 add (rounds the sum), then GELU(tanh)."""
    return F.gelu(x + bias, approximate="tanh")


def _raise_recompile_limit():
    # Every check class calls the op at many shapes; past Dynamo's recompile limit (8 by default) torch.compile falls
    # back to eager without a word, and the audit would check eager instead. Raising the limit keeps every call
    # compiled; Inductor's code generation is untouched.
    import torch._dynamo.config as dc
    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(dc, name):
            setattr(dc, name, max(getattr(dc, name), 4096))


def _compiled(emulate_precision_casts):
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

    def bias_gelu_tanh(x, bias):
        return F.gelu(x + bias, approximate="tanh")

    return torch.compile(bias_gelu_tanh)


def _triton():
    try:
        import triton  # noqa: F401
    except ImportError:
        raise Unavailable("Triton is not installed")
    from fuseproof.triton_bias_gelu import bias_gelu_tanh
    return bias_gelu_tanh


BUILTIN = {
    "eager": ("eager gelu(x + bias, approximate=\"tanh\")", lambda: eager),
    "torch-compile": ("torch.compile of gelu(x + bias), Inductor default settings", lambda: _compiled(False)),
    "torch-compile-emulated": ("torch.compile of gelu(x + bias), torch._inductor.config.emulate_precision_casts = True",
                               lambda: _compiled(True)),
    "triton": ("the Triton kernel python/fuseproof/triton_bias_gelu.py (rounds the sum)", _triton),
}


def builtin(name):
    """(description, fn) of a built-in subject; raises Unavailable, or KeyError for an unknown name."""
    description, make = BUILTIN[name]
    return description, make()


def load_callable(spec):
    """The function named by MODULE:FUNCTION (FUNCTION may be dotted); ValueError with one line when it is not there."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError("--callable must be MODULE:FUNCTION, got %s" % spec)
    try:
        obj = importlib.import_module(module)
    except Exception as e:
        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError("--callable %s: cannot import %s: %s" % (spec, module, why))
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ValueError("--callable %s: %s has no attribute %s" % (spec, module, name))
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError("--callable %s: %s is not callable" % (spec, type(obj).__name__))
    return obj


def takes_out(fn):
    """True for fn(x, bias, out) -> None (three required positional parameters), False for fn(x, bias) -> out."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in sig.parameters.values() if p.kind in positional and p.default is inspect.Parameter.empty]
    return len(required) == 3


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
