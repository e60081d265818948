"""Peak memory of ``DavidsonAggregator.predict`` on a million items after a NUTS fit.

``predict`` evaluates the posterior once per distinct vote-count pattern (with n
votes there are at most (n+1)(n+2)/2 of them), in chunks of patterns, and maps the
result back to the items; it never builds the (draws x items x 3) array of
outcome probabilities the straightforward vectorised code would. This script
shows what that buys: a NUTS fit (4 chains x 1000 draws, default priors, global
tie) on a small simulated calibration set, then ``predict`` with 95% intervals on
1,000,000 simulated items of n = 8 votes each (string ids, counts form).

Every measurement runs in a fresh Python process and reads its peak resident set
size from ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` after each stage (imports,
NUTS fit, the 1M-item table, predict), so the numbers are not polluted by earlier
allocations. For comparison, the old per-item approach (probabilities of every
item under every draw, then mean and quantiles over the draws) is run on a few
thousand items and its growth per item is extrapolated; its array alone is
draws x items x 3 x 8 bytes = 4000 x 10^6 x 24 B = 96 GB at a million items.

Run from the repository root:

    python benchmarks/bench_predict_memory.py [--items 1000000] [--votes 8]
        [--json benchmarks/results.json]   # also append the rows of the benchmark table
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MB = 1024**2


def peak_mb() -> float:
    """Peak RSS of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / MB if sys.platform == "darwin" else peak / 1024


# --------------------------------------------------------------------------- worker
def _fit(args):
    from bayesjudge import DavidsonAggregator
    from bayesjudge.datasets import simulate_davidson_votes
    from bayesjudge.engine import ConvergenceWarning

    votes, labels = simulate_davidson_votes(args.calibration, args.votes, beta=2.0, eta0=-0.5,
                                            random_seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return DavidsonAggregator(random_seed=0).fit(
            votes, labels, method="nuts", chains=args.chains, draws=args.draws, tune=args.tune)


def _items(n_items: int, n_votes: int, fmt: str = "counts"):
    """Votes of n_items items with string ids, simulated like real votes.

    ``fmt="counts"``: one row per item (item, n_pos, n_tie, n_neg); ``"long"``: one
    row per vote (item, vote), n_items x n_votes rows.
    """
    import numpy as np
    import pandas as pd

    from bayesjudge.datasets import simulate_davidson_votes

    votes, _ = simulate_davidson_votes(n_items, n_votes, beta=2.0, eta0=-0.5, random_seed=2)
    ids = np.char.add("item-", np.arange(n_items).astype(str)).astype(object)
    counts = votes[["n_pos", "n_tie", "n_neg"]].to_numpy()
    if fmt == "counts":
        return pd.DataFrame({"item": ids, "n_pos": counts[:, 0], "n_tie": counts[:, 1],
                             "n_neg": counts[:, 2]})
    per_item = np.repeat(np.tile(np.array([1, 0, -1], dtype=np.int8), n_items), counts.ravel())
    return pd.DataFrame({"item": np.repeat(ids, counts.sum(axis=1)), "vote": per_item})


def _old_predict(model, table, ci_prob: float = 0.95):
    """The per-item approach: a (draws, items, 3) array, then mean and quantiles."""
    import numpy as np

    from bayesjudge.models.davidson.aggregator import davidson_log_probs, mae_risks, vote_features

    draws = model.param_draws()
    counts = table[["n_pos", "n_tie", "n_neg"]].to_numpy()
    s, _ = vote_features(counts)
    beta, eta = draws["margin_scale"][:, None], draws["tie_logit"][:, None]
    probs = np.exp(davidson_log_probs(beta * s[None, :], eta))  # (draws, items, 3)
    mean = probs.mean(axis=0)
    lo, hi = np.quantile(probs, [(1 - ci_prob) / 2, (1 + ci_prob) / 2], axis=0)
    return mean, lo, hi, mae_risks(mean)


def worker(args) -> None:
    marks = []

    def mark(stage: str, start: float) -> None:
        marks.append({"stage": stage, "peak_mb": peak_mb(), "seconds": time.perf_counter() - start})

    t = time.perf_counter()
    import numpy as np

    from bayesjudge.data import validate_votes
    mark("imports", t)
    t = time.perf_counter()
    model = _fit(args)
    mark(f"NUTS fit ({args.chains} x {args.draws} draws, {args.calibration} items)", t)
    n_draws = args.chains * args.draws
    t = time.perf_counter()
    table = _items(args.items, args.votes, args.format)
    rows = f"{len(table):,} rows" if args.format == "long" else "one row per item"
    mark(f"table of {args.items:,} items ({args.format}, {rows})", t)
    t = time.perf_counter()
    if args.worker == "new":
        pred = model.predict(table)
        mark("predict", t)
        assert len(pred) == args.items and np.isfinite(pred.select_dtypes("number")).all().all()
    else:
        table = validate_votes(table).to_frame()
        mean, lo, hi, _ = _old_predict(model, table)
        mark("old per-item predict", t)
        assert np.isfinite(mean).all() and np.isfinite(lo).all()
    # after the last mark: counting the patterns must not move the measured peak
    n_patterns = len(np.unique(validate_votes(table).counts, axis=0))
    print(json.dumps({"marks": marks, "draws": n_draws, "patterns": n_patterns}))


# --------------------------------------------------------------------------- driver
def run(mode: str, items: int, args, fmt: str = "counts") -> dict:
    cmd = [sys.executable, __file__, "--worker", mode, "--items", str(items), "--format", fmt,
           "--votes", str(args.votes), "--calibration", str(args.calibration),
           "--draws", str(args.draws), "--tune", str(args.tune), "--chains", str(args.chains)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"{mode} worker failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--votes", type=int, default=8)
    parser.add_argument("--calibration", type=int, default=500)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--old-items", type=int, nargs="*", default=[2000, 8000],
                        help="items for the old per-item approach (extrapolated)")
    parser.add_argument("--limit-gb", type=float, default=2.0)
    parser.add_argument("--formats", nargs="+", choices=["counts", "long"],
                        default=["counts", "long"], help="votes table forms to measure")
    parser.add_argument("--json", metavar="PATH",
                        help="append this run's rows to the benchmark table's JSON file")
    parser.add_argument("--worker", choices=["new", "old"], help=argparse.SUPPRESS)
    parser.add_argument("--format", choices=["counts", "long"], default="counts",
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return

    import numpy as np

    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs; every row a fresh process")
    peaks, runs = {}, {}
    for fmt in args.formats:
        new = run("new", args.items, args, fmt)
        draws = new["draws"]
        print(f"\nbayesjudge predict, {args.items:,} items x {args.votes} votes ({fmt} form), "
              f"{draws} draws, {new['patterns']} distinct count patterns")
        print(f"{'stage':<64}{'peak RSS (MB)':>14}{'time (s)':>10}")
        for m in new["marks"]:
            print(f"{m['stage']:<64}{m['peak_mb']:>14.0f}{m['seconds']:>10.1f}")
        peaks[fmt] = (new["marks"][-2]["peak_mb"], new["marks"][-1]["peak_mb"])
        runs[fmt] = new

    rows = []
    for n in args.old_items:
        old = run("old", n, args)
        base, peak = old["marks"][-2]["peak_mb"], old["marks"][-1]["peak_mb"]
        rows.append((n, peak - base, old["marks"][-1]["seconds"], draws * n * 3 * 8 / MB))
    print(f"\nold per-item approach (draws x items x 3 float64), {draws} draws")
    print(f"{'items':>10}{'array (MB)':>12}{'peak RSS increase (MB)':>24}{'time (s)':>10}")
    for n, inc, sec, arr in rows:
        print(f"{n:>10,}{arr:>12.0f}{inc:>24.0f}{sec:>10.1f}")
    (n1, inc1, *_), (n2, inc2, *_) = rows[0], rows[-1]
    per_item = (inc2 - inc1) / (n2 - n1) if n2 != n1 else inc2 / n2
    projected_gb = per_item * args.items / 1024
    array_gb = draws * args.items * 3 * 8 / 1024**3
    print(f"\nat {args.items:,} items: old array {array_gb:.0f} GiB "
          f"({draws} x {args.items:,} x 3 x 8 B = {draws * args.items * 24 / 1e9:.0f} GB), "
          f"old peak RSS increase extrapolated {projected_gb:.0f} GiB "
          f"({per_item * 1024:.0f} KiB per item)")
    ok = True
    for fmt, (before, after) in peaks.items():
        verdict = "OK" if after < args.limit_gb * 1024 else "OVER"
        ok &= verdict == "OK"
        print(f"bayesjudge, {fmt} form: peak RSS of the whole process {after / 1024:.2f} GiB "
              f"({max(0.0, after - before):.0f} MB above the table) vs limit "
              f"{args.limit_gb} GiB: {verdict}")
    if args.json:
        from _table import write_rows

        write_rows(args.json, table_rows(runs, rows, projected_gb, array_gb, args))
    if not ok:
        raise SystemExit(1)


def table_rows(runs, old_rows, projected_gb, array_gb, args) -> list:
    """The rows of the benchmark table (benchmarks/_table.py) from this run's results."""
    from _table import Row

    (n1, _, s1, _), (n2, _, s2, _) = old_rows[0], old_rows[-1]
    per_item_s = (s2 - s1) / (n2 - n1) if n2 != n1 else s2 / n2
    old_s = per_item_s * args.items
    out = []
    for fmt, new in runs.items():
        predict, before = new["marks"][-1], new["marks"][-2]
        fit = new["marks"][1]
        peak = predict["peak_mb"]
        out.append(Row(
            "Memory: DavidsonAggregator.predict after NUTS",
            f"predict with 95% intervals, {args.items:,} items x {args.votes} votes "
            f"({fmt} form), {new['draws']:,} draws; peak RSS of the whole process",
            predict["seconds"],
            "per-item (draws x items x 3) array approach, EXTRAPOLATED from "
            f"{', '.join(f'{n:,}' for n, *_ in old_rows)} items", old_s,
            target=f"< {args.limit_gb:g} GB peak", met=peak < args.limit_gb * 1024,
            agreement=f"peak {peak:,.0f} MB ({max(0.0, peak - before['peak_mb']):,.0f} MB above "
                      f"the table) vs old approach ~{projected_gb:,.0f} GiB extrapolated "
                      f"(its array alone {array_gb:,.0f} GiB)",
            note=f"fresh process; {new['patterns']} distinct count patterns; NUTS fit "
                 f"{fit['seconds']:.1f} s (incl. compilation); old-approach time extrapolated "
                 "linearly in items"))
    return out


if __name__ == "__main__":
    main()
