"""JAX translations of the fused Bradley-Terry / Davidson likelihood Ops (GPU NUTS).

PyMC's JAX samplers (``sampler="numpyro"`` / ``"blackjax"``, the ``gpu`` extra) turn
the model graph into JAX; :class:`~bayesjudge.models.bradley_terry.kernel.BTLoglik` and
:class:`~bayesjudge.models.bradley_terry.kernel.DavidsonLoglik` are numba kernels, so they need
a JAX body of their own. The kernel module registers them with the engine
(``register(BTLoglik, DavidsonLoglik)``), so this module imports neither. Each computes
the same cell sum with ``jax.numpy``
(vectorised gathers, ``softplus`` / ``logsumexp``; what a GPU does well) and its
gradient outputs by JAX autodiff of that sum:

* BT: :math:`\\ell = \\sum_c w_c x_c - n_c \\operatorname{softplus}(x_c)`,
  :math:`x_c = d_{p(c)} s_{k(c)}`;
* Davidson: :math:`\\ell = \\sum_c \\tfrac12 x_c (n^L_c - n^R_c) + n^T_c t_c -
  n_c \\log(e^{x_c/2} + e^{-x_c/2} + e^{t_c})`,
  :math:`x_c = d_{p(c)} s_{k(c)} + b_{j(c)}`.

Registered on first use (:func:`register`), so importing bayesjudge never imports JAX.
Equal to the numba kernels to 1e-10 (``tests/test_samplers.py``).
"""

from __future__ import annotations

from functools import cache

__all__ = ["register"]


@cache
def register(bt_op: type, davidson_op: type) -> None:
    """Teach PyTensor's JAX backend the two fused Ops (idempotent).

    Parameters
    ----------
    bt_op, davidson_op : type
        The Op classes :class:`~bayesjudge.models.bradley_terry.kernel.BTLoglik` and
        :class:`~bayesjudge.models.bradley_terry.kernel.DavidsonLoglik`.
    """
    import jax
    import jax.numpy as jnp
    from pytensor.link.jax.dispatch import jax_funcify

    def bt_total(d, scale, pair, col, win, n):
        x = d[pair] * scale[col]
        return jnp.sum(win * x - n * jax.nn.softplus(x))

    def davidson_total(d, scale, bias, tie, pair, col, bcol, tcol, n_left, n_tie, n_right):
        x = d[pair] * scale[col] + bias[bcol]
        t = tie[tcol]
        log_z = jax.nn.logsumexp(jnp.stack([0.5 * x, -0.5 * x, t]), axis=0)
        n = n_left + n_tie + n_right
        return jnp.sum(0.5 * x * (n_left - n_right) + n_tie * t - n * log_z)

    def fused(total, n_params):
        value_and_grad = jax.value_and_grad(total, argnums=tuple(range(n_params)))

        def fn(*inputs):
            value, grads = value_and_grad(*inputs)
            return (value, *grads)

        return fn

    @jax_funcify.register(bt_op)
    def _jax_bt(op, **kwargs):
        return fused(bt_total, bt_op.n_params)

    @jax_funcify.register(davidson_op)
    def _jax_davidson(op, **kwargs):
        return fused(davidson_total, davidson_op.n_params)
