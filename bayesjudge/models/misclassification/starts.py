"""Starting points of the misclassification models' optimiser and NUTS chains.

The judge's two rates make the likelihood symmetric under label swapping
(theta -> 1 - theta, q0 -> 1 - q1, q1 -> 1 - q0): the starts keep the optimiser and
the chains on the side the calibration data support, and put Newton next to the mode.
"""

from __future__ import annotations

import numpy as np
import pymc as pm

from bayesjudge.data import MisclassificationCounts

RATES = ("specificity", "sensitivity")

GOOD_JUDGE_START = 0.88
"""Initial q0 and q1 of the optimiser and of every NUTS chain (logit 2): a better-than-chance judge.

The label-swapped solution (theta -> 1 - theta, q0 -> 1 - q1, q1 -> 1 - q0)
fits the test counts equally well; only the calibration counts tell the two
apart. With several systems it is a separate local mode behind a barrier at
q0 + q1 = 1 (there all judged rates would have to be equal), and chains started
at PyMC's default q = 0.5 end up on either side (R-hat 1.7 in a 4-system
example). Starting on the better-than-chance side keeps every chain in the mode
the calibration data support.
"""


def set_start(rv, value: float | None) -> None:
    """Initial value of a free variable (its shape from its dims: no graph evaluation)."""
    if value is not None:
        model = pm.modelcontext(None)
        shape = tuple(len(model.coords[d]) for d in model.named_vars_to_dims.get(rv.name, ()))
        model.set_initval(rv, np.full(shape, float(value)))


def mirrored_start(engine) -> np.ndarray:
    """The engine's initial point with every judge rate q started at 1 - q.

    The label-swapped mode (theta -> 1 - theta, q0 -> 1 - q1, q1 -> 1 - q0) lies
    behind the barrier q0 + q1 = 1 from :data:`GOOD_JUDGE_START`; when the
    calibration data say the judge is worse than chance the MAP is there.
    Negating the rates' logits (not their sds or offsets) moves the start across.
    """
    x = engine.x0.copy()
    for name, where in engine.value_slices().items():
        if name.startswith(RATES) and "_sd" not in name and "offset" not in name:
            x[where] = -x[where]
    return x


def closed_form_start(engine, counts: MisclassificationCounts, pooled: bool,
                      flip_clipped: bool = False) -> np.ndarray | None:
    """Newton's start at the closed-form estimates, or None where they say nothing useful.

    q0 = (tn + 1/2) / (m0 + 1), q1 = (tp + 1/2) / (m1 + 1) (summed over systems if
    ``pooled``; the halves keep the logits finite) and theta_k the Rogan-Gladen
    estimate (eq. 5) clipped to [0.02, 0.98], written into the engine's initial
    point on the logit scale (the ``_logodds__`` / ``_logit`` / ``_logit_mean``
    coordinates; sds and offsets keep theirs). From there Newton needs a few steps
    at any data size; from the default start a million test rows made the density so
    sharp that it took ~30. None when q0 + q1 <= 1.02 (theta barely identified: the
    default and mirrored starts handle that side).
    """
    cal = counts.pooled_calibration() if pooled else counts
    q0 = (np.asarray(cal.tn, float) + 0.5) / (np.asarray(cal.m0, float) + 1)
    q1 = (np.asarray(cal.tp, float) + 0.5) / (np.asarray(cal.m1, float) + 1)
    if np.any(q0 + q1 <= 1.02):
        return None
    raw = (np.asarray(counts.p_hat, float) + q0 - 1) / (q0 + q1 - 1)
    theta = np.clip(raw, 0.02, 0.98)
    if flip_clipped:  # the other end for the systems whose estimate left [0, 1]
        outside = (raw < 0.02) | (raw > 0.98)
        if not outside.any():
            return None
        theta = np.where(outside, 1 - theta, theta)
    value = {"accuracy": theta, "specificity": q0, "sensitivity": q1}
    x = engine.x0.copy()
    for name, where in engine.value_slices().items():
        base = name.removesuffix("_logodds__").removesuffix("_logit_mean").removesuffix("_logit")
        if base in value and base != name:
            p = np.broadcast_to(value[base], (len(counts),))
            x[where] = np.log(p / (1 - p))[: where.stop - where.start]
    return x


def calibration_says_worse_than_chance(counts: MisclassificationCounts) -> bool:
    """True when the pooled calibration estimates give q0_hat + q1_hat <= 1."""
    pooled = counts.pooled_calibration()
    return bool(np.asarray(pooled.q0_hat)[0] + np.asarray(pooled.q1_hat)[0] <= 1)


def map_starts(engine, counts: MisclassificationCounts, pooled: bool) -> list[np.ndarray | None]:
    """The MAP search's starts: the mirrored and default ones behind a worse-than-chance
    calibration, else the closed-form start (calibration pooled over systems if ``pooled``)."""
    if calibration_says_worse_than_chance(counts):
        return [mirrored_start(engine), None]
    # A system whose test share lies outside the judge's range [1 - q0, q1] (Rogan-Gladen
    # outside [0, 1]) can have a second mode at the other end, reached by moving its own
    # rates (a system without calibration items of one class, every test item judged 1):
    # start there too, and the fit keeps the higher density.
    flipped = closed_form_start(engine, counts, pooled, flip_clipped=True)
    return [closed_form_start(engine, counts, pooled)] + ([flipped] if flipped is not None
                                                           else [])
