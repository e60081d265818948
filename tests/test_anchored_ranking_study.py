"""The arena_ppr rank-set protocol on a small simulated arena: design, metrics, seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesjudge import DataValidationError
from bayesjudge.experiments.anchored_ranking import (
    _pool,
    balanced_design,
    davidson_rank_sets,
    ppr_rank_sets,
    rank_set_study,
)

MODELS = ["m0", "m1", "m2", "m3"]


def _arena(seed=0, per_pair=(12, 15, 20, 13, 30, 14)):
    rng = np.random.default_rng(seed)
    rows, b = [], 0
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    for (i, j), count in zip(pairs, per_pair, strict=True):
        for _ in range(count):
            left, right = (MODELS[i], MODELS[j]) if rng.random() < 0.5 else (MODELS[j], MODELS[i])
            p = 1 / (1 + np.exp(-(MODELS.index(right) - MODELS.index(left)) * 0.8))
            truth = "left" if rng.random() < p else "right"
            for judge in ("human", "llm"):
                out = truth if judge == "human" or rng.random() < 0.8 else "tie"
                rows.append((str(b), judge, left, right, out))
            b += 1
    return pd.DataFrame(rows, columns=["battle", "judge", "left", "right", "outcome"])


def _fixed_method(table, reference, alpha):
    """A method that always answers ranks [1, 2] for m0, m1 and [3, 4] for m2, m3."""
    return pd.DataFrame({"item": MODELS, "rank_lower": [1, 1, 3, 3], "rank_upper": [2, 2, 4, 4]})


def test_design_is_balanced_per_pair_and_nested():
    arena = _arena()
    pool = _pool(arena, MODELS, "human", ["llm"])
    design, labelled = balanced_design(pool, MODELS, None, 24, np.random.default_rng(1))
    pairs = pool.loc[design, ["left", "right"]].apply(lambda r: tuple(sorted(r)), axis=1)
    assert (pairs.value_counts() == 12).all() and len(pairs.value_counts()) == 6
    lab_pairs = pool.loc[labelled, ["left", "right"]].apply(lambda r: tuple(sorted(r)), axis=1)
    assert (lab_pairs.value_counts() == 4).all()  # 24 // 6 pairs
    assert set(labelled) <= set(design) and len(set(design)) == len(design)
    with pytest.raises(ValueError, match="per_pair"):
        balanced_design(pool, MODELS, 13, 24, np.random.default_rng(1))


def test_study_scores_every_method_against_the_truth():
    arena = _arena()
    truth = pd.Series([1, 3, 2, 4], index=MODELS)
    study = rank_set_study(arena, {"fixed": _fixed_method, "ppr": ppr_rank_sets("llm")},
                           n_reference=(12, 24), n_draws=3, models=MODELS, judges=["llm"],
                           truth=truth, random_seed=5)
    fixed = study.draws[study.draws["method"] == "fixed"]
    # truth ranks 1, 3, 2, 4: m1 (3 not in [1, 2]) and m2 (2 not in [3, 4]) are missed
    assert (fixed["coverage"] == 0.5).all() and (~fixed["all_covered"]).all()
    assert (fixed["mean_size"] == 2).all()
    assert sorted(study.draws["n"].unique()) == [12, 24]
    summary = study.summary()
    assert len(summary) == 4 and (summary["n_draws"] == 3).all()
    assert "unranked" not in summary and (study.draws["unranked"] == 0).all()
    again = rank_set_study(arena, {"ppr": ppr_rank_sets("llm")}, n_reference=(12, 24),
                           n_draws=3, models=MODELS, judges=["llm"], truth=truth, random_seed=5)
    pd.testing.assert_frame_equal(
        study.sets[study.sets["method"] == "ppr"].reset_index(drop=True),
        again.sets.reset_index(drop=True))


def _flagged_method(table, reference, alpha):
    """The fixed sets, one of them from Laplace draws that failed their check."""
    return _fixed_method(table, reference, alpha).assign(laplace_ok=[True, True, False, True])


def test_study_records_whether_the_sets_came_from_trusted_laplace_draws():
    arena = _arena()
    truth = pd.Series([1, 3, 2, 4], index=MODELS)
    study = rank_set_study(arena, {"flagged": _flagged_method, "ppr": ppr_rank_sets("llm"),
                                   "human": davidson_rank_sets()},
                           n_reference=(24,), n_draws=2, models=MODELS, judges=["llm"],
                           truth=truth, random_seed=5)
    ok = study.draws.groupby("method")["laplace_ok"]
    assert (ok.max()["flagged"], ok.count()["ppr"]) == (0.0, 0)  # one flag fails a draw; NaN
    assert set(study.draws.loc[study.draws["method"] == "human", "laplace_ok"]) <= {0.0, 1.0}
    summary = study.summary().set_index("method")["laplace_ok"]
    assert summary["flagged"] == 0.0 and np.isnan(summary["ppr"]) and summary["human"] >= 0


def _partial_method(table, reference, alpha):
    """Sets for three of the four models, as a fit that never saw m3 answers."""
    return pd.DataFrame({"item": MODELS[:3], "rank_lower": [1, 2, 2], "rank_upper": [1, 3, 3]})


def test_a_model_a_method_could_not_rank_gets_every_rank_and_widens_the_others():
    # m3 unseen: it may rank anywhere (1..4), and each seen model's rank among all four may
    # be one lower than among three: [1, 2], [2, 4], [2, 4]. Truth 1, 3, 2, 4: all covered
    truth = pd.Series([1, 3, 2, 4], index=MODELS)
    study = rank_set_study(_arena(), {"partial": _partial_method}, n_reference=(24,),
                           n_draws=1, models=MODELS, judges=["llm"], truth=truth,
                           random_seed=5)
    sets = study.sets.set_index("item")
    assert sets["rank_lower"].tolist() == [1, 2, 2, 1]
    assert sets["rank_upper"].tolist() == [2, 4, 4, 4]
    row = study.draws.iloc[0]
    assert row["unranked"] == 1 and row["all_covered"] and row["mean_size"] == (2 + 3 + 3 + 4) / 4
    assert study.summary()["unranked"].iloc[0] == 1


def test_unknown_models_are_named():
    with pytest.raises(DataValidationError, match="m9"):
        rank_set_study(_arena(), {"f": _fixed_method}, models=[*MODELS, "m9"], judges=["llm"])


def test_crowd_study_keeps_a_share_of_the_crowds_battles_and_the_judges_everywhere():
    from bayesjudge.experiments.anchored_ranking import crowd_rank_set_study
    from bayesjudge.models.anchored.simulate import simulate_battles

    table, _ = simulate_battles(np.linspace(-1, 1, 6), 300, random_seed=2, reference_share=0.5,
                                crowd=3)
    seen = []

    def spy(draw_table, reference, alpha):
        seen.append(draw_table)
        items = [f"m{i}" for i in range(6)]
        return pd.DataFrame({"item": items, "rank_lower": 1, "rank_upper": 6})

    n_crowd = table.loc[table["judge"] == "human", "battle"].nunique()
    for one_vote in (False, True):
        seen.clear()
        st = crowd_rank_set_study(table, {"spy": spy}, reference="human",
                                  judges=["judge-good"], share=0.4, one_vote=one_vote,
                                  n_draws=2, random_seed=1)
        assert (st.draws["coverage"] == 1.0).all() and (st.draws["mean_size"] == 6).all()
        assert (st.draws["n"] == int(0.4 * n_crowd)).all() and len(st.summary()) == 1
        for t in seen:
            votes = t[t["judge"] == "human"].groupby("battle").size()
            assert len(votes) == int(0.4 * n_crowd)
            assert set(votes) == ({1} if one_vote else {3})
            assert set(t["judge"]) == {"human", "judge-good"}
            assert (t["judge"] == "judge-good").sum() == 300  # the judge on every battle
        assert not seen[0].equals(seen[1])  # each draw its own battles
    assert sorted(st.truth.index) == [f"m{i}" for i in range(6)]
