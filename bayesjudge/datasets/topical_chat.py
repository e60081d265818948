"""Topical-Chat (USR) human scores and UniEval's predictions: dialogue truth and one real judge.

The USR human annotations of Topical-Chat (Mehri & Eskenazi (2020), "USR: An
Unsupervised and Reference Free Evaluation Metric for Dialog Generation", ACL,
arXiv:2005.00456): 60 dialogue contexts x 6 responses, mean human scores on six
dimensions, as redistributed by UniEval (Zhong, Liu, Yin et al. (2022), "Towards a
Unified Multi-Dimensional Evaluator for Text Generation", EMNLP, arXiv:2210.07197;
maszhongming/UniEval @ d33e7b6, MIT) together with UniEval's own predicted scores.
Qian, Sun, Gales & Knill (2026), "Who can we trust? LLM-as-a-jury for Comparative
Assessment", arXiv:2602.16610 use it as their second benchmark (Section 4,
Appendix B); UniEval's scores, turned into pairwise probabilities, are one real
automatic judge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from scipy.special import expit

from bayesjudge.data import DataValidationError, show_values
from bayesjudge.datasets.files import read_json, resolve_data_file

__all__ = [
    "TOPICAL_CHAT_ASPECTS",
    "TOPICAL_CHAT_DIMENSIONS",
    "TOPICAL_CHAT_FILE",
    "load_topical_chat",
    "topical_chat_unieval_judge",
]

TOPICAL_CHAT_FILE = "unieval_topical_chat_result.json"

#: The six dimensions of the file, in UniEval's naming (USR's name in the comment).
TOPICAL_CHAT_DIMENSIONS = (
    "understandability",  # USR "Understandable", 0-1
    "naturalness",  # "Natural", 1-3
    "coherence",  # "Maintains Context", 1-3
    "engagingness",  # "Engaging", 1-3
    "groundedness",  # "Uses Knowledge", 0-1
    "overall",  # "Overall", 1-5
)

#: The paper's four aspects -> the file's dimension. The paper does not spell the
#: mapping out; this is the one of the same group's comparative-assessment code
#: (Liusie, Manakul & Gales 2024, arXiv:2307.07889, github adianliusie/comparative-
#: assessment, src/data_handler.py): coherency = USR "Understandable", continuity =
#: "Maintains Context" (UniEval's "coherence"), engagingness, naturalness.
TOPICAL_CHAT_ASPECTS = {
    "COH": "understandability",
    "CNT": "coherence",
    "ENG": "engagingness",
    "NAT": "naturalness",
}


def load_topical_chat(
    path: str | Path | None = None, *, include_unieval: bool = False
) -> pd.DataFrame:
    """Topical-Chat's mean human scores as a long table (60 contexts x 6 responses x 6 dims).

    Reads UniEval's ``reproduce/unieval_predict/dialogue/topical_chat_result.json``
    (a list of 360 records with ``source`` (dialogue history), ``system_id``,
    ``system_output``, ``context`` (the knowledge fact), ``scores`` (mean human
    scores) and ``predict_scores`` (UniEval's)). A dialogue context is identified
    by its ``source`` text; contexts are numbered ``"0"`` ... ``"59"`` in order of
    first appearance (six consecutive records each).

    Parameters
    ----------
    path : str or Path, optional
        The JSON file (plain or ``.gz``) or its folder. Default: the copy shipped in
        ``bayesjudge/data``, else ``../shared/data/topical_chat``.
    include_unieval : bool, default False
        Add a column ``unieval`` with UniEval's predicted score.

    Returns
    -------
    pandas.DataFrame
        2,160 rows (360 responses x 6 dimensions, file order): ``context`` (str),
        ``item`` (the responding system: ``"Original Ground Truth"``, ``"Argmax
        Decoding"``, ``"Nucleus Decoding (p = 0.3)"``, ``(p = 0.5)``, ``(p = 0.7)``,
        ``"New Human Generated"``), ``aspect`` (one of
        :data:`TOPICAL_CHAT_DIMENSIONS`; see :data:`TOPICAL_CHAT_ASPECTS` for the
        paper's COH/CNT/ENG/NAT), ``score`` (float, higher is better).

    Raises
    ------
    DataValidationError
        Records without a dimension, non-numeric scores, or a context whose
        responses repeat a system.
    """
    res = resolve_data_file(TOPICAL_CHAT_FILE, path, "topical_chat", allow_gzip=True)
    records = read_json(res)
    ctx_of: dict[str, int] = {}
    ctx, item, human, pred = [], [], [], []
    for k, r in enumerate(records):
        missing = [d for d in TOPICAL_CHAT_DIMENSIONS if d not in r.get("scores", {})]
        if missing or "source" not in r or "system_id" not in r:
            raise DataValidationError(
                f"{res.name}: record {k} lacks 'source', 'system_id' or scores {missing}; "
                "pass UniEval's topical_chat_result.json."
            )
        ctx.append(str(ctx_of.setdefault(r["source"], len(ctx_of))))
        item.append(str(r["system_id"]))
        human.append([r["scores"][d] for d in TOPICAL_CHAT_DIMENSIONS])
        p = r.get("predict_scores", {})
        pred.append([p.get(d, np.nan) for d in TOPICAL_CHAT_DIMENSIONS])
    key = pd.DataFrame({"context": ctx, "item": item})
    dup = key.duplicated()
    if dup.any():
        raise DataValidationError(
            f"{res.name}: a context repeats a system, e.g. "
            f"{key[dup].head(3).to_dict('records')}; pass the upstream file."
        )
    h = np.asarray(human, dtype=float)
    if not np.isfinite(h).all():
        raise DataValidationError(f"{res.name}: 'scores' hold non-numeric values.")
    k = len(TOPICAL_CHAT_DIMENSIONS)
    out = pd.DataFrame(
        {
            "context": np.repeat(np.asarray(ctx, dtype=object), k),
            "item": np.repeat(np.asarray(item, dtype=object), k),
            "aspect": np.tile(np.asarray(TOPICAL_CHAT_DIMENSIONS, dtype=object), len(records)),
            "score": h.reshape(-1),
        }
    )
    if include_unieval:
        u = np.asarray(pred, dtype=float).reshape(-1)
        if not np.isfinite(u).all():
            raise DataValidationError(
                f"{res.name}: 'predict_scores' missing or non-numeric for some records; "
                "pass UniEval's topical_chat_result.json (not topical_chat.json)."
            )
        out["unieval"] = u
    out.attrs = {"source": str(res)}
    return out


def topical_chat_unieval_judge(
    data: pd.DataFrame | None = None,
    *,
    tau: float | Literal["std"] = "std",
    aspects: Literal["paper", "all"] | list[str] = "paper",
    judge: str = "UniEval",
) -> pd.DataFrame:
    """UniEval's Topical-Chat scores as one soft pairwise judge (comparisons schema).

    UniEval scores each response on its own; for every context, dimension and
    ordered pair of responses (i, j), i != j (the paper's N(N-1) comparisons per
    context, Section 4):

    .. math:: p_{ij} = \\sigma\\big((u_i - u_j) / \\tau_a\\big)

    the Bradley-Terry probability (Qian et al. 2026, eq. 1) of UniEval's score
    difference. ``tau="std"`` (default) sets :math:`\\tau_a` per dimension to the
    pooled within-context standard deviation of UniEval's scores,
    :math:`\\tau_a = (\\frac{1}{C}\\sum_c \\operatorname{var}_c(u))^{1/2}` (ddof = 1),
    so a one-SD difference gives :math:`p = \\sigma(1) \\approx 0.73`; it uses no
    human label. On the shipped file: understandability 0.328, naturalness 0.328,
    coherence 0.334, engagingness 0.743, groundedness 0.345, overall 0.304. The
    choice only sets how soft the judge is: rankings from Avg-Prob or BT do not
    depend on it, and BT-sigma's discriminator absorbs a global rescaling.
    ``p_ij + p_ji = 1`` exactly (no positional bias: UniEval never saw the pair).

    Parameters
    ----------
    data : pandas.DataFrame, optional
        Output of ``load_topical_chat(include_unieval=True)``; loaded if omitted.
    tau : float or "std"
        The scale :math:`\\tau > 0`, or ``"std"`` for the per-dimension value above.
    aspects : {"paper", "all"} or list of str
        ``"paper"``: the paper's four aspects, labelled COH/CNT/ENG/NAT (see
        :data:`TOPICAL_CHAT_ASPECTS`); ``"all"``: the six dimensions under their own
        names; or a list of dimension names.
    judge : str, default "UniEval"
        Value of the ``judge`` column.

    Returns
    -------
    pandas.DataFrame
        ``judge``, ``context``, ``aspect``, ``left``, ``right``, ``prob``: 60 x 30
        ordered pairs per aspect (7,200 rows for the paper's four); ``attrs["tau"]``
        holds the scale used per aspect.
    """
    if data is None:
        data = load_topical_chat(include_unieval=True)
    if "unieval" not in data.columns:
        raise DataValidationError(
            "topical_chat_unieval_judge: data has no 'unieval' column; load it with "
            "load_topical_chat(include_unieval=True)."
        )
    if aspects == "paper":
        names = dict(TOPICAL_CHAT_ASPECTS)
    elif aspects == "all":
        names = {d: d for d in TOPICAL_CHAT_DIMENSIONS}
    else:
        unknown = [a for a in aspects if a not in TOPICAL_CHAT_DIMENSIONS]
        if unknown:
            raise DataValidationError(
                f"aspects={unknown}: unknown dimension(s); choose from {TOPICAL_CHAT_DIMENSIONS}."
            )
        names = {a: a for a in aspects}
    if not (tau == "std" or (isinstance(tau, (int, float)) and np.isfinite(tau) and tau > 0)):
        raise DataValidationError(f"tau={tau!r}; pass a positive number or 'std'.")
    frames, taus = [], {}
    for label, dim in names.items():
        d = data[data["aspect"] == dim].reset_index(drop=True)
        if tau == "std":
            var = d.groupby("context", sort=False)["unieval"].var(ddof=1)
            t = float(np.sqrt(var.mean()))
        else:
            t = float(tau)
        if not t > 0:
            raise DataValidationError(
                f"tau for {dim!r} is {show_values([t])}: UniEval's scores are constant in every "
                "context; pass tau= explicitly."
            )
        taus[label] = t
        d["_pos"] = np.arange(len(d))
        pairs = d.merge(d, on="context", suffixes=("_l", "_r"))
        pairs = pairs[pairs["_pos_l"] != pairs["_pos_r"]].sort_values(["_pos_l", "_pos_r"])
        frames.append(
            pd.DataFrame(
                {
                    "judge": judge,
                    "context": pairs["context"].to_numpy(),
                    "aspect": label,
                    "left": pairs["item_l"].to_numpy(),
                    "right": pairs["item_r"].to_numpy(),
                    "prob": expit(
                        (pairs["unieval_l"].to_numpy() - pairs["unieval_r"].to_numpy()) / t
                    ),
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out.attrs = {"tau": taus}
    return out
