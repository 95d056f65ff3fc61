"""fine: imports cleanly (the control of the probe); f is not a bias_gelu_tanh."""


def f(x, bias):
    return x
