"""os_exit_0: os._exit(0) at import (no SystemExit to catch)."""
import os

os._exit(0)


def f(x, bias):
    return x
