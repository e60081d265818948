"""README.md's code blocks, run or checked, so the README cannot drift from the code.

* Every ```python block runs, in README order, in one shared namespace named
  ``__main__`` (later blocks use ``bj`` from the first), in a temporary working directory (so
  ``model.save("davidson.nc")`` writes there), with every warning an error -- except
  third-party DeprecationWarnings (attributed to a module outside bayesjudge) and the
  warnings listed in ``ALLOWED``, each with its reason. A ConvergenceWarning (e.g. a
  divergent transition in a NUTS example) fails the test.
* Every ```bash line starting with ``bayesjudge ``: the subcommand is listed by
  ``bayesjudge --help``, and each ``--flag``, each listed choice (``map|nuts``) and
  each placeholder file name (``VOTES.csv``) appears in ``bayesjudge <command> --help``.
  Placeholder lines cannot run; lines asking for ``--help``/``--version`` are run, and
  for a placeholder-free command (``bayesjudge demo``) its ``--help`` is run (the demo
  itself runs in ``test_demo.py``).
* Every ```bash line starting with ``make ``: the target is a rule of the Makefile.

The README is read when the tests are collected, so a new block is picked up
without touching this file.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAKEFILE = ROOT / "Makefile"

#: Warnings the README examples may raise, with the reason each is not a README bug.
ALLOWED: list[tuple[type[Warning], str, str]] = []


def _blocks(language: str) -> list[tuple[int, str]]:
    """(first line number, source) of every ```language block of the README."""
    text = README.read_text(encoding="utf-8")
    out = []
    for match in re.finditer(rf"^```{language}[ \t]*\n(.*?)^```", text, re.M | re.S):
        out.append((text.count("\n", 0, match.start(1)) + 1, match.group(1)))
    return out


PYTHON = _blocks("python")
SHELL_LINES = [line.split("#")[0].strip() for _, block in _blocks("bash")
               for line in block.splitlines()]
CLI_LINES = [line for line in SHELL_LINES if line.startswith("bayesjudge ")]
MAKE_LINES = [line for line in SHELL_LINES if line.startswith("make ")]


def test_readme_has_the_blocks_this_file_checks():
    assert len(PYTHON) >= 2 and CLI_LINES and MAKE_LINES


# --------------------------------------------------------------------------- python
@pytest.fixture(scope="module")
def readme_session(tmp_path_factory):
    """Shared namespace of the python blocks and how many of them have run."""
    # "__main__", as when the blocks are saved to a script and run: the Dask block's
    # `if __name__ == "__main__":` guard must hold here too
    return {"namespace": {"__name__": "__main__"}, "done": 0,
            "cwd": tmp_path_factory.mktemp("readme"), "seconds": {}}


def _strict_warnings():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error")
    # Third-party deprecations attributed to their own module are not the README's;
    # one attributed to bayesjudge or to the README code itself is.
    for category in (DeprecationWarning, PendingDeprecationWarning):
        warnings.filterwarnings("ignore", category=category,
                                module=r"(?!bayesjudge|__main__)")
    for category, message, _reason in ALLOWED:
        warnings.filterwarnings("ignore", category=category, message=message)
    return ctx


def _run_blocks_through(session: dict, index: int) -> None:
    """Run blocks session["done"] .. index (earlier blocks define names later ones use)."""
    for k in range(session["done"], index + 1):
        line, source = PYTHON[k]
        code = compile("\n" * (line - 1) + source, str(README), "exec")  # README line numbers
        start = time.perf_counter()
        exec(code, session["namespace"])
        session["seconds"][k] = time.perf_counter() - start
        session["done"] = k + 1


@pytest.mark.parametrize("index", range(len(PYTHON)),
                         ids=[f"block{k + 1}-line{line}" for k, (line, _) in enumerate(PYTHON)])
def test_python_block_runs_without_warnings(index, readme_session, monkeypatch):
    monkeypatch.chdir(readme_session["cwd"])
    ctx = _strict_warnings()
    try:
        _run_blocks_through(readme_session, index)
    finally:
        ctx.__exit__(None, None, None)
    seconds = readme_session["seconds"].get(index)
    print(f"README python block {index + 1} (line {PYTHON[index][0]}): {seconds:.1f} s")


# --------------------------------------------------------------------------- command line
def _bayesjudge() -> list[str]:
    script = Path(sys.executable).with_name("bayesjudge")
    return [str(script)] if script.exists() else [sys.executable, "-m", "bayesjudge"]


@functools.cache
def _cli(*args: str) -> str:
    result = subprocess.run([*_bayesjudge(), *args], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 0, f"bayesjudge {' '.join(args)}: {result.stderr}"
    return result.stdout


PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*\.\w+$")  # VOTES.csv, DECISIONS.csv


@pytest.mark.parametrize("line", CLI_LINES, ids=[line.split()[1] for line in CLI_LINES])
def test_cli_line_matches_the_command(line):
    tokens = line.replace("[", " ").replace("]", " ").split()[1:]
    if not tokens or tokens[0].startswith("-"):  # bayesjudge --help, --version
        assert all(t in ("--help", "-h", "--version") for t in tokens), line
        _cli(*tokens)
        return
    command, rest = tokens[0], tokens[1:]
    listed = _cli("--help")
    assert re.search(rf"^\s+{re.escape(command)}\b", listed, re.M), (
        f"README names 'bayesjudge {command}', which `bayesjudge --help` does not list")
    usage = _cli(command, "--help")
    for k, token in enumerate(rest):
        if token.startswith("--"):
            assert re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", usage), (
                f"README passes {token} to 'bayesjudge {command}', its --help has no such option")
            choices = rest[k + 1] if k + 1 < len(rest) and "|" in rest[k + 1] else None
            if choices:
                listed_choices = re.search(rf"{re.escape(token)} \{{([^}}]*)\}}", usage)
                assert listed_choices, f"{token} takes no choices in 'bayesjudge {command}'"
                assert set(choices.split("|")) == set(listed_choices.group(1).split(",")), (
                    f"README lists {token} {choices}, the command takes "
                    f"{{{listed_choices.group(1)}}}")
        elif PLACEHOLDER.match(token):
            assert token in usage, f"placeholder {token} is not in 'bayesjudge {command} --help'"


def _make_targets() -> set[str]:
    targets = set()
    for line in MAKEFILE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([\w./$() -]+?)\s*:(?![=:])", line)
        if match and not line.startswith((".", "\t", "#")):
            targets.update(match.group(1).split())
    return targets


@pytest.mark.parametrize("line", MAKE_LINES, ids=[line.split()[1] for line in MAKE_LINES])
def test_make_line_names_a_makefile_target(line):
    target = line.split()[1]
    assert target in _make_targets(), f"README runs `make {target}`; the Makefile has no rule"


def test_make_targets_are_phony_and_make_knows_them():
    """`make -n <target>` parses the Makefile and finds the rule (nothing is run)."""
    make = shutil.which("make")
    phony = re.search(r"^\.PHONY:(.*)$", MAKEFILE.read_text(encoding="utf-8"), re.M)
    for line in MAKE_LINES:
        target = line.split()[1]
        assert phony and target in phony.group(1).split(), f"{target} is not .PHONY"
        if make:
            result = subprocess.run([make, "-n", "-C", str(ROOT), target], capture_output=True,
                                    text=True, timeout=60)
            assert "No rule to make target" not in result.stderr, result.stderr
