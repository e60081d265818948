"""Soft / hard Bradley-Terry and the judge-aware BT-sigma of an LLM jury.

Implements sections 3-4 of Qian, Sun, Gales & Knill (2026), "Who can we trust?
LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610: the Bradley-Terry
model on hard outcomes or soft probabilities (eqs. 1-2, 11), the debiasing step
eq. 3 (:func:`~bayesjudge.data.symmetrization.symmetrize`, applied by default), and
BT-sigma, one discriminator sigma_k per judge (eq. 13; per judge and aspect:
BT-sigma-asp). Davidson's tie model with the same discriminators and a
positional bias is :class:`~bayesjudge.models.bradley_terry.davidson_bt.DavidsonBT`.
"""

from __future__ import annotations

from typing import Literal

import pymc as pm

from bayesjudge.base import FitData
from bayesjudge.models.bradley_terry.base import PairwiseModel
from bayesjudge.models.bradley_terry.discriminator_check import DiscriminatorChecks
from bayesjudge.models.bradley_terry.kernel import bt_loglik
from bayesjudge.priors import Prior

__all__ = ["BTSigma", "BradleyTerry"]


class BradleyTerry(PairwiseModel):
    r"""Bradley-Terry ranking from soft probabilities or hard outcomes (eqs. 1-2, 11).

    .. math::

        P(i \succ j) = \sigma(s_i - s_j)                                       \quad (1)

        \log L(s) = \sum_{cells} w_{ij} \log\sigma(s_i - s_j)
                    + (n_{ij} - w_{ij}) \log\sigma(s_j - s_i)              \quad (2, 11)

    where a cell is one (context, aspect, left, right, judge) with n_ij rows;
    ``kind="soft"``: w_ij is the sum of the rows' probabilities p_ij (the
    cross-entropy likelihood of eq. 2; summed over judges it is eq. 11, i.e.
    soft BT of the judges' average probability, eq. 12); ``kind="hard"``: w_ij
    counts left wins, a tie counting half a win for each side (the usual
    convention; its likelihood is that of the tie observed as one win each way
    with weight 1/2), and soft probabilities are first turned into outcomes,
    left if p > 0.5, right if p < 0.5, tie if p = 0.5.

    Skills are per (context, aspect, item): items are compared only within a
    context and an aspect. Identification: the skills sum to zero within each
    ranking group (context x aspect); the free coordinates are an orthonormal
    basis of that subspace, so the default prior is exactly
    ``ZeroSumNormal(sigma=3)`` per group (ragged groups allowed).

    A Chatbot Arena export (``model_a``, ``model_b``, ``winner``) and a table
    without a ``judge`` column (one judge, ``"(one judge)"``) are read as they are;
    other names and labels: :func:`bayesjudge.data.arena.comparisons_table`.

    Parameters
    ----------
    kind : {"soft", "hard"}
        Likelihood of the probabilities (soft BT) or of the outcomes (hard BT).
    symmetrize : bool
        Apply eq. 3 to pairs judged in both orders before fitting (the paper's
        default); pairs judged in one order only are used as they are. Every row
        stays an observation: a symmetrised pair weighs the rows of both orders
        (:func:`~bayesjudge.data.symmetrization.symmetrize`), so with as many
        judgments in each order the fit is the same with and without it; it
        differs when one order was judged more often (eq. 3 weighs the two
        orders' mean probabilities equally) and for ``kind="hard"`` on
        probabilities (p' is thresholded, as in the paper).
    priors : None, "flat" or dict
        Overrides of :attr:`default_priors` by name; ``"flat"`` gives the
        maximum-likelihood fit under MAP. Defaults::

            skill  Prior('Normal', mu=0, sigma=3)   orthonormal zero-sum coordinates of s

    random_seed : int
        Seeds NUTS and the Laplace draws.

    Attributes
    ----------
    idata_ : xarray.DataTree
        ``skill`` (dims ``([aspect,] [context,] item)`` when every item occurs in
        every group, else ``cell``; :meth:`ranking` names the cells),
        ``skill_z`` (free coordinates). ``log_likelihood["comparison"]`` is per
        cell (pooled into at most 4096 units, cell index modulo 4096, for big data).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"judge": ["j1"] * 4, "left": ["a", "b", "c", "a"],
    ...                       "right": ["b", "c", "a", "c"], "prob": [0.8, 0.7, 0.3, 0.6]})
    >>> model = BradleyTerry(symmetrize=False).fit(table)
    >>> model.ranking()["item"].tolist()
    ['a', 'b', 'c']
    """

    default_priors = {"skill": Prior("Normal", mu=0, sigma=3)}

    def __init__(
        self,
        kind: Literal["soft", "hard"] = "soft",
        symmetrize: bool = True,
        priors: None | str | dict = None,
        random_seed: int | None = 0,
    ):
        self.kind = kind
        self.symmetrize = symmetrize
        self.priors = priors
        self.random_seed = random_seed

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        return ("skill",)

    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        with pm.Model(coords=fd.coords) as model:
            diff, scale = self._cell_graph(fd, priors, model)
            pm.Potential("loglik", bt_loglik(diff, scale, model["cell_pair"], model["cell_col"],
                                             model["win"], model["n"]))
        return model


class BTSigma(DiscriminatorChecks, PairwiseModel):
    r"""BT-sigma: Bradley-Terry with one discriminator per judge (eq. 13).

    .. math::

        P_k(i \succ j) = \sigma\!\left(\frac{s_i - s_j}{\sigma_k}\right)      \quad (13)

    with the soft (cross-entropy) or hard likelihood of :class:`BradleyTerry`
    per judge. A small sigma_k is a sharp, consistent judge; 1/sigma_k is its
    reliability (:meth:`judges`). ``per_aspect=True`` gives BT-sigma-asp, one
    sigma per (judge, aspect); ``kind="hard"`` is hard BT-sigma.

    Identification: skills sum to zero per ranking group (context x aspect),
    and the scale shared by skills and discriminators (s / c, sigma / c leave
    eq. 13 unchanged) is fixed by :math:`\sum_k \log\sigma_k = 0` (per aspect
    with ``per_aspect=True``): sigma_k is relative to the jury's geometric mean.
    With one judge sigma = 1 (the model is soft/hard BT).

    Default priors: log sigma_k = tau z_k with z zero-sum over judges (its free
    coordinates iid N(0, 1), i.e. ``ZeroSumNormal(1)``) and tau ~ HalfNormal(1):
    a non-centred hierarchy that pools the judges' log sigma towards their
    (zero) mean, so a judge with three comparisons gets a sigma near the jury's
    instead of 0 or infinity, and a judge who called every comparison a tie
    (or said p = 0.5 throughout; the data alone push its sigma to infinity) gets
    its sigma from the prior, with a UserWarning naming it (under ``priors="flat"``
    such a judge is refused). ``priors="flat"`` drops tau (log sigma = z, flat):
    the MAP is the maximum-likelihood estimate of eq. 13 under the constraints
    above. NUTS samples the same prior in its centred form (log sigma ~
    ZeroSumNormal(tau); ``discriminator_offset`` is then tau z), which has no
    divergent ridge when the data pin the sigmas down, unless a pilot MAP fit shows
    the judges' spread within 3 standard errors of their log sigma (agreeing judges:
    a funnel at tau -> 0), where it stays non-centred at target_accept 0.9
    (:mod:`~bayesjudge.models.bradley_terry.centring`); MAP keeps the non-centred
    form, whose mode does not collapse to tau = 0 on small juries.

    Parameters
    ----------
    kind : {"soft", "hard"}
        Soft BT-sigma (probabilities) or hard BT-sigma (outcomes).
    per_aspect : bool
        One discriminator per judge and aspect (needs an ``aspect`` column).
    symmetrize : bool
        Apply eq. 3 to pairs judged in both orders (default, as the paper; every
        row still counts, see :class:`BradleyTerry`).
    priors : None, "flat" or dict
        Overrides of :attr:`default_priors` by name. Defaults::

            skill                 Prior('Normal', mu=0, sigma=3)   zero-sum coordinates of s
            discriminator_offset  Prior('Normal', mu=0, sigma=1)   zero-sum coordinates of z
            discriminator_spread  Prior('HalfNormal', sigma=1)     tau, sd of log sigma_k

    random_seed : int
        Seeds NUTS and the Laplace draws.

    Attributes
    ----------
    idata_ : xarray.DataTree
        ``skill`` (as :class:`BradleyTerry`), ``discriminator`` (sigma_k, dims
        ``judge`` or ``(judge, aspect)``), ``discriminator_spread`` (tau),
        ``discriminator_offset``, ``skill_z`` (free coordinates).

    Examples
    --------
    >>> model = BTSigma().fit(*BTSigma.example_data().fit_args)
    >>> model.judges()["judge"].tolist()
    ['judge-a', 'judge-b', 'judge-c']
    """

    default_priors = {
        "skill": Prior("Normal", mu=0, sigma=3),
        "discriminator_offset": Prior("Normal", mu=0, sigma=1),
        "discriminator_spread": Prior("HalfNormal", sigma=1),
    }

    def __init__(
        self,
        kind: Literal["soft", "hard"] = "soft",
        per_aspect: bool = False,
        symmetrize: bool = True,
        priors: None | str | dict = None,
        random_seed: int | None = 0,
    ):
        self.kind = kind
        self.per_aspect = per_aspect
        self.symmetrize = symmetrize
        self.priors = priors
        self.random_seed = random_seed

    def _has_discriminators(self) -> bool:
        return True

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        return ("skill", "discriminator") if self._sigma_estimated() else ("skill",)

    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        with pm.Model(coords=fd.coords) as model:
            # x = (s_i - s_j) / sigma_k per cell
            diff, scale = self._cell_graph(fd, priors, model)
            pm.Potential("loglik", bt_loglik(diff, scale, model["cell_pair"], model["cell_col"],
                                             model["win"], model["n"]))
        return model
