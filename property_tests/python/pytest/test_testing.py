"""Tests of fuseproof.testing (run by ctest under Debian's python3-pytest): assert_bitwise_equal is bitwise where
torch.equal is not, each check with its negative control; assert_exact passes a correct callable and fails a wrong
one with its records."""

import pytest
import torch

from fuseproof.testing import SCOPES, assert_bitwise_equal, assert_exact


def bf16(*patterns):
    return torch.tensor(patterns, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)


def test_equal_tensors_pass():
    x = bf16(0x3F80, 0x8000, 0x7FC1, 0x0001)
    assert_bitwise_equal(x, x.clone())


def test_signed_zero_differs_where_torch_equal_says_equal():
    a, b = torch.tensor([0.0, 1.0], dtype=torch.float16), torch.tensor([-0.0, 1.0], dtype=torch.float16)
    assert torch.equal(a, b)
    with pytest.raises(AssertionError, match=r"(?s)1 of 2 elements differ.*\[i=0\] => 0x0000 expected 0x8000 "
                                             r"\(sign of zero\)"):
        assert_bitwise_equal(a, b)


def test_same_nan_passes_where_torch_equal_says_differ():
    a = bf16(0x7FC1)
    assert not torch.equal(a, a.clone())
    assert_bitwise_equal(a, a.clone())


def test_nan_patterns_differ_unless_any():
    a, b = bf16(0x7FC0), bf16(0x7FFF)
    with pytest.raises(AssertionError, match="NaN pattern"):
        assert_bitwise_equal(a, b)
    assert_bitwise_equal(a, b, nan_policy="any")
    with pytest.raises(AssertionError, match="NaN against a number"):  # "any" is about NaNs only
        assert_bitwise_equal(a, bf16(0x3F80), nan_policy="any")


def test_records_name_index_inputs_and_ulps():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3).to(torch.bfloat16)
    z = x.view(torch.int16).clone()
    z[1, 2] += 3
    with pytest.raises(AssertionError, match=r"\[r=1,c=2\] x=0x40A0 => 0x40A0 expected 0x40A3 \(3 ulp\)"):
        assert_bitwise_equal(x, z.view(torch.bfloat16), inputs={"x": x})


def test_count_and_more_line():
    a = torch.zeros(100, dtype=torch.float16)
    with pytest.raises(AssertionError, match=r"(?s)100 of 100 elements differ.*\.\.\. and 92 more"):
        assert_bitwise_equal(a, torch.ones(100, dtype=torch.float16))


def test_shape_and_dtype_checked():
    with pytest.raises(AssertionError, match="shape or dtype differ"):
        assert_bitwise_equal(torch.zeros(2, dtype=torch.float16), torch.zeros(2, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="nan_policy"):
        assert_bitwise_equal(bf16(0), bf16(0), nan_policy="loose")



def test_assert_exact_passes_a_correct_callable():
    from cpu_subjects import correct
    # The exact tanh model: history calls fp16 too, where glibc's tanhf differs from the callable's at 0xB3FE.
    v = assert_exact(correct, op="bias_gelu_tanh", dtype="bf16", device="cpu", math_model="exact")
    assert v and v.status == 0


def test_assert_exact_fails_a_wrong_callable_with_records():
    from cpu_subjects import unrounded
    with pytest.raises(AssertionError, match=r"(?s)FAIL.*first records:.*x=0x[0-9A-F]+ bias=0x[0-9A-F]+ => "
                                             r"0x[0-9A-F]+ expected.*reproduce: python3 -m fuseproof audit"):
        assert_exact(unrounded, op="bias_gelu_tanh", dtype="bf16", device="cpu", only="extreme")


def test_assert_exact_refuses_an_unknown_scope():
    with pytest.raises(ValueError, match="scope"):
        assert_exact(lambda x, b: x, op="bias_gelu_tanh", scope="medium")
    assert set(SCOPES) == {"quick", "full"}
