"""The prediction-powered ranking protocol: few human votes, an LLM judge on every battle.

The Chatbot Arena protocol of Chatzi, Straitouri, Thejaswi & Gomez-Rodriguez (NeurIPS
2024), "Prediction-Powered Ranking of Large Language Models", arXiv:2402.17826, Section
5 (and their code), on any long table ``battle, judge, left, right, outcome`` in which
a reference judge (``human``) voted on battles that LLM judges also judged (arena_ppr):

1. the items are the paper's 12 models (:data:`ARENA_PPR_MODELS`); the battles among
   them with a verdict of every LLM judge used and of the reference form the pool;
2. per draw, a design balanced per unordered pair: ``per_pair`` battles of each of the
   66 pairs (default: the smallest pair's count, 96 on arena_ppr), drawn without
   replacement;
3. ``n // 66`` battles per pair keep the reference vote (``n = 1000`` -> 15 per pair,
   990 votes; the paper floors the same way); the LLM judges' verdicts on all design
   battles are kept;
4. every method (a callable per method, :func:`run_methods`) turns that draw into one
   rank set per item at level ``1 - alpha``;
5. truth: the ranking of the 12 items by a :class:`~bayesjudge.DavidsonBT` MAP fit on
   *all* the reference votes among them (14,947 on arena_ppr);
6. per draw and method: the share of items whose true rank lies in its set, whether
   all do, the mean set size (``upper - lower + 1``).

Each (n, draw) is one task of :func:`~bayesjudge.experiments.runner.run_tasks` with its
own seed, so the numbers do not depend on the executor, and a worker compiles each
model structure once.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import combinations

import numpy as np
import pandas as pd

from bayesjudge.baselines.prediction_powered import prediction_powered_ranksets
from bayesjudge.data import DataValidationError, require_frame, show_values
from bayesjudge.experiments.runner import (
    Executor,
    Seed,
    check_positive_int,
    run_tasks,
    task_seeds,
)
from bayesjudge.models.bradley_terry.davidson_bt import DavidsonBT

__all__ = [
    "ARENA_PPR_JUDGES",
    "ARENA_PPR_MODELS",
    "RankSetStudy",
    "anchored_rank_sets",
    "balanced_design",
    "crowd_rank_set_study",
    "davidson_rank_sets",
    "ppr_rank_sets",
    "rank_set_study",
    "reference_ranking",
]

#: The 12 models ranked in the paper's experiments (their ``scripts/config.json``).
ARENA_PPR_MODELS = (
    "vicuna-13b", "koala-13b", "gpt-3.5-turbo", "gpt-4", "oasst-pythia-12b", "alpaca-13b",
    "claude-v1", "RWKV-4-Raven-14B", "chatglm-6b", "fastchat-t5-3b", "palm-2",
    "claude-instant-v1",
)
#: Short names of the three LLM judges of arena_ppr.
ARENA_PPR_JUDGES = {
    "GPT-4": "gpt-4-0125-preview", "Claude-3": "claude-3-opus-20240229",
    "GPT-3.5": "gpt-3.5-turbo",
}

#: A method: (draw's long table, reference, alpha) -> item, rank_lower, rank_upper.
Method = Callable[[pd.DataFrame, str, float], pd.DataFrame]


def _pool(comparisons, models, reference, judges) -> pd.DataFrame:
    """Battles among ``models`` with the reference's and every judge's verdict, wide."""
    require_frame(comparisons, "comparisons", ["battle", "judge", "left", "right", "outcome"])
    seen = set(pd.unique(comparisons[["left", "right"]].to_numpy().ravel()))
    unknown = sorted(set(models) - seen)
    if unknown:
        raise DataValidationError(f"models {show_values(unknown)} never appear in "
                                  f"comparisons.left/right. Fix: pass models= as written there.")
    df = comparisons[comparisons["left"].isin(models) & comparisons["right"].isin(models)
                     & comparisons["judge"].isin([reference, *judges])]
    wide = df.pivot_table(index="battle", columns="judge", values="outcome", aggfunc="first")
    missing = [j for j in [reference, *judges] if j not in wide.columns]
    if missing:
        raise DataValidationError(f"comparisons.judge has no rows of {show_values(missing)} "
                                  f"among the models. Fix: pass reference= / judges= as written.")
    wide = wide.dropna(subset=[reference, *judges])
    pair = df.drop_duplicates("battle").set_index("battle").loc[wide.index, ["left", "right"]]
    return pd.concat([pair, wide[[reference, *judges]]], axis=1)


def balanced_design(pool: pd.DataFrame, models: Sequence[str], per_pair: int | None,
                    n_reference: int, rng: np.random.Generator) -> tuple[pd.Index, pd.Index]:
    """(design battles, battles keeping the reference vote), balanced per unordered pair."""
    code = {m: i for i, m in enumerate(models)}
    a, b = pool["left"].map(code).to_numpy(), pool["right"].map(code).to_numpy()
    key = np.minimum(a, b) * len(models) + np.maximum(a, b)
    groups = pd.Series(np.arange(len(pool))).groupby(key).indices
    n_pairs = len(models) * (len(models) - 1) // 2
    counts = {k: len(v) for k, v in groups.items()}
    if len(groups) < n_pairs:
        raise DataValidationError(
            f"{n_pairs - len(groups)} pairs of the models have no battle; a balanced design "
            f"needs every pair. Fix: drop models or add battles.")
    per_pair = min(counts.values()) if per_pair is None else per_pair
    if per_pair > min(counts.values()):
        raise ValueError(f"per_pair={per_pair} exceeds the smallest pair's "
                         f"{min(counts.values())} battles.")
    k_ref = n_reference // n_pairs
    if not 1 <= k_ref <= per_pair:
        raise ValueError(f"n={n_reference} gives {k_ref} reference votes per pair "
                         f"({n_pairs} pairs); it must be in 1..{per_pair}.")
    design, labelled = [], []
    for k in sorted(groups):
        chosen = rng.choice(groups[k], size=per_pair, replace=False)
        design.append(chosen)
        labelled.append(chosen[:k_ref])  # a uniform subset: the draw order is random
    return (pool.index[np.concatenate(design)], pool.index[np.concatenate(labelled)])


def _draw_table(pool, design, labelled, reference, judges) -> pd.DataFrame:
    """Long table of one draw: reference rows on the labelled battles, judges' on all."""
    parts = [pool.loc[labelled, ["left", "right"]].assign(
        judge=reference, outcome=pool.loc[labelled, reference])]
    for j in judges:
        parts.append(pool.loc[design, ["left", "right"]].assign(
            judge=j, outcome=pool.loc[design, j]))
    out = pd.concat(parts).rename_axis("battle").reset_index()
    return out[["battle", "judge", "left", "right", "outcome"]]


def reference_ranking(comparisons: pd.DataFrame, models: Sequence[str] = ARENA_PPR_MODELS,
                      reference: str = "human") -> pd.Series:
    """True ranks: DavidsonBT MAP on all of ``reference``'s votes among ``models``."""
    df = comparisons[(comparisons["judge"] == reference) & comparisons["left"].isin(models)
                     & comparisons["right"].isin(models)]
    rank = DavidsonBT().fit(df[["judge", "left", "right", "outcome"]]).ranking()
    return rank.set_index("item")["rank"].rename("true_rank")


def davidson_rank_sets(judge: str | None = None, *, joint: bool | str = False,
                       **kwargs) -> Method:
    """Method: DavidsonBT (MAP) ``1 - alpha`` rank intervals from one judge's rows.

    ``judge=None`` fits the reference's votes (human only); an LLM judge's name fits
    that judge's verdicts on every design battle (LLM only). ``joint=True`` gives the
    simultaneous rank sets; ``joint="both"`` both from one fit (variants ``""`` and
    ``" joint"`` of the method's name).
    """
    return partial(_davidson_method, judge=judge, joint=joint, kwargs=kwargs)


def _davidson_method(table, reference, alpha, *, judge, joint, kwargs):
    rows = table[table["judge"] == (reference if judge is None else judge)]
    with warnings.catch_warnings():  # per-draw Laplace notes would flood a 30-draw study
        warnings.simplefilter("ignore")
        model = DavidsonBT(**kwargs).fit(rows[["judge", "left", "right", "outcome"]])
        return _variants(model, alpha, joint)


def _variants(model, alpha, joint):
    # laplace_ok (MAP fits): whether the Laplace draws behind the sets passed their check
    cols = ["item", "rank_lower", "rank_upper", "laplace_ok"]

    def sets(**kw):
        out = model.ranking(ci_prob=1 - alpha, **kw)
        return out[[c for c in cols if c in out.columns]]

    if joint == "both":
        return {"": sets(), " joint": sets(joint=True)}
    return sets(joint=bool(joint))


def ppr_rank_sets(judge: str | Sequence[str], **kwargs) -> Method:
    """Method: prediction-powered rank-sets (:func:`prediction_powered_ranksets`)."""
    return partial(_ppr_method, judge=judge, kwargs=kwargs)


def _ppr_method(table, reference, alpha, *, judge, kwargs):
    return prediction_powered_ranksets(table, reference=reference, judge=judge, alpha=alpha,
                                       **kwargs)


def anchored_rank_sets(judge: str | Sequence[str], *, joint: bool | str = False,
                       **kwargs) -> Method:
    """Method: :class:`~bayesjudge.AnchoredBT` (MAP) rank sets from the reference's votes
    and the LLM judge(s)' verdicts; ``joint`` as in :func:`davidson_rank_sets`."""
    judges = [judge] if isinstance(judge, str) else list(judge)
    return partial(_anchored_method, judges=judges, joint=joint, kwargs=kwargs)


def _anchored_method(table, reference, alpha, *, judges, joint, kwargs):
    from bayesjudge.models.anchored import AnchoredBT

    rows = table[table["judge"].isin([reference, *judges])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = AnchoredBT(reference=reference, **kwargs).fit(rows)
        return _variants(model, alpha, joint)


@dataclass(frozen=True)
class RankSetStudy:
    """Result of :func:`rank_set_study`.

    Attributes
    ----------
    draws : pandas.DataFrame
        One row per (n, draw, method): ``n`` (reference votes kept), ``draw``, ``seed``,
        ``method``, ``coverage`` (share of items whose true rank is in its set),
        ``all_covered``, ``mean_size``, ``laplace_ok`` (1.0 where every set came
        from Laplace draws that passed their check, 0.0 where some did not -- the sets
        are then from an untrustworthy Gaussian; NaN for methods without Laplace draws),
        ``unranked`` (models the method's fit did not see: a draw kept no reference vote
        on them, so a reference-only method cannot place them; their sets are all ranks
        1..n, and every other set reaches that many ranks further down), ``seconds``.
    sets : pandas.DataFrame
        One row per (n, draw, method, item): ``rank_lower``, ``rank_upper``,
        ``true_rank``, ``covered``.
    truth : pandas.Series
        The true rank per item.
    settings : dict
    """

    draws: pd.DataFrame
    sets: pd.DataFrame
    truth: pd.Series
    settings: dict

    def summary(self) -> pd.DataFrame:
        """Mean and Monte Carlo standard error per (n, method) of the three metrics
        (``laplace_ok``: the share of draws whose sets came from trusted Laplace draws;
        ``unranked``, where some fit did not see every model: the mean number it missed)."""
        g = self.draws.groupby(["n", "method"], sort=False)
        # unranked: only where some fit missed a model (0 in every arena_ppr protocol draw)
        means = ["coverage", "all_covered", "mean_size", "laplace_ok", "seconds"]
        if self.draws["unranked"].any():
            means.insert(4, "unranked")
        out = g[means].mean()
        size = g.size().to_numpy()[:, None]
        se = g[["coverage", "all_covered", "mean_size"]].std(ddof=1) / np.sqrt(size)
        out = out.join(se.add_suffix("_se"))
        out["n_draws"] = g.size()
        return out.reset_index()


def _task(task, *, pool, models, per_pair, reference, judges, methods, alpha, truth):
    n, draw, seed = task
    rng = np.random.default_rng(seed)
    design, labelled = balanced_design(pool, models, per_pair, n, rng)
    table = _draw_table(pool, design, labelled, reference, judges)
    return _score(table, methods, reference, alpha, models, truth, len(labelled), draw, seed)


def _score(table, methods, reference, alpha, models, truth, n, draw, seed):
    """Every method's sets on one draw's table, scored against the truth."""
    rows, sets = [], []
    results = []
    for name, method in methods.items():
        start = time.perf_counter()
        res = method(table, reference, alpha)
        secs = time.perf_counter() - start
        # a method may answer several variants of one fit (e.g. marginal and joint sets)
        variants = res.items() if isinstance(res, Mapping) else [("", res)]
        results += [(f"{name}{suffix}", r, secs / len(variants)) for suffix, r in variants]
    for name, res, secs in results:
        res, unranked = _over_all_models(res, models)
        true = truth.loc[list(models)].to_numpy()
        cov = (res["rank_lower"].to_numpy() <= true) & (true <= res["rank_upper"].to_numpy())
        rows.append({"n": n, "draw": draw, "seed": seed, "method": name,
                     "coverage": cov.mean(), "all_covered": bool(cov.all()),
                     "mean_size": float((res["rank_upper"] - res["rank_lower"] + 1).mean()),
                     "laplace_ok": (float(res["laplace_ok"].all()) if "laplace_ok" in res
                                    else np.nan),
                     "unranked": unranked, "seconds": secs})
        sets.append(pd.DataFrame({"n": n, "draw": draw, "method": name,
                                  "item": list(models),
                                  "rank_lower": res["rank_lower"].to_numpy(),
                                  "rank_upper": res["rank_upper"].to_numpy(),
                                  "true_rank": true, "covered": cov}))
    return rows, pd.concat(sets, ignore_index=True)


def _over_all_models(res: pd.DataFrame, models) -> tuple[pd.DataFrame, int]:
    """A method's sets over every model of the study, and how many it did not rank.

    A model absent from the fit (no kept vote) may rank anywhere: its set is 1..n, and
    a fitted model's rank among all n may be lower by up to that many than among the
    fitted ones, so its upper end moves down by as much (kept within n).
    """
    res = res.set_index("item")
    missing = [m for m in models if m not in res.index]
    res = res.reindex(list(models))
    if missing:
        n = len(models)
        upper = np.minimum(res["rank_upper"].to_numpy(float) + len(missing), n)
        res["rank_lower"] = res["rank_lower"].fillna(1)
        res["rank_upper"] = np.where(res["rank_upper"].isna(), n, upper)
        res[["rank_lower", "rank_upper"]] = res[["rank_lower", "rank_upper"]].astype(int)
    return res, len(missing)


def rank_set_study(
    comparisons: pd.DataFrame,
    methods: Mapping[str, Method],
    *,
    n_reference: Sequence[int] = (1000,),
    n_draws: int = 30,
    models: Sequence[str] = ARENA_PPR_MODELS,
    judges: Sequence[str] = tuple(ARENA_PPR_JUDGES.values()),
    reference: str = "human",
    per_pair: int | None = None,
    alpha: float = 0.1,
    truth: pd.Series | None = None,
    random_seed: Seed = 0,
    executor: Executor = None,
    progressbar: bool = False,
) -> RankSetStudy:
    """Run the protocol (module docstring) for every method, ``n`` and draw.

    Parameters
    ----------
    comparisons : pandas.DataFrame
        ``battle, judge, left, right, outcome``; the reference and every judge in
        ``judges`` must have judged a battle for it to enter the pool.
    methods : mapping name -> callable
        ``method(table, reference, alpha)`` returning ``item, rank_lower, rank_upper``
        for the draw's long table (reference rows on the labelled battles, the judges'
        rows on every design battle): e.g. :func:`davidson_rank_sets`,
        :func:`ppr_rank_sets`.
    n_reference : sequence of int
        Reference votes to keep (floored to a multiple of the number of pairs).
        A method may return a mapping ``suffix -> table`` (several variants of one
        fit); each is scored as the method ``name + suffix``.
    n_draws : int
        Random designs per ``n``.
    truth : pandas.Series, optional
        True rank per item; default :func:`reference_ranking` on ``comparisons``.

    Returns
    -------
    RankSetStudy
    """
    n_draws = check_positive_int(n_draws, "n_draws")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}.")
    models, judges = list(models), list(judges)
    pool = _pool(comparisons, models, reference, judges)
    if truth is None:
        truth = reference_ranking(comparisons, models, reference)
    ns = [check_positive_int(n, "n_reference") for n in n_reference]
    seeds = task_seeds(random_seed, n_draws * len(ns))
    tasks = [(n, d, seeds[i * n_draws + d]) for i, n in enumerate(ns) for d in range(n_draws)]
    out = run_tasks(_task, tasks, shared=dict(
        pool=pool, models=models, per_pair=per_pair, reference=reference, judges=judges,
        methods=dict(methods), alpha=float(alpha), truth=truth),
        executor=executor, progressbar=progressbar, desc="rank-set draws")
    draws = pd.DataFrame([r for rows, _ in out for r in rows])
    sets = pd.concat([s for _, s in out], ignore_index=True)
    settings = dict(n_reference=ns, n_draws=n_draws, models=models, judges=judges,
                    reference=reference, per_pair=per_pair, alpha=float(alpha),
                    random_seed=random_seed, pairs=len(list(combinations(models, 2))),
                    pool_battles=len(pool))
    return RankSetStudy(draws=draws, sets=sets, truth=truth, settings=settings)


def _crowd_task(task, *, table, battles, share, one_vote, reference, methods, alpha, models,
                truth):
    draw, seed = task
    rng = np.random.default_rng(seed)
    keep = rng.choice(battles, size=max(1, int(share * len(battles))), replace=False)
    is_ref = table["judge"] == reference
    votes = table[is_ref & table["battle"].isin(keep)]
    if one_vote:  # a uniformly chosen vote of each kept battle
        votes = votes.iloc[rng.permutation(len(votes))].drop_duplicates("battle")
    draw_table = pd.concat([table[~is_ref], votes], ignore_index=True)
    return _score(draw_table, methods, reference, alpha, models, truth, len(keep), draw, seed)


def crowd_rank_set_study(
    comparisons: pd.DataFrame,
    methods: Mapping[str, Method],
    *,
    reference: str = "crowd",
    judges: Sequence[str] = ("gpt-4",),
    share: float = 0.3,
    one_vote: bool = False,
    n_draws: int = 12,
    alpha: float = 0.1,
    random_seed: Seed = 0,
    executor: Executor = None,
    progressbar: bool = False,
) -> RankSetStudy:
    """Rank sets from a crowd's votes on a share of the battles and LLM verdicts on all.

    The protocol of the AnchoredBT card's crowd section (LLMFAO): the items are those
    the reference (a crowd, several votes per battle) voted on, and the battles among
    them with ``judges``' verdicts form the table; per draw a random ``share`` of the
    crowd's battles keeps its votes (all of them, or with ``one_vote`` one chosen
    uniformly), the judges' verdicts are kept on every battle; truth is the
    :class:`~bayesjudge.DavidsonBT` MAP ranking from all the crowd's votes. Methods and
    scores as in :func:`rank_set_study`; ``n`` is the number of crowd battles kept.
    """
    n_draws = check_positive_int(n_draws, "n_draws")
    if not 0.0 < float(share) <= 1.0:
        raise ValueError(f"share must be in (0, 1]; got {share!r}.")
    require_frame(comparisons, "comparisons", ["battle", "judge", "left", "right", "outcome"])
    votes = comparisons[comparisons["judge"] == reference]
    models = list(pd.unique(votes[["left", "right"]].to_numpy().ravel()))
    table = comparisons[comparisons["left"].isin(models) & comparisons["right"].isin(models)
                        & comparisons["judge"].isin([reference, *judges])]
    truth = reference_ranking(comparisons, models, reference)
    seeds = task_seeds(random_seed, n_draws)
    out = run_tasks(_crowd_task, list(zip(range(n_draws), seeds)), shared=dict(
        table=table[["battle", "judge", "left", "right", "outcome"]],
        battles=pd.unique(votes["battle"]), share=float(share), one_vote=bool(one_vote),
        reference=reference, methods=dict(methods), alpha=float(alpha), models=models,
        truth=truth), executor=executor, progressbar=progressbar, desc="crowd draws")
    draws = pd.DataFrame([r for rows, _ in out for r in rows])
    sets = pd.concat([s for _, s in out], ignore_index=True)
    settings = dict(n_draws=n_draws, models=models, judges=list(judges), reference=reference,
                    share=float(share), one_vote=bool(one_vote), alpha=float(alpha),
                    random_seed=random_seed)
    return RankSetStudy(draws=draws, sets=sets, truth=truth, settings=settings)
