"""sys_exit_0: sys.exit(0) at import (what a CI reads as a pass when it ends the audit)."""
import sys

sys.exit(0)


def f(x, bias):
    return x
