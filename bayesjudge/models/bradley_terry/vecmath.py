"""Branch-free exp / log in numba that LLVM vectorises (AVX2): the BT kernels' arithmetic.

libm's exp and log1p are opaque calls that keep a loop scalar; these polynomials
are plain arithmetic, so a loop over cells runs 4 doubles per instruction.
Accuracy (``tests/test_bt_kernel.py``): softplus / sigmoid built on them are within
2e-15 relative of numpy over [-60, 60]. Compile with ``error_model="numpy"`` (no
ZeroDivisionError branch, which would keep the loop scalar) and without
``reassoc`` fast-math (it would cancel the rounding trick of :func:`exp_nonpositive`).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["exp_nonpositive", "jit", "log1p_unit", "log_positive"]

_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two (Cody & Waite): exact k * LN2_HI
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.4426950408889634
_LN2 = 0.6931471805599453
_ROUND = 6755399441055744.0  # 1.5 * 2^52: y + _ROUND rounds y to an integer in the low bits


@intrinsic
def _bits_to_float(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _float_to_bits(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


# error_model="numpy": no ZeroDivisionError branch, which would stop vectorisation;
# no fastmath: reassociation would cancel the rounding trick in exp_nonpositive.
jit = numba.njit(error_model="numpy", fastmath={"contract"}, cache=True)
inline = numba.njit(error_model="numpy", fastmath={"contract"}, inline="always", cache=True)


@inline
def exp_nonpositive(y):
    """exp(y) for y <= 0 (y below -708 is treated as -708, e^-708 ~ 3e-308).

    y = k ln 2 + r with |r| <= ln(2) / 2, exp(r) by its Taylor polynomial of degree
    13 (truncation < 5e-18 relative), 2^k assembled in the exponent bits.
    """
    y = max(y, -708.0)
    t = y * _INV_LN2 + _ROUND
    k = t - _ROUND
    r = (y - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * _bits_to_float((_float_to_bits(t) + 1023) << 52)


@inline
def _atanh_series(s2):
    """(atanh(s) / s) for s^2 = s2 <= 0.0295 (|s| <= 3 - 2 sqrt 2): terms to s^22, < 1e-20."""
    q = 1.0 / 23.0
    q = q * s2 + 1.0 / 21.0
    q = q * s2 + 1.0 / 19.0
    q = q * s2 + 1.0 / 17.0
    q = q * s2 + 1.0 / 15.0
    q = q * s2 + 1.0 / 13.0
    q = q * s2 + 1.0 / 11.0
    q = q * s2 + 1.0 / 9.0
    q = q * s2 + 1.0 / 7.0
    q = q * s2 + 1.0 / 5.0
    q = q * s2 + 1.0 / 3.0
    return q * s2 + 1.0


@inline
def log1p_unit(e):
    """log1p(e) for 0 <= e <= 1, branch-free.

    log1p(e) = 2 atanh(s) with s = e / (2 + e); above sqrt(2) - 1 first
    log1p(e) = ln 2 + log1p((e - 1) / 2), so |s| <= 0.1716.
    """
    h = max(np.copysign(1.0, e - 0.41421356237309503), 0.0)  # 1 above sqrt(2) - 1, else 0
    t = h * ((e - 1.0) * 0.5) + (1.0 - h) * e
    s = t / (2.0 + t)
    return 2.0 * s * _atanh_series(s * s) + h * _LN2


@inline
def log_positive(y):
    """log(y) for finite y >= 1 (y = 2^k m, m in [sqrt(1/2), sqrt(2)), series in s as above)."""
    bits = _float_to_bits(y)
    k = _bits_to_float((bits >> 52) | 0x4330000000000000) - 4503599627370496.0 - 1023.0
    m = _bits_to_float((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    h = max(np.copysign(1.0, m - 1.4142135623730951), 0.0)
    m = m * (1.0 - 0.5 * h)
    k = k + h
    s = (m - 1.0) / (m + 1.0)
    return k * _LN2_HI + (k * _LN2_LO + 2.0 * s * _atanh_series(s * s))
