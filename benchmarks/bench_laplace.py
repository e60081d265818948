"""The Laplace draws of a many-context jury: skills' Hessian factored block by block or densely.

Given the judges' parameters, the skills of different ranking groups (articles) share no
term of the log density, so the negative Hessian of the skills is block-diagonal and, with
the global coordinates last, its Cholesky factor has no entry between blocks
(``bayesjudge.engine.hessian.laplace_cholesky(h, blocks)``). INLA
(``bayesjudge.engine.laplace_inla``) factors that Hessian at every value of the judges'
parameters it visits, the spread grid (``laplace_grid``) at every grid point. This script
times, in one run:

* the factor itself on a synthetic 1,505-dimensional Hessian (100 blocks of 15 skills and 5
  global coordinates): block by block against numpy's dense Cholesky, with the largest
  difference of the factors;
* ``BTSigma().fit(jury).ranking()`` on a jury simulated over SummEval articles
  (``simulate_jury``, three judges with sigma 0.5 / 1 / 4; 100 articles, 1,600 skills, by
  default): the library as it is against the same call with the factor forced dense, the
  rank intervals compared (the same draws up to the factors' rounding).

Run from the repository root:

    python benchmarks/bench_laplace.py [--articles 100] [--repeats 3]
        [--json benchmarks/results.json]   # also append the rows of the benchmark table
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _table import Row, median_time, write_rows  # noqa: E402

from bayesjudge import BTSigma  # noqa: E402
from bayesjudge.datasets import load_summeval, simulate_jury  # noqa: E402
from bayesjudge.engine import hessian  # noqa: E402

SECTION = "Laplace draws of a many-context jury"
JUDGES = {"a": 0.5, "b": 1.0, "c": 4.0}
SIMULATE = {"pair_noise": 0.5, "shared_noise": 0.2, "position_bias": {"a": 0.4, "c": -0.3}}


def block_hessian(n_blocks: int, size: int, n_glob: int, seed: int = 0):
    """A negative definite Hessian with ``n_blocks`` blocks and the globals last, and labels."""
    rng = np.random.default_rng(seed)
    labels = np.r_[np.repeat(np.arange(n_blocks), size), -np.ones(n_glob, dtype=np.int64)]
    d = labels.size
    a = np.zeros((d, d))
    glob = np.flatnonzero(labels < 0)
    for b in range(n_blocks):
        idx = np.r_[np.flatnonzero(labels == b), glob]
        m = rng.standard_normal((idx.size, idx.size))
        a[np.ix_(idx, idx)] += m @ m.T + idx.size * np.eye(idx.size)
    return -a, labels


def factor_row(repeats: int) -> Row:
    h, labels = block_hessian(100, 15, 5)
    t_block, blocked = median_time(lambda: hessian.laplace_cholesky(h, labels), 5 * repeats)
    t_dense, dense = median_time(lambda: hessian.laplace_cholesky(h), 5 * repeats)
    return Row(SECTION, "negative Hessian's Cholesky factor, 1,505 coordinates (100 blocks of "
               "15 + 5 globals last), block by block", t_block,
               "numpy's dense Cholesky of the same matrix", t_dense, target="<= 1.0",
               agreement=f"max |factor diff| {np.max(np.abs(blocked - dense)):.1e}",
               repeats=5 * repeats)


def ranking_row(articles: int, repeats: int) -> Row:
    s = load_summeval()
    s = s[s["aspect"] == "coherence"]
    s = s[s["context"].isin(s["context"].unique()[:articles])].reset_index(drop=True)
    table, _ = simulate_jury(s, JUDGES, random_seed=3, **SIMULATE)
    warnings.simplefilter("ignore")  # the flagged rows' warning (reported in the note)
    BTSigma(random_seed=0).fit(table.iloc[:500]).ranking()  # compile outside the timing

    def run():
        model = BTSigma(random_seed=0).fit(table)
        return model.ranking(ci_prob=0.9), model

    original = hessian.laplace_cholesky
    t_ours, (ours, model) = median_time(run, repeats)
    hessian.laplace_cholesky = lambda h, blocks=None: original(h)  # the dense factor
    try:
        t_dense, (dense, _) = median_time(run, repeats)
    finally:
        hessian.laplace_cholesky = original
    same = int((ours[["rank_lower", "rank_upper"]].to_numpy()
                == dense[["rank_lower", "rank_upper"]].to_numpy()).all(axis=1).sum())
    attrs = model.idata_.posterior.attrs
    n_ok = int(ours["laplace_ok"].sum())
    return Row(SECTION, f"BTSigma fit + ranking() (MAP, 90% intervals), simulated jury over "
               f"{articles} SummEval articles ({len(ours):,} skills, {len(table):,} "
               f"comparisons), skills' factors block by block", t_ours,
               "the same with every factor dense", t_dense, target="<= 1.0",
               agreement=f"rank intervals equal for {same} of {len(ours)} skills",
               repeats=repeats,
               note=f"laplace_ok True for {n_ok} of {len(ours)} skills (Pareto k "
                    f"{attrs.get('pareto_k', float('nan')):.2f}; "
                    f"{attrs.get('inference', '')})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--articles", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = [factor_row(args.repeats), ranking_row(args.articles, args.repeats)]
    for r in rows:
        print(f"{r.workload}: {r.bayesjudge_s:.3g} s vs {r.reference_s:.3g} s "
              f"(ratio {r.ratio:.3g}); {r.agreement}; {r.note}")
    if args.json:
        write_rows(args.json, rows, script=Path(__file__).name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
