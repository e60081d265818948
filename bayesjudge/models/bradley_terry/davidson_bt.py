"""Davidson's tie model for pairwise comparisons, judge-aware and position-aware.

Extends the Bradley-Terry family of Qian, Sun, Gales & Knill (2026), "Who can we
trust? LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610 (eq. 13,
judge discriminators) to outcomes with ties by Davidson (1970), "On extending the
Bradley-Terry model to accommodate ties in paired comparison experiments", JASA
65:317-328, and adds a per-judge positional bias: the model-based alternative to
the paper's symmetrisation (eq. 3) that also works when each pair was judged in
one order only.
"""

from __future__ import annotations

from typing import Literal

import pymc as pm
import pytensor.tensor as pt

from bayesjudge.base import FitData
from bayesjudge.models.bradley_terry.base import PairwiseModel
from bayesjudge.models.bradley_terry.discriminator_check import DiscriminatorChecks
from bayesjudge.models.bradley_terry.kernel import davidson_loglik
from bayesjudge.priors import Prior

__all__ = ["DavidsonBT"]


class DavidsonBT(DiscriminatorChecks, PairwiseModel):
    r"""Bradley-Terry with Davidson ties, optional discriminators and positional bias.

    With :math:`\pi = e^{s}` and margin :math:`d = (s_i - s_j)/\sigma_k + b_k`:

    .. math::

        P(i \succ j) = \frac{\pi_i}{\pi_i + \pi_j + \nu\sqrt{\pi_i\pi_j}}
                     = \frac{e^{d/2}}{e^{d/2} + e^{-d/2} + \nu}, \qquad
        P(\text{tie}) = \frac{\nu}{e^{d/2} + e^{-d/2} + \nu}

    (Davidson 1970). ``tie_logit`` = log nu, global or one per judge
    (``tie="per_judge"``); ``discriminators=True`` divides the skill difference
    by BT-sigma's sigma_k (eq. 13 of Qian et al.); ``position_bias=True`` adds
    b_k, judge k's logit-scale preference for the item shown on the left.
    Outcomes are ``left`` / ``tie`` / ``right`` (any letter case, surrounding
    spaces ignored); a soft table is read as
    outcomes (p > 0.5 left, p = 0.5 tie, p < 0.5 right). A Chatbot Arena export
    (``model_a``, ``model_b``, ``winner``; both ties are ties) and a table without
    a ``judge`` column (one judge, ``"(one judge)"``) are read as they are; other
    names and labels: :func:`bayesjudge.data.arena.comparisons_table`.

    Identification as :class:`~bayesjudge.models.bradley_terry.bt_sigma.BTSigma`: skills
    sum to zero per ranking group (context x aspect), and with discriminators
    sum_k log sigma_k = 0. b_k is identified by the pairs a judge saw with each
    item on the left; with every pair judged in one order only it is identified
    through the other pairs sharing its items (in a complete one-order design,
    by the skills' transitivity).

    ``symmetrize`` defaults to False. With every verdict counted, eq. 3 on hard
    outcomes turns the reversed order's verdicts around, which gives the same fit
    without a position bias and hides the bias from ``position_bias=True`` (the
    model-based alternative to eq. 3); a soft table is read as the outcomes of
    the thresholded p'.

    Under NUTS the discriminators are sampled centred or non-centred by the data
    (as :class:`~bayesjudge.models.bradley_terry.bt_sigma.BTSigma`'s): PandaLM's
    agreeing jury is sampled non-centred at target_accept 0.9.

    A judge who called every comparison a tie has no finite discriminator
    (``discriminators=True``) or tie parameter (``tie="per_judge"``) in the data
    alone; under the default priors it takes them from the prior, with a
    UserWarning naming it (sparse crowds: a one-vote annotator who said "tie"),
    and under a flat prior on them it is refused.

    Parameters
    ----------
    discriminators : bool
        One sigma_k per judge (judge-aware ties).
    tie : {"global", "per_judge"}
        One tie parameter nu, or one per judge.
    position_bias : bool
        Per-judge bias b_k towards the left slot.
    symmetrize : bool
        Apply eq. 3 to pairs judged in both orders first (default False; every
        row still counts).
    priors : None, "flat" or dict
        Overrides of :attr:`default_priors` by name; ``"flat"`` gives the
        maximum-likelihood fit under MAP (without discriminators it equals the
        Davidson MLE of evalica's ``newman``). Defaults::

            skill                 Prior('Normal', mu=0, sigma=3)   zero-sum coordinates of s
            tie_logit             Prior('Normal', mu=0, sigma=2)   log nu (scalar or per judge)
            discriminator_offset  Prior('Normal', mu=0, sigma=1)   z, log sigma_k = tau z_k
            discriminator_spread  Prior('HalfNormal', sigma=1)     tau, sd of log sigma_k
            position_bias         Prior('Normal', mu=0, sigma=1)   b_k, per judge

    random_seed : int
        Seeds NUTS and the Laplace draws.

    Attributes
    ----------
    idata_ : xarray.DataTree
        ``skill``, ``tie_logit`` (scalar or dims ``judge``), and with the options
        ``discriminator`` (dims ``judge``) and ``position_bias`` (dims ``judge``).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"judge": ["j1"] * 6, "left": ["a", "b", "c", "a", "b", "c"],
    ...                       "right": ["b", "c", "a", "b", "a", "b"],
    ...                       "outcome": ["left", "tie", "right", "tie", "right", "right"]})
    >>> model = DavidsonBT().fit(table)
    >>> model.ranking()["item"].tolist()
    ['a', 'b', 'c']
    """

    default_priors = {
        "skill": Prior("Normal", mu=0, sigma=3),
        "tie_logit": Prior("Normal", mu=0, sigma=2),
        "discriminator_offset": Prior("Normal", mu=0, sigma=1),
        "discriminator_spread": Prior("HalfNormal", sigma=1),
        "position_bias": Prior("Normal", mu=0, sigma=1),
    }
    _ties = True

    def __init__(
        self,
        discriminators: bool = False,
        tie: Literal["global", "per_judge"] = "global",
        position_bias: bool = False,
        symmetrize: bool = False,
        priors: None | str | dict = None,
        random_seed: int | None = 0,
    ):
        self.discriminators = discriminators
        self.tie = tie
        self.position_bias = position_bias
        self.symmetrize = symmetrize
        self.priors = priors
        self.random_seed = random_seed

    def _check_options(self) -> None:
        super()._check_options()
        if self.tie not in ("global", "per_judge"):
            raise ValueError(f"tie must be 'global' or 'per_judge', got {self.tie!r}")
        for name in ("discriminators", "position_bias"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")

    def _prior_names(self) -> tuple[str, ...]:
        self._check_options()
        names = ["skill", "tie_logit"]
        if self.discriminators:
            names += ["discriminator_offset", "discriminator_spread"]
        if self.position_bias:
            names.append("position_bias")
        return tuple(names)

    def _has_discriminators(self) -> bool:
        return self.discriminators

    def _per_judge_tie(self) -> bool:
        return self.tie == "per_judge"

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        names = ["skill", "tie_logit"]
        if self.discriminators and self._sigma_estimated():
            names.append("discriminator")
        if self.position_bias:
            names.append("position_bias")
        return tuple(names)

    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        with pm.Model(coords=fd.coords) as model:
            diff, scale = self._cell_graph(fd, priors, model)  # d = diff * scale (+ bias)
            col = model["cell_col"]
            zero = pt.zeros_like(col)
            bias = (priors["position_bias"].create("position_bias", dims="judge")
                    if self.position_bias else pt.zeros((1,)))
            dims = {"dims": "judge"} if self.tie == "per_judge" else {}
            tie = priors["tie_logit"].create("tie_logit", **dims)
            pm.Potential("loglik", davidson_loglik(
                diff, scale, bias, pt.atleast_1d(tie), model["cell_pair"],
                col if self.discriminators else zero,
                col if self.position_bias else zero, col if self.tie == "per_judge" else zero,
                model["n_left"], model["n_tie"], model["n_right"]))
        return model

    @classmethod
    def example_data(cls, random_seed: int = 0):
        """The soft example of the family turned into outcomes, with ties.

        |logit| < 0.4 becomes a tie, so about a quarter of the comparisons tie.
        """
        example = super().example_data(random_seed)
        table = example.fit_args[0].copy()
        logit = _logit(table.pop("prob").to_numpy())
        table["outcome"] = ["tie" if abs(x) < 0.4 else ("left" if x > 0 else "right")
                            for x in logit]
        return type(example)(fit_args=(table,), predict_args=example.predict_args,
                             id_column=example.id_column, truth=example.truth)


def _logit(p):
    import numpy as np

    return np.log(p) - np.log1p(-p)
