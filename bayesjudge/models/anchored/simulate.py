"""Simulated battles with known truth for AnchoredBT (its example data and recovery tests)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesjudge.models.anchored.likelihood import OUTCOMES, SHIFT


def simulate_battles(skill, n_battles: int, *, random_seed: int = 0, reference_share=0.4,
                     tie_logit: float = -0.5, confusion: dict | None = None,
                     shift: dict | None = None, crowd: int = 1,
                     consensus: np.ndarray | None = None):
    """Battles among items of the given skills, the reference on a share of them.

    ``crowd``: the reference's votes on each battle it judged, independent Davidson
    outcomes given the skills; the judges' verdicts are channels of the first (the
    votes are iid, so it is a uniformly chosen one).

    ``shift``: judge -> u_k (one value per item), the judge's own skill shift
    (``discrimination`` / ``item_bias``): its verdict on (i, j) given r is drawn from
    softmax_v(log C_k[r, v] + (u_ki - u_kj) (1/2, 0, -1/2)_v).

    ``consensus``: a 3 x 3 M; each battle's consensus outcome c is drawn from M[r] and
    every judge's verdict from its row for c instead of r (``AnchoredBT(consensus=True)``).
    Returns the long table and the truth (skill, tie_logit, confusion per judge, and
    consensus when given).
    """
    rng = np.random.default_rng(random_seed)
    skill = np.asarray(skill, float) - np.mean(skill)
    n = len(skill)
    if confusion is None:
        good = np.full((3, 3), 0.1) + 0.7 * np.eye(3)
        left = np.array([[0.8, 0.1, 0.1], [0.5, 0.3, 0.2], [0.5, 0.1, 0.4]])
        confusion = {"judge-good": good, "judge-left": left,
                     "judge-coin": np.full((3, 3), 1 / 3)}
    i = rng.integers(0, n, n_battles)
    j = (i + rng.integers(1, n, n_battles)) % n
    d = skill[i] - skill[j]
    w = np.exp(np.stack([0.5 * d, np.full_like(d, tie_logit), -0.5 * d], axis=1))
    p = w / w.sum(1, keepdims=True)
    r = (rng.random(n_battles)[:, None] > np.cumsum(p, 1)).sum(1)
    names = np.array([f"m{x}" for x in range(n)], dtype=object)
    rows = []
    ref_seen = rng.random(n_battles) < reference_share
    read = r  # the outcome the judges read: the reference's, or a consensus drawn from it
    if consensus is not None:
        m = np.asarray(consensus, float)
        read = (rng.random(n_battles)[:, None] > np.cumsum(m[r], 1)).sum(1)
    for b in range(n_battles):
        if ref_seen[b]:
            rows.append((f"b{b}", "human", names[i[b]], names[j[b]], OUTCOMES[r[b]]))
        for judge, c in confusion.items():
            row = c[read[b]]
            if shift and judge in shift:
                row = row * np.exp((shift[judge][i[b]] - shift[judge][j[b]]) * SHIFT)
                row = row / row.sum()
            v = rng.choice(3, p=row)
            rows.append((f"b{b}", judge, names[i[b]], names[j[b]], OUTCOMES[v]))
    if crowd > 1:  # drawn last: crowd=1 keeps every other draw of a seed
        seen = np.flatnonzero(ref_seen)
        more = (rng.random((len(seen), crowd - 1))[..., None] > np.cumsum(p[seen], 1)[:, None])
        for b, votes in zip(seen, more.sum(-1)):
            rows += [(f"b{b}", "human", names[i[b]], names[j[b]], OUTCOMES[v]) for v in votes]
    table = pd.DataFrame(rows, columns=["battle", "judge", "left", "right", "outcome"])
    truth = {"skill": skill, "tie_logit": tie_logit,
             "confusion": np.stack(list(confusion.values()))}
    if consensus is not None:
        truth["consensus"] = np.asarray(consensus, float)
    return table, truth
