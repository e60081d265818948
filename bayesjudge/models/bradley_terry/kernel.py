"""The Bradley-Terry cell log-likelihood as one fused PyTensor Op with a numba kernel.

Soft / hard BT and BT-sigma (Qian, Sun, Gales & Knill (2026), "Who can we trust?
LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610, eqs. 2, 11, 13) sum,
over cells c (one per distinct context, aspect, left, right, judge),

.. math::

    \\ell = \\sum_c w_c x_c - n_c \\operatorname{softplus}(x_c), \\qquad
    x_c = d_{p(c)} \\, r_{k(c)}

with d_p the skill difference of pair p, r_k = 1/sigma_k the judge's scale
(1 without discriminators), w_c the win mass and n_c the rows of the cell.
Written with PyTensor's elementwise ops, the cost at SummEval scale (96,000
cells) is the transcendental functions and the cell-sized temporaries:
``softplus`` (an exp and a log1p from libm per cell) in the value, ``sigmoid``
(another exp) in the gradient. :class:`BTLoglik` computes the value and both
gradients in one pass over the cells, in blocks small enough to stay in cache,
with exp and log1p evaluated by branch-free polynomials that LLVM vectorises
(AVX2; ``models/bradley_terry/vecmath.py``), relative error <= 2e-15 against numpy
(``tests/test_bt_kernel.py``). Per log density + gradient on 96,000 cells: see
``benchmarks/README.md``.

The same compiled kernel serves the numba backend (nutpie) and, through
``perform``, PyTensor's C backend (MAP).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_undefined
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import register_funcify_default_op_cache_key

from bayesjudge.engine import samplers
from bayesjudge.models.bradley_terry.kernel_jax import register as register_jax
from bayesjudge.models.bradley_terry.vecmath import exp_nonpositive, jit, log1p_unit, log_positive

__all__ = ["BTLoglik", "DavidsonLoglik", "bt_loglik", "davidson_loglik", "log1p_exp_kernel"]

_BLOCK = 512  # cells per block: the block buffers stay in L1


@jit
def log1p_exp_kernel(x, softplus, sigmoid):
    """softplus(x) = log(1 + e^x) and sigmoid(x) into the output arrays (for tests)."""
    for i in range(x.size):
        v = x[i]
        e = exp_nonpositive(-abs(v))
        h = max(np.copysign(1.0, v), 0.0)
        softplus[i] = max(v, 0.0) + log1p_unit(e)
        sigmoid[i] = (h + (1.0 - h) * e) / (1.0 + e)


@jit
def _bt_cells(x, win, n, term, coef):
    """Per cell: term = w x - n softplus(x) and coef = d term / d x = w - n sigmoid(x).

    A separate function over contiguous slices: this simple loop is what LLVM
    vectorises (written inline in the blocked loop with offset indices it ran
    2-3x slower).
    """
    for i in range(x.size):
        v = x[i]
        e = exp_nonpositive(-abs(v))
        h = max(np.copysign(1.0, v), 0.0)
        term[i] = win[i] * v - n[i] * (max(v, 0.0) + log1p_unit(e))
        coef[i] = win[i] - n[i] * (h + (1.0 - h) * e) / (1.0 + e)


@jit
def _bt_kernel(d, scale, pair, col, win, n):
    """(loglik, d loglik / d d, d loglik / d scale) summed over the cells."""
    grad_d = np.zeros(d.size)
    grad_scale = np.zeros(scale.size)
    x, term, coef = np.empty(_BLOCK), np.empty(_BLOCK), np.empty(_BLOCK)
    total = 0.0
    for start in range(0, win.size, _BLOCK):
        m = min(_BLOCK, win.size - start)
        stop = start + m
        for i in range(m):  # gathers
            x[i] = d[pair[start + i]] * scale[col[start + i]]
        _bt_cells(x[:m], win[start:stop], n[start:stop], term[:m], coef[:m])
        for i in range(m):  # sums and scatter-adds
            c = start + i
            total += term[i]
            grad_d[pair[c]] += coef[i] * scale[col[c]]
            grad_scale[col[c]] += coef[i] * d[pair[c]]
    return total, grad_d, grad_scale


@jit
def _davidson_cells(x, tie, nu, n_left, n_tie, n_right, term, gx, gt):
    """Per cell: the Davidson log-likelihood term and its derivatives in x and tie
    (see :func:`_davidson_kernel`); a simple loop over slices, as :func:`_bt_cells`."""
    for i in range(x.size):
        v = x[i]
        half = 0.5 * abs(v)
        u = exp_nonpositive(-half)
        z = 1.0 + u * u + nu[i] * u
        diff = n_left[i] - n_right[i]
        n = n_left[i] + n_tie[i] + n_right[i]
        term[i] = 0.5 * v * diff + n_tie[i] * tie[i] - n * (half + log_positive(z))
        gx[i] = 0.5 * diff - n * 0.5 * np.copysign(1.0, v) * (1.0 - u * u) / z
        gt[i] = n_tie[i] - n * nu[i] * u / z


@jit
def _davidson_kernel(d, scale, bias, tie, pair, col, bcol, tcol, n_left, n_tie, n_right):
    """Davidson log-likelihood summed over cells, and its gradient in d, scale, bias, tie.

    x = d[pair] scale[col] + bias[bcol], nu = e^tie[tcol], u = e^{-|x|/2}:
    log(e^{x/2} + e^{-x/2} + nu) = |x|/2 + log(1 + u^2 + nu u), and
    d/dx = sign(x) (1 - u^2) / (2 (1 + u^2 + nu u)), d/dtie = nu u / (1 + u^2 + nu u).
    """
    grad = (np.zeros(d.size), np.zeros(scale.size), np.zeros(bias.size), np.zeros(tie.size))
    nu = np.exp(tie)
    x, tv, nv = np.empty(_BLOCK), np.empty(_BLOCK), np.empty(_BLOCK)
    term, gx, gt = np.empty(_BLOCK), np.empty(_BLOCK), np.empty(_BLOCK)
    total = 0.0
    for start in range(0, n_left.size, _BLOCK):
        m = min(_BLOCK, n_left.size - start)
        stop = start + m
        for i in range(m):  # gathers
            c = start + i
            x[i] = d[pair[c]] * scale[col[c]] + bias[bcol[c]]
            tv[i] = tie[tcol[c]]
            nv[i] = nu[tcol[c]]
        _davidson_cells(x[:m], tv[:m], nv[:m], n_left[start:stop], n_tie[start:stop],
                        n_right[start:stop], term[:m], gx[:m], gt[:m])
        for i in range(m):  # sums and scatter-adds
            c = start + i
            total += term[i]
            grad[0][pair[c]] += gx[i] * scale[col[c]]
            grad[1][col[c]] += gx[i] * d[pair[c]]
            grad[2][bcol[c]] += gx[i]
            grad[3][tcol[c]] += gt[i]
    return total, grad[0], grad[1], grad[2], grad[3]


@jit
def _bt_kernel_0d(*args):
    """:func:`_bt_kernel` with the total as a 0-d array (the numba backend's scalars)."""
    total, g1, g2 = _bt_kernel(*args)
    out = np.empty(())
    out[()] = total
    return out, g1, g2


@jit
def _davidson_kernel_0d(*args):
    """:func:`_davidson_kernel` with the total as a 0-d array."""
    total, g1, g2, g3, g4 = _davidson_kernel(*args)
    out = np.empty(())
    out[()] = total
    return out, g1, g2, g3, g4


class _FusedLoglik(Op):
    """A log-likelihood summed over cells with its gradient as extra outputs.

    Inputs: ``n_params`` float vectors (differentiable), ``n_index`` int index
    vectors, then float data vectors. Outputs: the total, then the gradient with
    respect to each parameter input. Only the total is meant to be used in a
    graph; its gradient is the Op's own outputs (no second derivatives: the
    Laplace Hessian is taken by finite differences of the gradient).
    """

    __props__ = ()
    n_params = 0
    n_index = 0
    kernel = None

    def make_node(self, *args):
        p, k = self.n_params, self.n_index
        inputs = [pt.cast(pt.as_tensor_variable(v), "int64" if p <= i < p + k else "float64")
                  for i, v in enumerate(args)]
        return Apply(self, inputs, [pt.dscalar()] + [pt.dvector() for _ in range(p)])

    def perform(self, node, inputs, outputs):
        for slot, value in zip(outputs, type(self).kernel(*inputs)):
            slot[0] = np.asarray(value)

    def pullback(self, inputs, outputs, output_grads):
        if not all(isinstance(g.type, DisconnectedType) for g in output_grads[1:]):
            raise NotImplementedError(f"{type(self).__name__} has no second derivatives; use "
                                      f"finite differences of its gradient.")
        p, k = self.n_params, self.n_index
        return ([output_grads[0] * g for g in outputs[1:]]
                + [DisconnectedType()() for _ in range(k)]
                + [grad_undefined(self, i, inputs[i]) for i in range(p + k, len(inputs))])

    def connection_pattern(self, node):
        p, k = self.n_params, self.n_index
        n_out = 1 + p
        return ([[True] * n_out] * p + [[False] * n_out] * k
                + [[True] + [False] * p] * (len(node.inputs) - p - k))


class BTLoglik(_FusedLoglik):
    """``(loglik, grad_d, grad_scale) = BTLoglik()(d, scale, pair, col, win, n)``."""

    n_params, n_index, kernel = 2, 2, _bt_kernel


class DavidsonLoglik(_FusedLoglik):
    """``(loglik, grads...) = DavidsonLoglik()(d, scale, bias, tie, pair, col, bcol, tcol,
    n_left, n_tie, n_right)``; gradients in d, scale, bias, tie."""

    n_params, n_index, kernel = 4, 4, _davidson_kernel


@register_funcify_default_op_cache_key(BTLoglik)
def _numba_bt_loglik(op, node=None, **kwargs):
    return _bt_kernel_0d


@register_funcify_default_op_cache_key(DavidsonLoglik)
def _numba_davidson_loglik(op, node=None, **kwargs):
    return _davidson_kernel_0d


# PyMC's JAX samplers (GPU NUTS) get a jax.numpy body of both Ops (kernel_jax), registered
# with the engine here, so that neither the engine nor kernel_jax imports this module.
samplers.JAX_REGISTRATIONS.append(partial(register_jax, BTLoglik, DavidsonLoglik))


def bt_loglik(d, scale, pair, col, win, n):
    """Symbolic BT log-likelihood summed over cells (see the module docstring)."""
    return BTLoglik()(d, scale, pair, col, win, n)[0]


def davidson_loglik(d, scale, bias, tie, pair, col, bcol, tcol, n_left, n_tie, n_right):
    """Symbolic Davidson log-likelihood summed over cells (:func:`_davidson_kernel`)."""
    return DavidsonLoglik()(d, scale, bias, tie, pair, col, bcol, tcol,
                            n_left, n_tie, n_right)[0]
