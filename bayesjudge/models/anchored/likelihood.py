"""The anchored Davidson / Dawid-Skene likelihood of a cell, in pytensor and in numpy.

For a cell of battles (left i, right j) with the reference's votes n = (n_left, n_tie,
n_right), m = sum(n) of them (none, one, or a crowd's several), and the other judges'
verdicts v_k (or missing):

    log P(r | d)      = (d/2, nu', -d/2)[r] - log(e^{d/2} + e^{-d/2} + e^{nu'}),
                        d = s_i - s_j (+ b), nu' = tie_logit = log nu   (Davidson 1970)
    J_r               = sum_{k judged} log C_k[r, v_k]
    log-lik(cell)     = log sum_r exp(log P(r | d) + J_r)                 (m = 0: r summed out)
                      = sum_v n_v log P(v | d) + log sum_r (n_r / m) exp(J_r)   (m >= 1)

times the cell's count. With one vote r_obs the second line is log P(r_obs | d) +
J_{r_obs}. With several, the votes are independent Davidson outcomes given d and the
judges' verdicts are channels of one of them, which one unknown (uniform): P(votes,
verdicts | d) = prod_m P(r_m | d) (1/m) sum_m prod_k C_k[r_m, v_k]. A judge's verdict
then follows the battle's reference-vote shares through its confusion matrix.

With a consensus layer (``consensus=True``: the judges read a battle-level outcome c,
itself a channel M of the reference's), J_r = log sum_c M[r, c] prod_k C_k[c, v_k]:
the judges are independent given c, not given r, and share c's errors.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

#: Floor of a confusion probability inside a log (a flat-prior MLE can sit on an edge).
TINY = 1e-300


#: The three outcomes, in the order of every array axis over them.
OUTCOMES = ["left", "tie", "right"]
#: How an item-bias difference b shifts a judge's verdict logits (left, tie, right).
SHIFT = np.array([0.5, 0.0, -0.5])


def cell_loglik_pt(diff, tie_logit, log_conf, data, bias=None, log_consensus=None):
    """Per-cell log-likelihood (not yet times the counts), pytensor.

    ``log_conf`` is (judges, 3, 3) or None (no other judges); ``log_consensus`` (3, 3)
    log M[r, c] of a consensus layer (the confusion rows are then over c); ``data`` maps the
    ``pm.Data`` names of :meth:`~bayesjudge.models.anchored.data.Cells.graph_data`;
    ``bias`` (pairs, judges): the judges' item-bias differences u_ki - u_kj per
    distinct ordered pair, which shift their verdict logits by b (1/2, 0, -1/2) within
    every confusion row:

        log C'_k[r, v] = log C_k[r, v] + b SHIFT_v - log sum_w C_k[r, w] exp(b SHIFT_w),

    the normaliser computed once per pair and gathered per cell.
    """
    t = pt.ones_like(diff) * tie_logit
    logits = pt.stack([0.5 * diff, t, -0.5 * diff], axis=1)
    ref_lp = logits - pt.logsumexp(logits, axis=1, keepdims=True)
    lp = ref_lp
    if log_conf is not None:
        # W[(k, v), r] = log C_k[r, v]: the verdict pattern's terms in one product
        weight = log_conf.transpose(0, 2, 1).reshape((-1, 3))
        verdicts = pt.dot(data["verdict_onehot"], weight)
        if bias is not None:
            norm = _shifted_row_norm(log_conf, bias)
            cell_bias = bias[data["cell_pair"]]  # (cells, judges)
            verdicts = verdicts + pt.sum(data["verdict_shift"] * cell_bias, axis=1)[:, None]
            verdicts = verdicts - pt.sum(data["verdict_seen"][:, :, None]
                                         * norm[data["cell_pair"]], axis=1)
        if log_consensus is not None:  # over c, then log sum_c M[r, c] exp(.)
            verdicts = pt.logsumexp(log_consensus[None] + verdicts[:, None, :], axis=2)
        lp = lp + verdicts
    known = data["ref_known"]
    # lp - ref_lp = J_r; with votes the channel mixes over their shares (module docstring)
    mix = known[:, None] * (data["ref_log_share"] - ref_lp)
    voted = pt.sum(data["ref_counts"] * ref_lp, axis=1)
    return voted + pt.logsumexp(lp + mix, axis=1)


def _shifted_row_norm(log_conf, bias):
    """(pairs, judges, 3): log sum_w C_k[r, w] exp(b SHIFT_w) for every pair's b.

    As log(C[r, 0] e^{b/2} + C[r, 1] + C[r, 2] e^{-b/2}), with |b|/2 taken out so no
    exponent is positive: three exps per (pair, judge) instead of a logsumexp over a
    (pairs, judges, 3, 3) array: on LLMFAO (1,753 pairs) a log density with its gradient
    takes 1.48 ms instead of 2.15 ms; every value equals the logsumexp (tested).
    """
    conf = pt.exp(log_conf)[None]  # (1, judges, r, w), floored at TINY as log_conf is
    half = 0.5 * pt.abs(bias)[:, :, None]
    left = pt.exp(0.5 * bias[:, :, None] - half)
    right = pt.exp(-0.5 * bias[:, :, None] - half)
    total = conf[..., 0] * left + conf[..., 1] * pt.exp(-half) + conf[..., 2] * right
    return half + pt.log(total)


def ref_log_probs(diff: np.ndarray, tie_logit) -> np.ndarray:
    """log P(reference says left / tie / right | d): numpy, a new last axis of 3."""
    diff = np.asarray(diff, float)
    t = np.broadcast_to(np.asarray(tie_logit, float), diff.shape)
    logits = np.stack([0.5 * diff, t, -0.5 * diff], axis=-1)
    m = logits.max(axis=-1, keepdims=True)
    return logits - (m + np.log(np.exp(logits - m).sum(axis=-1, keepdims=True)))


def softmax(x: np.ndarray) -> np.ndarray:
    """Probabilities over the last axis from log terms (shifted by their maximum)."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def distinct_pairs(left, right) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair_left, pair_right, row_pair): the distinct ordered pairs of the rows and each
    row's pair (a judge's shifted confusion rows depend on the pair only)."""
    pairs, row_pair = np.unique(np.column_stack([left, right]), axis=0, return_inverse=True)
    return pairs[:, 0], pairs[:, 1], row_pair.reshape(-1)


def joint_log_terms(draws: dict, left, right, verdict_onehot, pairs=None) -> np.ndarray:
    """M_r = log P(r | d) + sum_k log C_k[r, v_k] per draw and row: (draws, rows, 3);
    with a ``consensus`` M, log P(r | d) + log sum_c M[r, c] prod_k C_k[c, v_k].

    With a ``judge_shift`` the shifted confusion rows are normalised once per distinct
    ordered pair (``pairs``: :func:`distinct_pairs` of the rows, computed when None) and
    each row's verdicts gathered from its pair's: (draws, pairs, judges, 9) values
    instead of (draws, rows, judges, 9) (arena_ppr: 380 pairs, 8,344 cells).
    """
    s = draws["skill"]
    d = s[:, left] - s[:, right]
    if "position_bias" in draws:
        d = d + np.reshape(draws["position_bias"], (-1, 1))
    lp = ref_log_probs(d, np.reshape(draws["tie_logit"], (-1, 1)))
    if "confusion" in draws and verdict_onehot.shape[1] and "judge_shift" in draws:
        pair_left, pair_right, row_pair = distinct_pairs(left, right) if pairs is None else pairs
        conf = np.log(np.maximum(draws["confusion"], TINY))  # (draws, judges, r, v)
        u = draws["judge_shift"]  # (draws, judges, items)
        b = u[:, :, pair_left] - u[:, :, pair_right]  # (draws, judges, pairs)
        z = conf[:, None] + np.moveaxis(b, 2, 1)[..., None, None] * SHIFT
        m = z.max(-1, keepdims=True)
        z = z - (m + np.log(np.exp(z - m).sum(-1, keepdims=True)))  # (draws, pairs, k, r, v)
        onehot = verdict_onehot.reshape(len(verdict_onehot), -1, 3)
        judges = np.arange(onehot.shape[1])
        # row c, judge k: log C'_k[r, v_ck] of the row's pair (weight 0 where k gave none)
        picked = np.moveaxis(z, 4, 3)[:, row_pair[:, None], judges[None], onehot.argmax(-1)]
        verdicts = (picked * onehot.sum(-1)[None, :, :, None]).sum(axis=2)
    elif "confusion" in draws and verdict_onehot.shape[1]:
        conf = np.log(np.maximum(draws["confusion"], TINY))
        weight = conf.transpose(0, 1, 3, 2).reshape(len(conf), -1, 3)
        verdicts = np.einsum("cj,sjr->scr", verdict_onehot, weight)
    else:
        return lp
    if "consensus" in draws:  # (draws, rows, c) -> log sum_c M[r, c] exp(.) over r
        z = np.log(np.maximum(draws["consensus"], TINY))[:, None] + verdicts[:, :, None, :]
        m = z.max(-1, keepdims=True)
        verdicts = (m + np.log(np.exp(z - m).sum(-1, keepdims=True)))[..., 0]
    return lp + verdicts


def judge_confusion(draws: dict, k: int, left, right) -> np.ndarray:
    """Judge k's confusion matrix on each row's pair, per draw: (draws, rows, 3, 3).

    Without a ``judge_shift`` it is C_k on every row; with one, row r of pair (i, j) is
    softmax_v(log C_k[r, v] + (u_ki - u_kj) SHIFT_v) (:func:`cell_loglik_pt`). With a
    ``consensus`` layer its rows are over the consensus outcome c (the judge's channel
    from the reference's outcome is then M C_k).
    """
    conf = np.log(np.maximum(draws["confusion"][:, k], TINY))[:, None]  # (draws, 1, r, v)
    if "judge_shift" not in draws:
        return np.broadcast_to(np.exp(conf), (len(conf), len(left), 3, 3))
    u = draws["judge_shift"][:, k]
    z = conf + (u[:, left] - u[:, right])[..., None, None] * SHIFT
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


#: Largest (draws x rows x judges x 9) block :func:`joint_log_terms` is given at once by
#: the chunked callers (~32 MB of float64 per temporary).
BLOCK = 4_000_000


def draw_chunks(n_draws: int, per_draw: int):
    """Slices of the draws so that a chunk holds at most :data:`BLOCK` values of
    ``per_draw`` each (at least one draw per chunk)."""
    step = max(1, BLOCK // max(1, per_draw))
    return [slice(lo, lo + step) for lo in range(0, n_draws, step)]


def cell_loglik_np(draws: dict, data: dict) -> np.ndarray:
    """Per-cell log-likelihood times the counts, per draw: (draws, cells), computed in
    chunks of draws (a NUTS posterior on every cell would need draws x cells x judges x 9
    values at once: 7 GB for arena_ppr's four judges)."""
    n_draws = len(draws["skill"])
    per_draw = len(data["cell_left"]) * 9 * max(1, np.shape(data["verdict_onehot"])[1] // 3)
    out = np.empty((n_draws, len(data["cell_left"])))
    for sl in draw_chunks(n_draws, per_draw):
        out[sl] = _cell_loglik_block({k: v[sl] for k, v in draws.items()}, data)
    return out


def _cell_loglik_block(draws: dict, data: dict) -> np.ndarray:
    left, right = data["cell_left"], data["cell_right"]
    ref_lp = joint_log_terms(draws, left, right, np.zeros((len(left), 0)))
    pairs = (data["pair_left"], data["pair_right"], data["cell_pair"]) if "cell_pair" in data \
        else None
    lp = joint_log_terms(draws, left, right, data["verdict_onehot"], pairs)
    known = data["ref_known"] > 0
    z = np.where(known[:, None], lp - ref_lp + data["ref_log_share"], lp)
    m = z.max(axis=-1, keepdims=True)
    mixed = (m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))[..., 0]
    return data["cell_count"] * ((data["ref_counts"] * ref_lp).sum(-1) + mixed)
