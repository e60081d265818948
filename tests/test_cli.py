"""The `bayesjudge` command on CSV files: round trip, exact ids, arguments checked first,
one-line errors and warnings, NUTS settings that can be diagnosed."""

import argparse
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge import __version__
from bayesjudge.cli import main
from bayesjudge.datasets import simulate_davidson_votes
from bayesjudge.engine import MIN_CHAINS, MIN_DRAWS, MIN_TUNE, check_nuts_settings


@pytest.fixture(scope="module")
def csv_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    votes, labels = simulate_davidson_votes(200, 8, beta=1.5, eta0=-0.5, random_seed=3)
    # long form, one row per vote, shuffled: the CLI must keep first-appearance order
    rows = []
    for item, p, t, n in votes[["item", "n_pos", "n_tie", "n_neg"]].itertuples(index=False):
        rows += [(item, 1)] * p + [(item, 0)] * t + [(item, -1)] * n
    long = pd.DataFrame(rows, columns=["item", "vote"])
    long.to_csv(d / "votes.csv", index=False)
    labels.iloc[:60].to_csv(d / "labels.csv", index=False)
    return d, long, labels


def _read_exact(path) -> pd.DataFrame:
    """Read an output file with its ids exactly as written."""
    return pd.read_csv(path, dtype={"item": str}, keep_default_na=False)


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_aggregate_round_trip(csv_files, capsys):
    d, long, _ = csv_files
    out = d / "decisions.csv"
    code = main(["aggregate", str(d / "votes.csv"), "--calibration", str(d / "labels.csv"),
                 "--out", str(out)])
    assert code == 0
    got = _read_exact(out)
    assert got["item"].tolist() == [str(i) for i in pd.unique(long["item"])]
    assert set(got["decision"]) <= {-1, 0, 1}
    np.testing.assert_allclose(got[["p_neg", "p_tie", "p_pos"]].sum(axis=1), 1.0, atol=1e-12)
    assert "margin_scale" in capsys.readouterr().out


# ---------------------------------------------------------------------------- ids


IDS = ["000", "3", "1.1", "1.10", "2", "2.0", "NA", "null", "007"]


def test_ids_come_back_exactly_as_written(tmp_path, capsys):
    # Regression: pandas guessed the item type, so 000 came back as 0, 3 as 3.0, and the
    # distinct ids 1.1 / 1.10 and 2 / 2.0 were merged (their votes pooled, rows lost).
    votes = {"000": [1, 1, 1], "3": [-1, -1, 0], "1.1": [1, 1, 1], "1.10": [-1, -1, -1],
             "2": [0, 0, 0], "2.0": [1, 1, 0], "NA": [-1, 0, -1], "null": [0, 0, 1],
             "007": [1, 0, 1]}
    lines = ["item,vote"] + [f"{item},{v}" for item, vs in votes.items() for v in vs]
    (tmp_path / "votes.csv").write_text("\n".join(lines) + "\n")
    labels = {"000": 1, "3": -1, "1.1": 1, "1.10": -1, "2": 0, "2.0": 1, "NA": -1, "null": 0}
    (tmp_path / "labels.csv").write_text(
        "item,label\n" + "".join(f"{k},{v}\n" for k, v in labels.items()))
    out = tmp_path / "decisions.csv"
    assert main(["aggregate", str(tmp_path / "votes.csv"), "--calibration",
                 str(tmp_path / "labels.csv"), "--out", str(out)]) == 0
    assert "decisions for 9 items" in capsys.readouterr().out
    text = out.read_text().splitlines()
    assert [line.split(",")[0] for line in text[1:]] == IDS  # byte-exact ids, every item
    got = _read_exact(out).set_index("item")
    # not pooled: 1.1 (all +1) and 1.10 (all -1), 2 (ties) and 2.0 (+1) decide differently
    assert got.loc["1.1", "decision"] == 1 and got.loc["1.10", "decision"] == -1
    assert got.loc["2", "decision"] != got.loc["2.0", "decision"]


def test_empty_id_is_an_error_naming_column_and_line(tmp_path, capsys):
    (tmp_path / "votes.csv").write_text("item,vote\na,1\n,0\nb,-1\n  ,1\n")
    (tmp_path / "labels.csv").write_text("item,label\na,1\n")
    code = main(["aggregate", str(tmp_path / "votes.csv"), "--calibration",
                 str(tmp_path / "labels.csv"), "--out", str(tmp_path / "d.csv")])
    assert code == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "'item'" in line and "line(s) 3, 5" in line and "votes file" in line
    assert not (tmp_path / "d.csv").exists()


def test_votes_with_vote_and_count_columns_are_refused(tmp_path, capsys):
    (tmp_path / "votes.csv").write_text("item,vote,n_pos,n_tie,n_neg\na,1,1,0,0\n")
    (tmp_path / "labels.csv").write_text("item,label\na,1\n")
    assert main(["aggregate", str(tmp_path / "votes.csv"), "--calibration",
                 str(tmp_path / "labels.csv"), "--out", str(tmp_path / "d.csv")]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "drop the vote column" in line and "n_pos" in line


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolon_and_tab_files_are_read(csv_files, tmp_path, sep, capsys):
    d, long, labels = csv_files
    conf = np.round(np.linspace(0.1, 0.9, len(long)), 2)
    text = "item;vote;confidence\n" + "".join(
        f"{i};{v};{str(c).replace('.', ',')}\n" for (i, v), c in zip(long.to_numpy(), conf))
    (tmp_path / "votes.csv").write_text(text.replace(";", sep))
    labels.iloc[:60].to_csv(tmp_path / "labels.csv", sep=sep, index=False)
    out = tmp_path / "d.csv"
    assert main(["aggregate", str(tmp_path / "votes.csv"), "--calibration",
                 str(tmp_path / "labels.csv"), "--out", str(out)]) == 0
    ref = tmp_path / "reference.csv"
    assert main(["aggregate", str(d / "votes.csv"), "--calibration", str(d / "labels.csv"),
                 "--out", str(ref)]) == 0
    pd.testing.assert_frame_equal(_read_exact(out), _read_exact(ref))
    err = capsys.readouterr().err
    assert "error" not in err
    # the decimal-comma confidences were read (a bad one is refused) and said to be unused
    assert err.count("warning: votes.confidence is not used") == 1


# ---------------------------------------------------------------------------- errors


def test_missing_empty_and_unreadable_files(csv_files, tmp_path, capsys):
    d, _, _ = csv_files
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("item,vote\n")
    (tmp_path / "latin1.csv").write_bytes("item,vote\ncaf\xe9,1\n".encode("latin-1"))
    (tmp_path / "ragged.csv").write_text("item,vote\na,1\nb,1,7,8\n")
    for name, expect in (("nope.csv", "does not exist"), ("empty.csv", "is empty"),
                         ("header.csv", "no rows"), ("latin1.csv", "UTF-8"),
                         (".", "is a folder"),
                         ("ragged.csv", "line 3, saw 4. Fix: give every line as many fields")):
        code = main(["aggregate", str(tmp_path / name), "--calibration",
                     str(d / "labels.csv"), "--out", str(tmp_path / "x.csv")])
        assert code == 2, name
        assert expect in _one_error_line(capsys.readouterr().err), name


def test_wrong_columns_and_bad_values(csv_files, tmp_path, capsys):
    d, _, _ = csv_files
    (tmp_path / "wrong.csv").write_text("id,score\n1,1\n")
    assert main(["aggregate", str(tmp_path / "wrong.csv"), "--calibration",
                 str(d / "labels.csv"), "--out", str(tmp_path / "x.csv")]) == 2
    assert "missing column" in _one_error_line(capsys.readouterr().err)
    (tmp_path / "bad.csv").write_text("item,vote\n1,2\n2,1\n")
    assert main(["aggregate", str(tmp_path / "bad.csv"), "--calibration",
                 str(d / "labels.csv"), "--out", str(tmp_path / "x.csv")]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "votes.vote" in line and "{0, 1, -1}" in line.replace("{-1, 0, 1}", "{0, 1, -1}")
    assert "ternary" in line


def _aggregate(d, *extra, out=None):
    # input files that do not exist: an argument error must come first, before any reading
    return ["aggregate", str(d / "no-votes.csv"), "--calibration", str(d / "no-labels.csv"),
            "--out", str(out or d / "x.csv"), *extra]


@pytest.mark.parametrize("extra, expect", [
    (["--alpha", "0"], "--alpha must be a positive number"),
    (["--kappa", "0"], "--kappa must be a positive number"),
    (["--kappa", "nan"], "--kappa must be a positive number"),
    (["--draws", "0"], f"--draws 0 is too small to diagnose NUTS: the minimum is {MIN_DRAWS}"),
    (["--draws", "1"], "the minimum is"),
    (["--tune", "10"], f"--tune 10 is too small to diagnose NUTS: the minimum is {MIN_TUNE}"),
    (["--chains", "0"], f"--chains 0 is too small to diagnose NUTS: the minimum is {MIN_CHAINS}"),
    (["--chains", "1"], "--chains 1 is too small"),
    (["--draws", "1000000000000"], "--draws 1000000000000 is more than NUTS is allowed"),
    (["--chains", "1000000000000"], "(at most 128)"),
    (["--chains", "100", "--draws", "100000"], "posterior draws is more than"),
    (["--seed", "-1"], "--seed must lie in"),
    (["--draws", "abc"], "invalid int value: 'abc'"),
    (["--method", "vi"], "invalid choice: 'vi'"),
    (["--no-such-option"], "unrecognized arguments"),
])
def test_bad_arguments_fail_before_any_work(tmp_path, capsys, extra, expect):
    assert main(_aggregate(tmp_path, *extra)) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert expect in line and "no-votes" not in line


def test_bad_output_paths_fail_before_any_work(csv_files, tmp_path, capsys):
    d, _, _ = csv_files
    cases = [
        (tmp_path / "missing" / "x.csv", "does not exist; create it first"),
        (tmp_path, "is a folder"),
    ]
    for out, expect in cases:
        assert main(_aggregate(tmp_path, out=out)) == 2
        assert expect in _one_error_line(capsys.readouterr().err)
    # the output must not overwrite an input file
    args = ["aggregate", str(d / "votes.csv"), "--calibration", str(d / "labels.csv"),
            "--out", str(d / "votes.csv")]
    assert main(args) == 2
    assert "would be overwritten" in _one_error_line(capsys.readouterr().err)


def test_demo_arguments_are_checked(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    for extra, expect in (
        (["--out-dir", str(tmp_path / "file")], "is a file, not a folder"),
        (["--out-dir", str(tmp_path / "file" / "sub")], "cannot be created"),
        (["--splits", "0"], "--splits must be at least 2"),
        (["--draws", str(MIN_DRAWS - 1)], f"the minimum is {MIN_DRAWS}"),
        (["--tune", str(MIN_TUNE - 1)], f"the minimum is {MIN_TUNE}"),
    ):
        assert main(["demo", "--out-dir", str(tmp_path / "out"), *extra]) == 2
        assert expect in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(Exception, match="--alpha must be a positive number"):
        main(["--debug", *_aggregate(tmp_path, "--alpha", "0")])
    with pytest.raises(Exception, match="--alpha must be a positive number"):
        main(_aggregate(tmp_path, "--alpha", "0", "--debug"))


def test_version_and_help(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"bayesjudge {__version__}"
    assert main(["aggregate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--tune" in text and "semicolon" in text and "--debug" in text
    assert main([]) == 2
    assert "required" in _one_error_line(capsys.readouterr().err)


def test_warnings_print_as_one_line_with_cli_advice(csv_files, capsys, monkeypatch):
    # flat priors are not a CLI option: provoke the library's MAP warning by hand
    import bayesjudge.models.davidson.aggregator as davidson
    from bayesjudge.engine import ConvergenceWarning, warn_user

    d, _, _ = csv_files
    original = davidson.DavidsonAggregator.fit

    def fit(self, *args, **kwargs):
        warn_user("MAP estimate is at |value| > 30 on the unconstrained scale.\nUse the "
                  "default weakly-informative priors or more calibration data.",
                  ConvergenceWarning)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(davidson.DavidsonAggregator, "fit", fit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the CLI's own handling must take precedence
        assert main(["aggregate", str(d / "votes.csv"), "--calibration",
                     str(d / "labels.csv"), "--out", str(d / "w.csv")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: MAP estimate is at |value| > 30")
    assert "add calibration labels" in err[0] and "--method nuts" in err[0]
    assert "ConvergenceWarning" not in err[0] and ".py:" not in err[0]


def test_python_m_bayesjudge_user_error_is_one_line(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "bayesjudge", "aggregate", str(tmp_path / "v.csv"),
         "--calibration", str(tmp_path / "l.csv"), "--out", str(tmp_path / "no" / "d.csv")],
        capture_output=True, text=True,
    )
    assert res.returncode == 2
    assert _one_error_line(res.stderr).startswith("error: --out")
    assert res.stdout == ""


def test_help_runs_as_installed_command():
    res = subprocess.run([sys.executable, "-m", "bayesjudge", "aggregate", "--help"],
                         capture_output=True, text=True, check=True)
    assert "--calibration" in res.stdout and "item,n_pos,n_tie,n_neg" in res.stdout


# ---------------------------------------------------------------------------- NUTS settings


def test_check_nuts_settings_minima():
    check_nuts_settings(MIN_DRAWS, MIN_TUNE, MIN_CHAINS)
    check_nuts_settings(np.int64(1000), 1000, 4)
    for bad, name, minimum in (((1, 1000, 4), "draws", MIN_DRAWS),
                               ((1000, 0, 4), "tune", MIN_TUNE),
                               ((1000, 1000, 1), "chains", MIN_CHAINS)):
        with pytest.raises(ValueError, match=f"{name}=.* the minimum is {minimum}"):
            check_nuts_settings(*bad)
    for bad in ((10.0, 1000, 4), (True, 1000, 4), ("1000", 1000, 4)):
        with pytest.raises(ValueError, match="must be an integer"):
            check_nuts_settings(*bad)
    # a slip of the keyboard is refused before nuts-rs tries to allocate the trace
    for bad, match in (((10**12, 1000, 4), r"draws=.* \(at most 1,000,000\)"),
                       ((1000, 10**7, 4), r"tune=.* \(at most 1,000,000\)"),
                       ((1000, 1000, 129), r"chains=129 .* \(at most 128\)"),
                       ((100_000, 1000, 41), "4,100,000 posterior draws")):
        with pytest.raises(ValueError, match=match):
            check_nuts_settings(*bad)
    check_nuts_settings(1_000_000, 1_000_000, 4)


def test_engine_sample_refuses_undiagnosable_settings():
    import pymc as pm

    from bayesjudge.engine import Engine

    with pm.Model() as model:
        k = pm.Data("k", np.array(3.0))
        pm.Binomial("y", 10, pm.Beta("p", 1, 1), observed=k)
    engine = Engine(model)
    with pytest.raises(ValueError, match="draws=1 is too small"):
        engine.sample(draws=1, tune=1000, chains=2, random_seed=0)
    assert engine._nutpie is None  # refused before compiling or sampling


def test_a_closed_pipe_ends_quietly():
    # `bayesjudge ... | head -1`: the reader stops; no traceback, the shell's SIGPIPE status
    import subprocess
    import sys

    code = (
        "import argparse, sys\n"
        "from bayesjudge.cli import app\n"
        "def build():\n"
        "    p = argparse.ArgumentParser()\n"
        "    p.set_defaults(func=lambda a: [print('x' * 99) for _ in range(200_000)] and 0,\n"
        "                   check=lambda a: None, debug=False, quiet=False)\n"
        "    return p\n"
        "app.build_parser = build\n"
        "sys.exit(app.main([]))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"x" * 99 + b"\n"
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait() == 141, err
    assert b"Traceback" not in err and b"BrokenPipe" not in err


@pytest.mark.parametrize("command, flag", [("rank", "--method nuts"),
                                           ("calibrate", "--inference nuts"),
                                           ("aggregate", "--method nuts")])
def test_the_library_advice_to_refit_by_nuts_is_given_as_the_command_s_option(command, flag):
    from bayesjudge.cli.messages import cli_words as _cli_words

    flagged = ("3 row(s) have Laplace intervals ... (laplace_ok=False): ['J7']. Refit with "
               "method='nuts' for their intervals.")
    assert _cli_words(flagged, command).endswith(f"Rerun with {flag} for their intervals.")
    hessian = ("no Laplace approximation exists (a flat direction in the likelihood); refit "
               "with method='nuts', or with the default priors (priors=None) if you set others.")
    assert _cli_words(hessian, command).endswith(f"likelihood); rerun with {flag}.")


def test_the_map_warning_s_python_advice_gives_way_to_the_command_line_s():
    from bayesjudge.cli.messages import advice as _advice
    from bayesjudge.cli.messages import cli_words as _cli_words
    from bayesjudge.engine import ConvergenceWarning
    from bayesjudge.engine.optim import NOT_CONVERGED_ADVICE

    text = ("MAP optimisation did not converge (STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT); "
            "the estimate may be off." + NOT_CONVERGED_ADVICE)
    line = _cli_words(text, "rank")
    line += _advice(ConvergenceWarning, line, argparse.Namespace(command="rank", method="map"))
    assert line == ("MAP optimisation did not converge (STOP: TOTAL NO. OF ITERATIONS REACHED "
                    "LIMIT); the estimate may be off. With the CLI: add comparisons or try "
                    "--method nuts (no option sets priors).")


def test_only_rank_is_told_to_map_columns(tmp_path, capsys):
    """A missing or unused column: rank's messages offer --columns, which the other commands
    do not have (report said "map them with --columns", an unrecognised argument there)."""
    judgments = tmp_path / "j.csv"
    judgments.write_text("item,verdict\na,1\nb,0\n")
    calibration = tmp_path / "c.csv"
    calibration.write_text("item,judge_label,human_label\nc,1,1\nd,0,0\ne,1,0\n")
    assert main(["report", str(judgments), "--calibration", str(calibration)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Rename your columns to" in err
    assert "--columns" not in err
    comparisons = tmp_path / "r.csv"
    comparisons.write_text("judge,a,b,outcome\nk,x,y,left\n")
    assert main(["rank", str(comparisons), "--out", str(tmp_path / "o.csv")]) == 2
    assert "map them with --columns THEIRS=ROLE" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["rank", "c.csv", "--out", "o.csv", "--draws", "-5"],  # MAP: the value is still wrong
    ["calibrate", "p.csv", "--labels", "l.csv", "--out", "o.csv", "--tune", "0"],
])
def test_a_wrong_nuts_value_is_refused_under_map_too(argv, tmp_path, capsys):
    argv = [str(tmp_path / a) if a.endswith(".csv") else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --") and err.count("\n") == 1, err
