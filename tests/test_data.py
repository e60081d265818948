"""bayesjudge.data: one form of votes, messages that fit the column, ids kept as given,
and the layering rules of the data and inference modules."""

import ast
from pathlib import Path

import pandas as pd
import pytest

from bayesjudge.data import (
    DataValidationError,
    check_integer_values,
    validate_calibration,
    validate_judgments,
    validate_labels,
    validate_votes,
)

PACKAGE = Path(__file__).resolve().parents[1] / "bayesjudge"


def test_votes_with_both_forms_are_refused():
    both = pd.DataFrame({"item": ["a", "b"], "vote": [1, -1], "n_pos": [1, 0],
                         "n_tie": [0, 0], "n_neg": [0, 1]})
    with pytest.raises(DataValidationError, match="both a vote column") as exc:
        validate_votes(both)
    assert "drop the vote column" in str(exc.value) and "['n_pos', 'n_tie', 'n_neg']" in str(
        exc.value)
    # a single stray count column next to vote is refused too, naming it
    with pytest.raises(DataValidationError, match=r"\['n_tie'\]"):
        validate_votes(both.drop(columns=["n_pos", "n_neg"]))


@pytest.mark.parametrize("call", [
    lambda: validate_judgments(pd.DataFrame({"item": [1, 2], "judge_label": [2, 1]})),
    lambda: validate_calibration(pd.DataFrame({"item": [1, 2], "judge_label": [1, 0],
                                               "human_label": [-1, 1]})),
    lambda: validate_labels(pd.DataFrame({"item": [1, 2], "label": [1, 3]}), allowed=(0, 1)),
])
def test_binary_columns_do_not_mention_ternary_codes(call):
    with pytest.raises(DataValidationError) as exc:
        call()
    msg = str(exc.value)
    assert "{0, 1}" in msg and "1 = 'correct'" in msg
    assert "ternary" not in msg and "tie" not in msg and "+1" not in msg


def test_ternary_and_custom_messages():
    with pytest.raises(DataValidationError, match=r"ternary: \+1 = first/A better"):
        validate_labels(pd.DataFrame({"item": [1], "label": [5]}))
    df = pd.DataFrame({"x": [7]})
    with pytest.raises(DataValidationError, match=r"\{1, 2, 3\}\.$"):
        check_integer_values(df, "t", "x", (1, 2, 3))
    with pytest.raises(DataValidationError, match=r"\(stars\)\.$"):
        check_integer_values(df, "t", "x", (1, 2, 3), meaning="stars")


def test_string_ids_stay_distinct_and_exact():
    ids = ["000", "0", "1.1", "1.10", "2", "2.0", "NA"]
    votes = pd.DataFrame({"item": ids, "vote": [1, -1, 1, -1, 0, 1, 0]})
    counts = validate_votes(votes)
    assert list(counts.items) == ids
    assert counts.counts.sum(axis=1).tolist() == [1] * len(ids)


def test_python_api_keeps_the_callers_dtype():
    counts = validate_votes(pd.DataFrame({"item": [3, 1, 3], "vote": [1, 0, -1]}))
    assert counts.items.tolist() == [3, 1] and counts.items.dtype.kind == "i"


# ---------------------------------------------------------------------------- contract


LOW_LAYERS = [*sorted((PACKAGE / "data").glob("*.py")),
              *sorted((PACKAGE / "engine").glob("*.py"))]
HIGHER = ("base", "estimators", "models", "datasets", "experiments", "cli", "demo", "baselines",
          "metrics", "plots", "priors")
OWNED = [*LOW_LAYERS, *sorted((PACKAGE / "cli").glob("*.py")), PACKAGE / "__main__.py"]


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


@pytest.mark.parametrize("path", LOW_LAYERS, ids=lambda p: p.name)
def test_data_and_inference_import_no_higher_layer(path):
    for module, _ in _imports(path):
        parts = module.split(".")
        assert not (parts[0] == "bayesjudge" and len(parts) > 1 and parts[1] in HIGHER), module


@pytest.mark.parametrize("path", OWNED, ids=lambda p: p.name)
def test_no_private_imports_and_no_stale_citations(path):
    for module, names in _imports(path):
        if module.startswith("bayesjudge"):
            private = [n for n in names if n.startswith("_") and not n.endswith("__")]
            assert not private, (module, private)
    text = path.read_text()
    assert "DESIGN.md" not in text and ".txt" not in text
