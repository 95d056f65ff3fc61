"""raise_system_exit: raise SystemExit at import."""
raise SystemExit


def f(x, bias):
    return x
