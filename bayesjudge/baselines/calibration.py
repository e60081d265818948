"""Post-hoc correctors of a probabilistic judge: contextual and batch calibration.

The two inference-time baselines of Section 5.1 of Z. Li, X. Li, C. Huang et al.
(2025), "Judging with Confidence: Calibrating Autoraters to Preference
Distributions", arXiv:2510.00263, for the binary case (class vector
:math:`\\mathbf p(y \\mid x) = (1 - p, p)` with p = P(B better)):

* contextual calibration (Zhao, Wallace, Feng, Klein and Singh 2021, "Calibrate
  Before Use: Improving Few-Shot Performance of Language Models", arXiv:2102.09690):
  :math:`\\hat{\\mathbf p}_{CC} \\propto \\mathbf W \\mathbf p(y \\mid x)` with
  :math:`\\mathbf W = \\mathrm{diag}(\\mathbf p(y \\mid \\text{[N/A]}))^{-1}` from a
  content-free probe;
* batch calibration (Zhou, Wan, Proleev, Mincu, Chen, Heller and Roy 2024, "Batch Calibration:
  Rethinking Calibration for In-Context Learning and Prompt Engineering",
  arXiv:2309.17249): :math:`\\hat{\\mathbf p}_{BC} \\propto \\mathbf p(y \\mid x) / \\mathbf b`
  with :math:`\\mathbf b = \\frac1B\\sum_i \\mathbf p(y \\mid x_i)` over the batch.

Both are small classes in the scikit-learn shape: ``__init__`` stores options,
``fit`` learns the state (names ending in ``_``) and returns ``self``,
``transform(prob)`` maps P(B better) to the corrected P(B better). Vectorised.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import DataValidationError, check_unit_interval, show_values

__all__ = ["BatchCalibration", "ContextualCalibration"]


def _probabilities(values: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf" or arr.size == 0:
        raise DataValidationError(
            f"`{name}` must be a non-empty array of probabilities in [0, 1]; got dtype "
            f"{arr.dtype} and shape {arr.shape}."
        )
    return check_unit_interval(arr, name, "Pass P(B better) as a probability (not a "
                               "percentage or logit) and resolve missing outputs first.")


def _reweight(p: NDArray[np.float64], w_a: float, w_b: float) -> NDArray[np.float64]:
    """Renormalised (w_A (1-p), w_B p): the B entry of diag(w) p(y|x) / sum."""
    num = w_b * p
    return num / (num + w_a * (1.0 - p))


def _not_fitted(obj) -> DataValidationError:
    return DataValidationError(
        f"this {type(obj).__name__} is not fitted yet; call .fit(...) before .transform(...)."
    )


class ContextualCalibration:
    """Contextual calibration with a content-free probe (Zhao et al. 2021), binary case.

    With :math:`q` = P(B better | content-free input, e.g. "N/A" for both
    responses), :math:`\\mathbf W = \\mathrm{diag}(1 - q, q)^{-1}` and

    .. math:: \\hat p_{CC} = \\frac{p / q}{p / q + (1 - p)/(1 - q)},
              \\qquad \\mathrm{logit}\\, \\hat p_{CC} = \\mathrm{logit}\\, p - \\mathrm{logit}\\, q,

    so the probe itself is mapped to 1/2. Several probes (Zhao et al. average
    "N/A", "[MASK]" and the empty string) are averaged in probability space.

    Attributes
    ----------
    prior_ : float
        q, the mean content-free P(B better).
    weights_ : ndarray, shape (2,)
        Diagonal of W for (A, B): (1/(1-q), 1/q).

    Examples
    --------
    >>> cc = ContextualCalibration().fit([0.7])
    >>> cc.transform([0.7, 0.5]).round(4).tolist()
    [0.5, 0.3]
    """

    def fit(self, content_free_prob: ArrayLike) -> "ContextualCalibration":
        """Learn q from the judge's P(B better) on one or more content-free probes."""
        q = float(_probabilities(content_free_prob, "content_free_prob").mean())
        if not 0.0 < q < 1.0:
            raise DataValidationError(
                f"the content-free probe gives P(B better) = {q!r}; W = diag(1-q, q)^-1 needs "
                f"0 < q < 1. Use the judge's soft probability (token probabilities), not a "
                f"hard verdict, for the probe."
            )
        self.prior_ = q
        self.weights_ = np.array([1.0 / (1.0 - q), 1.0 / q])
        return self

    def transform(self, prob: ArrayLike) -> NDArray[np.float64]:
        """Corrected P(B better) for each entry of ``prob`` (same shape)."""
        if not hasattr(self, "weights_"):
            raise _not_fitted(self)
        return _reweight(_probabilities(prob, "prob"), *self.weights_)


class BatchCalibration:
    """Batch calibration: remove the batch's mean bias toward A or B (Zhou et al. 2024).

    ``space="probability"`` (default; the paper's Section 5.1 and Zhou et al.): the
    bias is the batch mean of the class probabilities,
    :math:`\\mathbf b = (1 - \\bar p, \\bar p)`, :math:`\\bar p = \\frac1B\\sum_i p_i`,
    and each prediction is divided by it and renormalised:

    .. math::

        \\hat p_{BC} = \\frac{p / \\bar p}{p / \\bar p + (1 - p)/(1 - \\bar p)},
        \\qquad \\mathrm{logit}\\, \\hat p_{BC} = \\mathrm{logit}\\, p - \\mathrm{logit}\\, \\bar p.

    ``space="logit"``: the bias is the batch mean of the logits,
    :math:`b = \\frac1B\\sum_i \\mathrm{logit}\\, p_i`, and
    :math:`\\hat p = \\sigma(\\mathrm{logit}\\, p - b)`, which makes the corrected
    logits average exactly 0 and recovers an additive logit bias exactly when the
    true logits average 0.

    Certainties (outputs of exactly 0 or 1, as a log-probability judge prints when the
    other verdict underflows). In probability space they enter the batch mean as they
    are. In logit space their logit is infinite, so the batch mean logit is undefined:
    ``fit`` refuses them, naming how many and the fixes, rather than clipping them to a
    constant (which would decide b: one exact 1 among 100 outputs shifts it by
    logit(1 - c) / 100, 0.09 at c = 1e-4 and 0.28 at c = 1e-12). Dropping them is no
    remedy the class could apply silently: it selects outputs on their value, so the
    mean logit of the rest understates a bias that also shows in the certainties. A
    judge whose certainties should be calibrated fits
    :class:`~bayesjudge.TemperatureScaling` on labels (each certainty its own
    category, see its model card). ``transform`` needs no constant in either space: a
    shift of an infinite logit leaves it infinite, so an exact 0 or 1 stays 0 or 1
    (as :math:`\\mathbf W \\mathbf p` keeps it, and as contextual calibration does).

    The paper estimates the bias on the whole test set; ``fit`` takes that batch
    and ``transform`` applies it (``fit_transform`` does both on one batch).

    Parameters
    ----------
    space : {"probability", "logit"}, default "probability"

    Attributes
    ----------
    bias_ : float
        :math:`\\bar p` (probability space) or :math:`b` (logit space).
    logit_shift_ : float
        What is subtracted from every logit: logit(:math:`\\bar p`) or :math:`b`.
    n_batch_ : int

    Examples
    --------
    >>> bc = BatchCalibration().fit([0.6, 0.8, 0.7])
    >>> round(bc.bias_, 4), bc.transform([0.7]).round(4).tolist()
    (0.7, [0.5])
    """

    def __init__(self, space: Literal["probability", "logit"] = "probability") -> None:
        self.space = space

    def fit(self, prob: ArrayLike) -> "BatchCalibration":
        """Estimate the bias from a batch of the judge's P(B better)."""
        p = _probabilities(prob, "prob")
        if self.space == "probability":
            bias = float(p.mean())
            if not 0.0 < bias < 1.0:
                raise DataValidationError(
                    f"every prob in the batch is {bias:g}: the batch mean must lie strictly "
                    f"between 0 and 1 to divide by it. Calibrate on a batch where the judge "
                    f"prefers both A and B."
                )
            shift = float(np.log(bias) - np.log1p(-bias))
        elif self.space == "logit":
            certain = (p == 0.0) | (p == 1.0)
            if certain.any():
                raise DataValidationError(
                    f"prob has {int(certain.sum())} exact 0/1 output(s) of {p.size} (e.g. at "
                    f"positions {show_values(np.flatnonzero(certain))}): their logit is "
                    f"infinite, so the batch mean logit (space='logit') is undefined. Fix: "
                    f"use space='probability' (the paper's batch calibration, defined with "
                    f"exact 0/1), or pass the judge's unrounded probabilities; to shift by "
                    f"the mean logit of the other outputs alone, drop the 0/1 yourself "
                    f"(prob[(prob > 0) & (prob < 1)]; this understates a bias that the "
                    f"certainties also show).")
            bias = shift = float(np.mean(np.log(p) - np.log1p(-p)))
        else:
            raise DataValidationError(
                f"space must be 'probability' or 'logit', got {self.space!r}."
            )
        self.bias_, self.logit_shift_, self.n_batch_ = bias, shift, int(p.size)
        return self

    def transform(self, prob: ArrayLike) -> NDArray[np.float64]:
        """Corrected P(B better) for each entry of ``prob`` (same shape)."""
        if not hasattr(self, "logit_shift_"):
            raise _not_fitted(self)
        p = _probabilities(prob, "prob")
        # exp(-shift) = (1 - pbar)/pbar: the ratio of the diagonal weights 1/pbar : 1/(1-pbar);
        # exact in both spaces, certainties included (0 and 1 are fixed points of the map)
        return _reweight(p, 1.0, float(np.exp(-self.logit_shift_)))

    def fit_transform(self, prob: ArrayLike) -> NDArray[np.float64]:
        """``fit(prob).transform(prob)``: the paper's use on one test batch."""
        return self.fit(prob).transform(prob)
