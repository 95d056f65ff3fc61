"""A kernel repository's exactness tests, as docs/INTEGRATING.md would have them: one correct callable and one that
skips eager's rounding of x + bias. The ctest that runs this file expects 1 passed, 1 failed, and the failure's
records."""

import pytest

from cpu_subjects import correct, unrounded
from fuseproof.testing import assert_exact


@pytest.mark.fuseproof
def test_correct_kernel():
    assert_exact(correct, op="bias_gelu_tanh", dtype="bf16", device="cpu", only="extreme")


@pytest.mark.fuseproof
def test_unrounded_kernel():
    assert_exact(unrounded, op="bias_gelu_tanh", dtype="bf16", device="cpu", only="extreme")
