"""Rankings from juries: Bradley-Terry, BT-sigma and Davidson-BT with ties.

Qian, Sun, Gales & Knill (2026), "Who can we trust? LLM-as-a-jury for Comparative
Assessment", arXiv:2602.16610, with Davidson's ties. Modules, from the bottom up:
``vecmath`` (vectorisable exp/log1p), ``kernel`` / ``kernel_jax`` (the fused cell
log-likelihood Ops and their JAX bodies), ``core`` (design of pairs and cells),
``report`` (ranking, judges, predict), ``base`` (:class:`PairwiseModel`), then the models
``bt_sigma`` (:class:`BradleyTerry`, :class:`BTSigma`) and ``davidson_bt``
(:class:`DavidsonBT`), ``ordinal_core`` / ``ordinal`` (:class:`OrdinalBT`, graded
verdicts). Model card: ``models/bradley_terry.md``.
"""

from bayesjudge.models.bradley_terry.base import PairwiseModel
from bayesjudge.models.bradley_terry.bt_sigma import BradleyTerry, BTSigma
from bayesjudge.models.bradley_terry.davidson_bt import DavidsonBT
from bayesjudge.models.bradley_terry.ordinal import OrdinalBT

__all__ = ["BTSigma", "BradleyTerry", "DavidsonBT", "OrdinalBT", "PairwiseModel"]
