"""Tables in, tables validated: schemas of the long tables (``schema``, ``judgments``)
and the small real datasets shipped with the package (files in this folder, see its
README, LICENSE and NOTICE).

The names below are imported on first use (:mod:`bayesjudge.lazy`): the ``bayesjudge``
command writes its help and checks its arguments from :mod:`~bayesjudge.data.vocabulary`
and :mod:`~bayesjudge.data.messages` alone, without numpy or pandas.
"""

from typing import TYPE_CHECKING

from bayesjudge.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(["OUTCOME_LABELS", "AnnotationCounts", "JudgeOutputs", "align_outputs",
                     "check_both_classes", "validate_annotations", "validate_judge_outputs"],
                    "bayesjudge.data.annotations"),
    **dict.fromkeys(["comparisons_table", "from_arena"], "bayesjudge.data.arena"),
    **dict.fromkeys(["COMPARISON_OUTCOMES", "BattleContextWarning", "Comparisons",
                     "validate_comparisons"], "bayesjudge.data.comparisons"),
    **dict.fromkeys(["KNOWN_COLUMNS", "UnusedColumnWarning", "expand_counts"],
                    "bayesjudge.data.counts"),
    "as_pandas": "bayesjudge.data.frames",
    **dict.fromkeys(["MisclassificationCounts", "check_calibration_classes",
                     "validate_calibration", "validate_judgment_counts", "validate_judgments",
                     "validate_misclassification"], "bayesjudge.data.judgments"),
    **dict.fromkeys(["DataValidationError", "show_rows", "show_values"],
                    "bayesjudge.data.messages"),
    **dict.fromkeys(["BINARY", "COUNT_COLUMNS", "TERNARY", "Labels", "VoteCounts",
                     "align_calibration", "check_ci_prob", "check_header_rows",
                     "check_integer_values", "check_no_missing", "check_unit_interval",
                     "require_frame", "validate_labels", "validate_votes",
                     "warn_spaced_ids"], "bayesjudge.data.schema"),
    "symmetrize": "bayesjudge.data.symmetrization",
    **dict.fromkeys(["ARENA_COLUMNS", "ARENA_OUTCOMES", "COLUMN_ROLES", "DEFAULT_LEVELS",
                     "ID_COLUMNS", "LINE_INDEX", "ONE_JUDGE", "check_levels", "label_key"],
                    "bayesjudge.data.vocabulary"),
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "ARENA_COLUMNS", "ARENA_OUTCOMES", "BINARY", "COLUMN_ROLES", "COMPARISON_OUTCOMES",
    "COUNT_COLUMNS", "DEFAULT_LEVELS", "ID_COLUMNS", "KNOWN_COLUMNS", "LINE_INDEX",
    "ONE_JUDGE", "OUTCOME_LABELS", "TERNARY", "AnnotationCounts", "BattleContextWarning",
    "Comparisons", "DataValidationError", "JudgeOutputs", "Labels",
    "MisclassificationCounts", "UnusedColumnWarning", "VoteCounts", "align_calibration",
    "align_outputs", "as_pandas", "check_both_classes", "check_calibration_classes",
    "check_ci_prob", "check_header_rows", "check_integer_values", "check_levels",
    "check_no_missing", "check_unit_interval", "comparisons_table", "expand_counts",
    "from_arena", "label_key", "require_frame", "show_rows", "show_values", "symmetrize",
    "validate_annotations", "validate_calibration", "validate_comparisons",
    "validate_judge_outputs", "validate_judgment_counts", "validate_judgments",
    "validate_labels", "validate_misclassification", "validate_votes", "warn_spaced_ids",
]

if TYPE_CHECKING:  # the same names for type checkers (tests/test_lazy_imports.py)
    from bayesjudge.data.annotations import (
        OUTCOME_LABELS,
        AnnotationCounts,
        JudgeOutputs,
        align_outputs,
        check_both_classes,
        validate_annotations,
        validate_judge_outputs,
    )
    from bayesjudge.data.arena import comparisons_table, from_arena
    from bayesjudge.data.comparisons import (
        COMPARISON_OUTCOMES,
        BattleContextWarning,
        Comparisons,
        validate_comparisons,
    )
    from bayesjudge.data.counts import KNOWN_COLUMNS, UnusedColumnWarning, expand_counts
    from bayesjudge.data.frames import as_pandas
    from bayesjudge.data.judgments import (
        MisclassificationCounts,
        check_calibration_classes,
        validate_calibration,
        validate_judgment_counts,
        validate_judgments,
        validate_misclassification,
    )
    from bayesjudge.data.messages import DataValidationError, show_rows, show_values
    from bayesjudge.data.schema import (
        BINARY,
        COUNT_COLUMNS,
        TERNARY,
        Labels,
        VoteCounts,
        align_calibration,
        check_ci_prob,
        check_header_rows,
        check_integer_values,
        check_no_missing,
        check_unit_interval,
        require_frame,
        validate_labels,
        validate_votes,
        warn_spaced_ids,
    )
    from bayesjudge.data.symmetrization import symmetrize
    from bayesjudge.data.vocabulary import (
        ARENA_COLUMNS,
        ARENA_OUTCOMES,
        COLUMN_ROLES,
        DEFAULT_LEVELS,
        ID_COLUMNS,
        LINE_INDEX,
        ONE_JUDGE,
        check_levels,
        label_key,
    )
