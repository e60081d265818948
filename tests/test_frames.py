"""polars and pyarrow tables in, pandas results out, identical to the pandas inputs.

Every registered model's MAP fit on its ``example_data`` is refitted (the same object,
so one compiled structure) on the tables as polars and as pyarrow; the optimum and
the predictions must equal the pandas fit's to 1e-12 (the same data give the same
floating-point operations: any difference is a conversion that changed the data).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge import registered_models
from bayesjudge.baselines import avg_prob
from bayesjudge.data import DataValidationError, as_pandas, validate_comparisons
from bayesjudge.engine import ConvergenceWarning
from bayesjudge.metrics import cycle_rate, metric_table
from bayesjudge.rewards import sft_targets

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

MODELS = registered_models()
TOL = 1e-12


def _polars(df: pd.DataFrame):
    return pl.from_pandas(df.reset_index(drop=True))


def _arrow(df: pd.DataFrame):
    return pa.Table.from_pandas(df, preserve_index=False)


def _convert(arg, to):
    return to(arg) if isinstance(arg, pd.DataFrame) else arg


def _fit(model, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_polars_and_pyarrow_fits_equal_pandas(name):
    example = MODELS[name].example_data(random_seed=0)
    model = MODELS[name](random_seed=3)
    results = {}
    for kind, to in (("pandas", lambda d: d), ("polars", _polars), ("pyarrow", _arrow)):
        _fit(model, [_convert(a, to) for a in example.fit_args])
        # predict() without data reports the fit (map_ covers it); with data, compare it
        predicted = (model.predict(*[_convert(a, to) for a in example.predict_args])
                     if example.predict_args else pd.DataFrame())
        results[kind] = ({k: np.array(v, copy=True) for k, v in model.map_.items()}, predicted)
    point, predicted = results["pandas"]
    for kind in ("polars", "pyarrow"):
        other, other_pred = results[kind]
        assert other.keys() == point.keys()
        for key in point:
            np.testing.assert_allclose(other[key], point[key], rtol=TOL, atol=TOL,
                                       err_msg=f"{name} {kind} {key}")
        assert isinstance(other_pred, pd.DataFrame)
        pd.testing.assert_frame_equal(other_pred.reset_index(drop=True),
                                      predicted.reset_index(drop=True),
                                      check_exact=False, rtol=TOL, atol=TOL)


def _jury() -> pd.DataFrame:
    return pd.DataFrame({
        "judge": ["j1", "j1", "j1", "j2", "j2", "j2"],
        "left": ["000", "1.10", "1.1", "000", "1.10", "1.1"],
        "right": ["1.10", "1.1", "000", "1.1", "000", "1.10"],
        "prob": [0.8, 0.6, 0.3, 0.7, 0.4, 0.55],
    })


def test_ids_come_back_as_the_strings_pandas_sees():
    df = _jury()
    for native in (_polars(df), _arrow(df), pl.from_pandas(df).lazy()):
        back = as_pandas(native)
        assert isinstance(back, pd.DataFrame)
        assert back["left"].tolist() == df["left"].tolist()  # "000", "1.10" kept
        assert back["left"].dtype == df["left"].dtype
        comps = validate_comparisons(native)
        assert comps.items.tolist() == validate_comparisons(df).items.tolist()
    # a column is not a table; non-tables pass through for the caller to judge
    series = pl.Series(["a"])
    assert as_pandas(series) is series
    assert as_pandas(df) is df


class _ArrowStream:
    """A table that only exports the Arrow PyCapsule stream (as DuckDB or Daft do)."""

    def __init__(self, table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


def test_arrow_capsule_tables_are_read_and_non_tables_are_refused():
    df = _jury()
    back = as_pandas(_ArrowStream(_arrow(df)))
    pd.testing.assert_frame_equal(back, df)
    with pytest.raises(DataValidationError, match="comparisons must be a pandas DataFrame"):
        validate_comparisons([("a", "b")])


def test_polars_through_metrics_a_baseline_and_a_reward():
    """(The estimators take counts, not tables.)"""
    df = _jury()
    pd.testing.assert_frame_equal(avg_prob(_polars(df)), avg_prob(df))
    pd.testing.assert_frame_equal(cycle_rate(_polars(df)), cycle_rate(df))
    outputs = pd.DataFrame({"item": ["a", "b", "c"], "prob": [0.2, 0.7, 0.5]})
    annotations = pd.DataFrame({"item": ["a", "a", "b", "b", "c", "c"],
                                "annotator": ["x", "y"] * 3,
                                "label": ["A", "A", "B", "A", "B", "B"]})
    pd.testing.assert_frame_equal(metric_table(_polars(outputs), _arrow(annotations)),
                                  metric_table(outputs, annotations))
    pd.testing.assert_frame_equal(sft_targets(_polars(annotations)), sft_targets(annotations))
