"""Run every benchmark and print ONE table (``make benchmark``).

Each script runs as its own subprocess (one after the other: they time things,
and the machine's cores are shared) with ``--json`` pointing at one results file
(default ``benchmarks/results.json``); then the rows of every script are printed
as one markdown table, the machine first, and written to ``benchmarks/TABLE.md``.
Every script's own printed output is streamed and also kept in a log next to the
results file (``results.log``).

    python benchmarks/run_all.py                      # everything (~25 min on 2 cores)
    python benchmarks/run_all.py --quick              # small sizes and repeats (< 3 min)
    python benchmarks/run_all.py --only misclassification scaling

``--quick`` is a smoke test: it writes to a temporary directory (not to
``benchmarks/``) unless ``--results`` / ``--table`` say otherwise. ``--only``
reruns the named scripts and keeps the other scripts' rows in the results file.
``--table-only`` reprints the table from an existing results file.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _table import markdown_table, read_machine, read_rows  # noqa: E402

# name -> (script, full-run arguments, quick arguments); the table follows this order.
SCRIPTS: dict[str, tuple[str, list[str], list[str]]] = {
    "davidson_map": ("bench_davidson_map.py", [],
                     ["--splits", "10", "--repeats", "1", "--naive", "1", "--no-nuts",
                      "--scaling-sizes", "50"]),
    "misclassification": ("bench_misclassification.py", ["--repeats", "2"],
                          ["--n-rep", "200", "--repeats", "1", "--bayes-loop-reps", "420"]),
    "bradley_terry": ("bench_bradley_terry.py", ["--boot", "10"],
                      ["--only", "arena", "--no-nuts", "--arena-rows", "20000",
                       "--noisy-rows", "1000", "--repeats", "1", "--boot", "2"]),
    "preference": ("bench_preference.py", [],
                   ["--splits", "3", "--repeats", "1", "--items", "5000", "--predictions",
                    "100000", "--no-nuts", "--temperature-sizes", "200"]),
    "predict_memory": ("bench_predict_memory.py", [],
                       ["--items", "20000", "--formats", "counts", "--old-items", "500", "1000",
                        "--draws", "200", "--tune", "200", "--chains", "2"]),
    "cold_start": ("bench_cold_start.py", ["--repeats", "2"],
                   ["--repeats", "1", "--samplers", "--no-davidson"]),
    "scaling": ("bench_scaling.py", [],
                ["--max-rows", "10000", "--repeats", "1", "--no-nuts"]),
    "laplace": ("bench_laplace.py", [], ["--articles", "10"]),
    "anchored": ("bench_anchored.py", [],
                 ["--repeats", "1", "--refits", "10", "--chains", "2", "--tune", "200",
                  "--draws", "200", "--no-item-bias"]),
}


def resolve(names: list[str]) -> list[str]:
    """Script keys from names such as ``scaling``, ``bench_scaling`` or ``bench_scaling.py``."""
    out = []
    for name in names:
        key = Path(name).stem.removeprefix("bench_")
        if key not in SCRIPTS:
            raise SystemExit(f"unknown benchmark {name!r}; choose from {', '.join(SCRIPTS)}")
        out.append(key)
    return out


def run_script(key: str, quick: bool, results: Path, log, outdir: Path) -> tuple[int, float]:
    script, full, small = SCRIPTS[key]
    cmd = [sys.executable, str(HERE / script), *(small if quick else full),
           "--json", str(results)]
    if key == "scaling" and quick:  # keep the quick figure out of benchmarks/
        cmd += ["--figure", str(outdir / "scaling.png"), "--csv", str(outdir / "scaling.csv")]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                       os.environ.get("PYTHONPATH")]))}
    banner = f"\n===== {script} {' '.join(cmd[2:])}\n"
    print(banner, flush=True)
    log.write(banner)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    for line in proc.stdout:
        sys.stdout.write(line)
        log.write(line)
    code = proc.wait()
    elapsed = time.perf_counter() - t0
    end = f"===== {script}: exit {code}, {elapsed:.0f} s\n"
    print(end, flush=True)
    log.write(end)
    log.flush()
    return code, elapsed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and repeats (< 3 min)")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help=f"run only these ({', '.join(SCRIPTS)})")
    parser.add_argument("--results", type=Path, help="JSON results file")
    parser.add_argument("--table", type=Path, help="markdown table file")
    parser.add_argument("--table-only", action="store_true",
                        help="print the table of an existing results file; run nothing")
    args = parser.parse_args(argv)

    outdir = Path(tempfile.gettempdir()) / "bayesjudge-bench-quick" if args.quick else HERE
    outdir.mkdir(parents=True, exist_ok=True)
    results = args.results or outdir / "results.json"
    table_path = args.table or outdir / "TABLE.md"
    keys = resolve(args.only) if args.only else list(SCRIPTS)

    failed, spent = [], {}
    if not args.table_only:
        if not args.only and results.exists():
            results.unlink()  # a full run starts a fresh file: no stale rows
        t_all = time.perf_counter()
        with open(results.with_suffix(".log"), "a" if args.only else "w") as log:
            for key in keys:
                code, spent[key] = run_script(key, args.quick, results, log, outdir)
                if code:
                    failed.append(key)
        print(f"all benchmarks: {time.perf_counter() - t_all:.0f} s ("
              + ", ".join(f"{k} {v:.0f} s" for k, v in spent.items()) + ")")

    rows = read_rows(results, order=[Path(SCRIPTS[k][0]).stem for k in SCRIPTS])
    table = markdown_table(rows, read_machine(results))
    header = ("<!-- generated by benchmarks/run_all.py"
              f"{' --quick' if args.quick else ''} from {results.name}; do not edit -->\n\n")
    table_path.write_text(header + table)
    print("\n" + table)
    print(f"results: {results}\ntable:   {table_path}")
    if failed:
        raise SystemExit(f"failed: {', '.join(failed)} (their rows are missing or stale)")


if __name__ == "__main__":
    main()
