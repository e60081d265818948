"""Cold start: ``import bayesjudge`` and the first NUTS fit in a fresh Python process.

Issue 10's target: a first NUTS fit of a small model in under 3 s in a fresh
process with warm caches. Every measurement is a new ``python`` process
(``subprocess``); each configuration is run once first, untimed, so PyTensor's
compile cache (``~/.pytensor``), numba's cache and bayesjudge's engine cache are
warm, then ``--repeats`` fresh processes are timed, the configurations taking
turns (round robin) so load from other processes hits them alike. Reported:
median of the time measured inside the child with ``time.perf_counter`` around
the import and around the fit, and the whole process wall time (interpreter
start-up, imports, data, fit, exit) measured by the parent.

Configurations:

* ``import pymc`` (the floor: bayesjudge's models import it) and ``import bayesjudge``:
  the bare import (public names only, imported on first use: ``bayesjudge.lazy``) and
  the import ready to fit (``bj.registered_models()`` imports every model family);
* the command line before any work: ``python -m bayesjudge --help`` and an argument
  error (``rank in.csv --out out.csv --level 2``, exit status 2), process wall time
  against a process that only imports PyMC;
* ``MisclassificationModel(random_seed=1).fit_counts(300, 500, 40, 50, 35, 50,
  method="nuts")`` with the installed default sampler and default settings (4
  chains x (1000 tune + 1000 draws)), then with ``sampler="auto"``, ``"nutpie"`` and
  ``"pymc"`` (PyMC's own NUTS) as reference rows; a sampler name the installed
  bayesjudge rejects is skipped with a note;
* ``DavidsonAggregator(random_seed=1).fit(votes, labels, method="nuts")`` on
  ``simulate_davidson_votes(200, 8, beta=2, eta0=-0.5, random_seed=1)``, default
  sampler (the data are simulated before the timer starts);
* ``AnchoredBT(random_seed=0)`` MAP fit + ``ranking(ci_prob=0.9)`` on arena_ppr's
  human + GPT-4 verdicts among its k most frequent models (human votes kept on a fifth
  of the battles): k = 12 (the warm-up's size, so the "repeat") against a number of
  items no earlier process fitted (k = 11, 10, 9, ... one per repeat). AnchoredBT's
  graph has no static size, so a user's new item set should cost what a repeat does
  (before, each new size compiled its numba code anew: ~90 s);
* ``DavidsonBT(discriminators=True, position_bias=True)`` MAP fit + ``ranking`` on
  arena_ppr's human, GPT-4 and Claude-3 verdicts among the same k models: the Bradley-
  Terry family's graphs have no static size either (before, ~10-30 s per new size).

Run from the repository root::

    python benchmarks/bench_cold_start.py [--repeats 3] [--samplers auto nutpie pymc]
        [--no-davidson] [--no-anchored] [--no-davidson-bt] [--json benchmarks/results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r'''
import json, sys, time, warnings
warnings.simplefilter("ignore")
kind, sampler = sys.argv[1], sys.argv[2]
out = {}
t0 = time.perf_counter()
if kind == "import_pymc":
    import pymc  # noqa: F401
    out["import"] = time.perf_counter() - t0
    print(json.dumps(out)); sys.exit(0)
import bayesjudge as bj
out["import_light"] = time.perf_counter() - t0  # names only: the models load on first use
bj.registered_models()  # every model family (PyMC, PyTensor, ArviZ): ready to fit
out["import"] = time.perf_counter() - t0
import inspect
out["default_sampler"] = inspect.signature(bj.BayesianModel.fit).parameters["sampler"].default
if kind == "import_bj":
    print(json.dumps(out)); sys.exit(0)
kw = {} if sampler == "default" else {"sampler": sampler}
if kind in ("anchored", "davidson_bt"):  # `sampler` holds the number of models k
    import numpy as np
    from bayesjudge.datasets import arena_ppr
    table = arena_ppr()
    judges = ["human", "gpt-4-0125-preview"] + (
        [] if kind == "anchored" else ["claude-3-opus-20240229"])
    table = table[table["judge"].isin(judges)]
    models = table["left"].value_counts().index[: int(sampler)]
    table = table[table["left"].isin(models) & table["right"].isin(models)]
    if kind == "anchored":
        battles = table["battle"].unique()
        keep = np.random.default_rng(0).choice(battles, len(battles) // 5, replace=False)
        table = table[(table["judge"] != "human") | table["battle"].isin(keep)]
        table = table[["battle", "judge", "left", "right", "outcome"]]
        model = bj.AnchoredBT(random_seed=0)
    else:
        table = table[["judge", "left", "right", "outcome"]]
        model = bj.DavidsonBT(discriminators=True, position_bias=True, random_seed=0)
    t0 = time.perf_counter()
    model.fit(table)
    model.ranking(ci_prob=0.9)
    out["fit"] = time.perf_counter() - t0
    out["n_items"] = len(models)
    print(json.dumps(out)); sys.exit(0)
if kind == "misclassification":
    model = bj.MisclassificationModel(random_seed=1)
    fit = lambda: model.fit_counts(300, 500, 40, 50, 35, 50, method="nuts", **kw)
else:
    from bayesjudge.datasets import simulate_davidson_votes
    votes, labels = simulate_davidson_votes(200, 8, beta=2.0, eta0=-0.5, random_seed=1)
    model = bj.DavidsonAggregator(random_seed=1)
    fit = lambda: model.fit(votes, labels, method="nuts", **kw)
t0 = time.perf_counter()
try:
    fit()
except ValueError as err:
    if "sampler" not in str(err):
        raise
    out["rejected"] = str(err).splitlines()[0]
    print(json.dumps(out)); sys.exit(0)
out["fit"] = time.perf_counter() - t0
out["sampler_"] = getattr(model, "sampler_", None) or (sampler if sampler != "default"
                                                        else out["default_sampler"])
d = model.diagnostics_ or {}
out["diag"] = {k: float(d[k]) for k in ("max_rhat", "min_ess_bulk", "divergences") if k in d}
print(json.dumps(out))
'''


#: the command lines timed as whole processes (their own exit status)
CLI = {"cli_help": (["--help"], 0),
       "cli_error": (["rank", "in.csv", "--out", "out.csv", "--level", "2"], 2)}


def run_child(kind: str, sampler: str = "default") -> dict:
    """One fresh process; its JSON line plus the parent's wall time of the whole process."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    if kind in CLI:
        argv, status = CLI[kind]
        proc = subprocess.run([sys.executable, "-m", "bayesjudge", *argv], capture_output=True,
                              text=True, env=env, cwd=ROOT, check=False)
        if proc.returncode != status:
            raise RuntimeError(f"bayesjudge {' '.join(argv)}: status {proc.returncode}:\n"
                               f"{proc.stderr[-3000:]}")
        return {"wall": time.perf_counter() - t0}
    proc = subprocess.run([sys.executable, "-c", CHILD, kind, sampler], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"{kind}/{sampler} failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall"] = wall
    return out


def median(runs: list[dict], key: str) -> float | None:
    vals = [r[key] for r in runs if key in r]
    return statistics.median(vals) if vals else None


def span(runs: list[dict], key: str) -> str:
    vals = [r[key] for r in runs if key in r]
    return f"{min(vals):.2f}-{max(vals):.2f} s" if vals else ""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed fresh processes each")
    parser.add_argument("--samplers", nargs="*", default=["auto", "nutpie", "pymc"],
                        help="samplers timed besides the default (misclassification model)")
    parser.add_argument("--no-davidson", action="store_true")
    parser.add_argument("--no-anchored", action="store_true")
    parser.add_argument("--no-davidson-bt", action="store_true")
    parser.add_argument("--json", metavar="PATH",
                        help="append this run's rows to the benchmark table's JSON file")
    args = parser.parse_args(argv)

    # warm-up of the default first: it also says which sampler is the default
    print("warming caches (one untimed process per configuration) ...", flush=True)
    first = run_child("misclassification")
    default = first["default_sampler"]
    configs = [("import_pymc", "default"), ("import_bj", "default"),
               ("cli_help", "default"), ("cli_error", "default"),
               ("misclassification", "default")]
    skipped = {}
    for s in dict.fromkeys(args.samplers):
        if s == default:
            continue
        warm = run_child("misclassification", s)
        if "rejected" in warm:
            skipped[s] = warm["rejected"]
            print(f"  sampler {s!r} rejected by the installed bayesjudge: {warm['rejected']}")
            continue
        configs.append(("misclassification", s))
    if not args.no_davidson:
        run_child("davidson")
        configs.append(("davidson", "default"))
    sized = [k for k, off in (("anchored", args.no_anchored),
                              ("davidson_bt", args.no_davidson_bt)) if not off]
    for kind in sized:
        run_child(kind, "12")
        configs.append((kind, "12"))
    for kind in ("import_bj", "import_pymc", "cli_help", "cli_error"):
        run_child(kind)

    runs = {c: [] for c in configs}
    runs.update({(kind, "new"): [] for kind in sized})
    for rep in range(args.repeats):
        for c in configs:
            runs[c].append(run_child(*c))
            if c[0] in sized:  # a size no process fitted before: 11, 10, ...
                runs[(c[0], "new")].append(run_child(c[0], str(11 - rep)))

    print(f"\nfresh processes, warm caches; median of {args.repeats} (default sampler: "
          f"{default!r})")
    print(f"{'configuration':<44}{'import':>9}{'first fit':>11}{'process':>10}  sampler, diag")
    for (kind, s), rs in runs.items():
        fit, imp = median(rs, "fit"), median(rs, "import")
        used = rs[-1].get("sampler_", "")
        diag = rs[-1].get("diag", "")
        print(f"{kind + ' / ' + s:<44}{(f'{imp:.2f}s' if imp is not None else ''):>9}"
              f"{(f'{fit:.2f}s' if fit is not None else ''):>11}{median(rs, 'wall'):>9.2f}s"
              f"  {used} {diag}")
    for s, why in skipped.items():
        print(f"misclassification / {s:<24} skipped: {why}")

    if args.json:
        sys.path.insert(0, str(HERE))
        from _table import Row, write_rows

        sec = "Cold start (fresh process, warm caches)"
        rows = []
        imp_bj, imp_pm = runs[("import_bj", "default")], runs[("import_pymc", "default")]
        rows.append(Row(sec, "import bayesjudge (public names, imported on first use)",
                        median(imp_bj, "import_light"), "import pymc", median(imp_pm, "import"),
                        target="<= 0.1", repeats=args.repeats,
                        note="inside the child; bayesjudge.lazy"))
        rows.append(Row(sec, "import bayesjudge + every model family (bj.registered_models())",
                        median(imp_bj, "import"), "import pymc", median(imp_pm, "import"),
                        repeats=args.repeats,
                        note=f"inside the child; process wall {median(imp_bj, 'wall'):.2f} s "
                             f"(pymc alone {median(imp_pm, 'wall'):.2f} s)"))
        for kind, what in (("cli_help", "bayesjudge --help"),
                           ("cli_error", "bayesjudge rank in.csv --out out.csv --level 2 "
                                         "(an argument error, exit 2)")):
            wall = median(runs[(kind, "default")], "wall")
            rows.append(Row(sec, f"{what}: whole process", wall,
                            "a process importing bayesjudge with every model family (what "
                            "the command imported before its checks until 2026-11-28)",
                            median(imp_bj, "wall"), target="<= 0.5", repeats=args.repeats,
                            note="python -m bayesjudge; the arguments are checked before any "
                                 "model, estimator or PyMC is imported; a process importing "
                                 f"only pymc {median(imp_pm, 'wall'):.2f} s (ratio "
                                 f"{wall / median(imp_pm, 'wall'):.2f})"))
        ref = runs.get(("misclassification", "pymc"))
        ref_s = median(ref, "fit") if ref else None
        small = (
            "MisclassificationModel.fit_counts(300, 500, 40, 50, 35, 50), NUTS 4 x (1000 + 1000)")

        def diag(rs):
            d = rs[-1].get("diag") or {}
            return (f"R-hat {d['max_rhat']:.3f}, min bulk ESS {d['min_ess_bulk']:.0f}, "
                    f"{d['divergences']:.0f} divergences") if d else ""

        for (kind, s), rs in runs.items():
            if kind != "misclassification":
                continue
            label = f"default sampler ({default!r})" if s == "default" else f"sampler={s!r}"
            is_ref = s == "pymc"
            rows.append(Row(
                sec, f"first NUTS fit, {label}: {small}", median(rs, "fit"),
                "" if is_ref else "sampler='pymc' (PyMC's own NUTS), first fit",
                None if is_ref else ref_s, target="< 3 s first fit", agreement=diag(rs),
                repeats=args.repeats,
                note=f"ran: {rs[-1].get('sampler_')}; import {median(rs, 'import'):.2f} s, "
                     f"whole process {median(rs, 'wall'):.2f} s; fit range {span(rs, 'fit')}"))
        for s, why in skipped.items():
            rows.append(Row(sec, f"first NUTS fit, sampler={s!r}: {small}", None,
                            target="< 3 s first fit", met=None, repeats=0,
                            note=f"skipped: the installed bayesjudge rejects it ({why})"))
        rs = runs.get(("davidson", "default"))
        if rs:
            rows.append(Row(
                sec, f"first NUTS fit, default sampler ({default!r}): DavidsonAggregator, 200 "
                     "items x 8 votes, NUTS 4 x (1000 + 1000)", median(rs, "fit"),
                target="< 3 s first fit", agreement=diag(rs), repeats=args.repeats,
                note=f"ran: {rs[-1].get('sampler_')}; import {median(rs, 'import'):.2f} s, "
                     f"whole process {median(rs, 'wall'):.2f} s; fit range {span(rs, 'fit')}"))
        labels = {"anchored": "AnchoredBT MAP fit + ranking(ci_prob=0.9), arena_ppr human + "
                              "GPT-4",
                  "davidson_bt": "DavidsonBT(discriminators=True, position_bias=True) MAP fit "
                                 "+ ranking(ci_prob=0.9), arena_ppr human + GPT-4 + Claude-3"}
        for kind in sized:
            same, new = runs[(kind, "12")], runs[(kind, "new")]
            sizes = ", ".join(str(r["n_items"]) for r in new)
            rows.append(Row(
                sec, f"{labels[kind]} among a number of models no process fitted before "
                     f"({sizes})",
                median(new, "fit"), "the same among the 12 models the warm-up fitted",
                median(same, "fit"), target="<= 1.5", repeats=args.repeats,
                note="one compiled graph for every number of items (generic shapes); "
                     f"fit range {span(new, 'fit')} against {span(same, 'fit')}"))
        write_rows(args.json, rows)


if __name__ == "__main__":
    main()
