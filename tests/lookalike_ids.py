"""Tables of every family whose id columns hold two ids that only look alike (shared cases).

:func:`lookalike_cases` builds, for a function ``alt`` turning an id into its look-alike
(surrounding spaces, another letter case), one table per validator and id column:
``(validator, table, the column named in the warning, the two ids)``.
"""

from __future__ import annotations

from functools import partial

import pandas as pd

from bayesjudge.data import (
    validate_annotations,
    validate_calibration,
    validate_comparisons,
    validate_judge_outputs,
    validate_judgments,
    validate_labels,
    validate_votes,
)


def comparisons(**cols) -> pd.DataFrame:
    """A four-row comparisons table; ``cols`` replace its columns."""
    base = {"context": ["c", "c", "d", "d"], "aspect": ["s", "s", "s", "s"],
            "judge": ["k", "k", "k", "k"], "left": ["a", "b", "a", "b"],
            "right": ["b", "a", "b", "a"], "outcome": ["left", "right", "tie", "left"]}
    return pd.DataFrame({**base, **cols})


def lookalike_cases(alt) -> list[tuple]:
    """One case per validator and id column, its ids ``x`` and ``alt(x)``."""
    def pair(x):
        return [x, alt(x)]

    return [
        (validate_votes, pd.DataFrame({"item": [*pair("gpt-4"), "y"], "vote": [1, -1, 0]}),
         "votes.item", pair("gpt-4")),
        (validate_labels, pd.DataFrame({"item": pair("x"), "label": [1, 0]}),
         "labels.item", pair("x")),
        # a partial, not a lambda: the warning must point at the test's line, not this file
        (partial(validate_judgments, by_system=True),
         pd.DataFrame({"item": ["i", "j"], "judge_label": [1, 0], "system": pair("gpt")}),
         "judgments.system", pair("gpt")),
        (validate_calibration,
         pd.DataFrame({"item": pair("q7"), "judge_label": [1, 0], "human_label": [1, 0]}),
         "calibration.item", pair("q7")),
        (validate_annotations,
         pd.DataFrame({"item": ["i", "i"], "annotator": pair("ann"), "label": ["A", "B"]}),
         "annotations.annotator", pair("ann")),
        (validate_judge_outputs,
         pd.DataFrame({"item": ["i", "i"], "judge": pair("k"), "prob": [0.2, 0.7]}),
         "judge outputs.judge", pair("k")),
        (validate_comparisons, comparisons(judge=[*pair("k"), "k", "k"]), "comparisons.judge",
         pair("k")),
        (validate_comparisons, comparisons(left=["mistral-large", "b", "a", "b"],
                                           right=["b", alt("mistral-large"), "b", "a"]),
         "comparisons.left/right", pair("mistral-large")),
        (validate_comparisons, comparisons(context=["c", "c", alt("c"), alt("c")]),
         "comparisons.context", pair("c")),
        (validate_comparisons, comparisons(aspect=["s", "s", alt("s"), alt("s")]),
         "comparisons.aspect", pair("s")),
    ]
