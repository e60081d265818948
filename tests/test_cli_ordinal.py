"""`bayesjudge rank --model ordinal`: graded verdicts with --levels, checked before any work."""

import numpy as np
import pandas as pd
import pytest

from bayesjudge.cli import main

LEVELS = "much worse,worse,same,better,much better"


def _graded() -> pd.DataFrame:
    """4 items in a clear order, 2 judges, every ordered pair twice, own labels."""
    labels = LEVELS.split(",")
    skill = {"w": 1.5, "x": 0.5, "y": -0.5, "z": -1.5}
    rows = []
    for judge in ("j1", "j2"):
        for a in skill:
            for b in skill:
                if a != b:
                    d = skill[a] - skill[b]
                    for shift in (-0.4, 0.4):
                        code = int(np.searchsorted([-1.8, -0.5, 0.5, 1.8], d + shift))
                        rows.append((judge, a, b, labels[code]))
    return pd.DataFrame(rows, columns=["judge", "left", "right", "outcome"])


def test_rank_ordinal_writes_ranking_and_cut_points(tmp_path, capsys):
    _graded().to_csv(tmp_path / "graded.csv", index=False)
    out, judges = tmp_path / "r.csv", tmp_path / "j.csv"
    assert main(["rank", str(tmp_path / "graded.csv"), "--model", "ordinal", "--levels", LEVELS,
                 "--out", str(out), "--judges", str(judges)]) == 0
    ranking = pd.read_csv(out)
    assert ranking["item"].tolist() == ["w", "x", "y", "z"]
    table = pd.read_csv(judges)
    assert table["judge"].tolist() == ["j1", "j2"]
    assert table["n_comparisons"].tolist() == [24, 24]
    assert "cutpoint[better|much better]_upper" in table
    assert "OrdinalBT (map) on 48 comparisons" in capsys.readouterr().out


@pytest.mark.parametrize("extra, expect", [
    (["--model", "ordinal", "--levels", "A>B"], "--levels 'A>B': levels needs at least 2"),
    (["--model", "ordinal", "--levels", "A>B,a>b ,B>A"], "are the same label"),
    (["--model", "ordinal", "--levels", "B>A,,A>B"], "non-empty strings"),
    (["--model", "ordinal", "--tie", "per-judge"], "--tie does not apply to --model ordinal"),
    (["--model", "ordinal", "--kind", "hard"], "--kind does not apply to --model ordinal"),
    (["--model", "ordinal", "--no-symmetrize"], "does not apply to --model ordinal"),
    (["--levels", "B>A,A>B"], "apply to --model ordinal only"),
    (["--model", "davidson-bt", "--per-judge-cutpoints"], "apply to --model ordinal only"),
])
def test_bad_ordinal_arguments_fail_before_any_work(tmp_path, capsys, extra, expect):
    args = ["rank", str(tmp_path / "no-comparisons.csv"), *extra, "--out", str(tmp_path / "r.csv")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expect in err[0], err
    assert "no-comparisons" not in err[0]


def test_unknown_label_in_the_file_gives_one_line(tmp_path, capsys):
    (tmp_path / "c.csv").write_text("judge,left,right,outcome\nj,a,b,A>>B\nj,b,a,A>>>B\n")
    assert main(["rank", str(tmp_path / "c.csv"), "--model", "ordinal",
                 "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'A>>>B'" in err[0] and "['B>>A', 'B>A', 'A=B'" in err[0], err
    assert not (tmp_path / "r.csv").exists()
