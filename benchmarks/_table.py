"""The benchmark table's common row format (helpers only; no timing here).

Every benchmark script appends its results to one JSON file (``--json PATH``)
as :class:`Row` objects; ``benchmarks/run_all.py`` reads them back and prints
one markdown table, with the machine it ran on first. A row times bayesjudge
and its reference (or peer) in the same run, on the same data; ``ratio`` is
bayesjudge / reference (below 1: bayesjudge is faster) and ``met`` says whether
the row's ``target`` holds.

Targets understood by :func:`evaluate_target` (anything else: ``met`` must be
given explicitly, or stays None):

* ``"<= 1.0"``, ``"< 0.5"``: on the ratio;
* ``"< 3 s"``, ``"<= 120 s"`` (optionally followed by words, e.g.
  ``"< 3 s first fit"``): on ``bayesjudge_s``.

File layout::

    {"runs": [{"script": "bench_x", "machine": {...}, "rows": [{...}, ...]}, ...]}

:func:`write_rows` replaces the run of the same script (rerunning a script does
not duplicate its rows) and keeps every other script's rows.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import re
import sys
import time
from dataclasses import asdict, dataclass, fields
from importlib import metadata
from pathlib import Path

import numpy as np

__all__ = [
    "Row",
    "evaluate_target",
    "fmt_seconds",
    "machine",
    "machine_lines",
    "markdown_table",
    "read_machine",
    "read_rows",
    "write_rows",
]


def median_time(fn, repeats: int = 1) -> tuple[float, object]:
    """(median wall seconds, last result) of ``repeats`` calls of ``fn()``."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


_TARGET = re.compile(r"^\s*(<=|<|>=|>)\s*([0-9.eE+-]+)\s*(s\b|seconds?\b)?")


def evaluate_target(target: str, bayesjudge_s: float | None, ratio: float | None) -> bool | None:
    """Whether ``target`` holds: on the ratio (no unit) or on bayesjudge's seconds ("s").

    Returns None when the target is empty, not understood (e.g. "< 2 GB"), or the
    value it needs is missing.
    """
    m = _TARGET.match(target or "")
    if not m:
        return None
    op, bound, unit = m.group(1), float(m.group(2)), m.group(3)
    value = bayesjudge_s if unit else ratio
    if not _finite(value):
        return None
    return {"<": value < bound, "<=": value <= bound, ">": value > bound,
            ">=": value >= bound}[op]


@dataclass
class Row:
    """One line of the benchmark table.

    Attributes
    ----------
    section : str
        Group of rows (e.g. "Davidson calibration splits").
    workload : str
        What is timed, with its size.
    bayesjudge_s : float or None
        Median seconds of bayesjudge.
    reference : str
        What bayesjudge is compared with ("" for time-only rows).
    reference_s : float or None
        Median seconds of the reference.
    ratio : float or None
        bayesjudge_s / reference_s; computed when not given.
    target : str
        E.g. ``"<= 1.0"`` (on the ratio) or ``"< 3 s"`` (on bayesjudge_s).
    met : bool or None
        Whether the target holds; computed from ``target`` when not given.
    agreement : str
        How far the results of bayesjudge and the reference agree.
    repeats : int
        Repetitions behind each median.
    note : str
        Anything a reader needs (extrapolations, ranges, diagnostics).
    """

    section: str
    workload: str
    bayesjudge_s: float | None = None
    reference: str = ""
    reference_s: float | None = None
    ratio: float | None = None
    target: str = ""
    met: bool | None = None
    agreement: str = ""
    repeats: int = 1
    note: str = ""

    def __post_init__(self) -> None:
        for name in ("bayesjudge_s", "reference_s", "ratio"):
            v = getattr(self, name)
            if v is not None:
                v = float(v)
                setattr(self, name, v if math.isfinite(v) else None)
        if self.ratio is None and _finite(self.bayesjudge_s) and _finite(self.reference_s) \
                and self.reference_s > 0:
            self.ratio = self.bayesjudge_s / self.reference_s
        if self.met is None:
            self.met = evaluate_target(self.target, self.bayesjudge_s, self.ratio)
        else:
            self.met = bool(self.met)
        self.repeats = int(self.repeats)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Row:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


# --------------------------------------------------------------------------- machine


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return None


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> dict:
    """The machine and software a run used (read without importing the heavy packages)."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gb": _ram_gb(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "scipy": _version("scipy"),
        "pymc": _version("pymc"),
        "pytensor": _version("pytensor"),
        "nutpie": _version("nutpie"),
        "bayesjudge": _version("bayesjudge"),
        "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
        "load_avg_1_5_15": load,
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def machine_lines(m: dict) -> list[str]:
    """The machine as markdown bullet lines."""
    ram = f", {m['ram_gb']} GB RAM" if m.get("ram_gb") else ""
    load = m.get("load_avg_1_5_15")
    return [
        f"- **machine**: {m.get('cpu')}, {m.get('cores')} cores{ram}; {m.get('os')}",
        f"- **software**: Python {m.get('python')}, numpy {m.get('numpy')}, scipy "
        f"{m.get('scipy')}, pymc {m.get('pymc')}, pytensor {m.get('pytensor')}, nutpie "
        f"{m.get('nutpie')}, bayesjudge {m.get('bayesjudge')}; OPENBLAS_NUM_THREADS="
        f"{m.get('openblas_threads')}",
        f"- **date**: {m.get('date')}" + ("" if m.get("script_loads") or not load else
                                            f"; load average (1, 5, 15 min) {load}"),
    ] + ([
        "- **load** (1-minute load average of the shared machine when each script wrote its "
        "rows): " + ", ".join(f"{k} {v}" for k, v in m["script_loads"].items())
    ] if m.get("script_loads") else [])


# --------------------------------------------------------------------------- JSON


def _load(path: Path) -> dict:
    if path.exists() and path.stat().st_size:
        return json.loads(path.read_text())
    return {"runs": []}


def write_rows(path: str | os.PathLike, rows: list[Row], script: str | None = None) -> None:
    """Add ``rows`` to the JSON results file ``path`` (created if missing).

    The rows of an earlier run of the same ``script`` (default: the running
    script's file stem) are replaced; every other script's rows are kept.
    """
    path = Path(path)
    script = script or Path(sys.argv[0]).stem
    data = _load(path)
    runs = [r for r in data.get("runs", []) if r.get("script") != script]
    runs.append({"script": script, "machine": machine(),
                 "rows": [r.to_dict() for r in rows]})
    data["runs"] = runs
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, allow_nan=False, default=_json_default))
    os.replace(tmp, path)


def _json_default(x):
    try:
        import numpy as np

        if isinstance(x, np.generic):
            return x.item()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serialisable: {x!r}")


def read_rows(path: str | os.PathLike, order: list[str] | None = None) -> list[Row]:
    """Every row of the results file, runs in ``order`` of script names (else file order)."""
    runs = _load(Path(path)).get("runs", [])
    if order:
        rank = {name: k for k, name in enumerate(order)}
        runs = sorted(runs, key=lambda r: rank.get(r.get("script"), len(rank)))
    return [Row.from_dict(d) for run in runs for d in run["rows"]]


def read_machine(path: str | os.PathLike) -> dict:
    """The machine of the first run in the results file (with the span of run dates)."""
    runs = _load(Path(path)).get("runs", [])
    if not runs:
        return machine()
    m = dict(runs[0]["machine"])
    dates = sorted(r["machine"].get("date", "") for r in runs)
    if dates and dates[0] != dates[-1]:
        m["date"] = f"{dates[0]} .. {dates[-1]}"
    # the load other processes put on the shared cores, when each script finished
    m["script_loads"] = {r["script"]: (r["machine"].get("load_avg_1_5_15") or [None])[0]
                         for r in runs}
    return m


# --------------------------------------------------------------------------- markdown


def fmt_seconds(s: float | None) -> str:
    """Seconds with a readable unit: 12 us, 3.4 ms, 1.25 s, 102 s."""
    if not _finite(s):
        return ""
    if s < 1e-3:
        return f"{s * 1e6:.3g} us"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    if s < 100:
        return f"{s:.3g} s"
    return f"{s:,.0f} s"


def fmt_ratio(r: float | None) -> str:
    if not _finite(r):
        return ""
    if r >= 100:
        return f"{r:,.0f}"
    if r >= 0.1:
        return f"{r:.2f}"
    return f"{r:.2g}"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: list[Row], machine: dict | None = None) -> str:
    """One markdown table of ``rows`` (grouped by section), the machine first."""
    out = []
    if machine:
        out += machine_lines(machine) + [""]
    head = ["workload", "bayesjudge", "reference", "reference time", "ratio", "target",
            "met", "agreement", "reps", "note"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    section = None
    for r in rows:
        if r.section != section:
            section = r.section
            out.append(f"| **{_cell(section)}** |" + " |" * (len(head) - 1))
        met = {True: "yes", False: "**no**", None: ""}[r.met]
        ratio = fmt_ratio(r.ratio)
        cells = [r.workload, fmt_seconds(r.bayesjudge_s), r.reference,
                 fmt_seconds(r.reference_s), f"**{ratio}**" if ratio else "", r.target, met,
                 r.agreement, r.repeats, r.note]
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(out) + "\n"
