"""Tables in, tables validated: schemas of the long tables (``schema``, ``judgments``)
and the small real datasets shipped with the package (files in this folder, see its
README, LICENSE and NOTICE)."""

from bayesjudge.data.annotations import (  # noqa: F401  (re-exports)
    OUTCOME_LABELS,
    AnnotationCounts,
    JudgeOutputs,
    align_outputs,
    check_both_classes,
    validate_annotations,
    validate_judge_outputs,
)
from bayesjudge.data.arena import comparisons_table, from_arena  # noqa: F401  (re-exports)
from bayesjudge.data.comparisons import (  # noqa: F401  (re-exports)
    COMPARISON_OUTCOMES,
    BattleContextWarning,
    Comparisons,
    validate_comparisons,
)
from bayesjudge.data.counts import (  # noqa: F401  (re-exports)
    KNOWN_COLUMNS,
    UnusedColumnWarning,
    expand_counts,
)
from bayesjudge.data.frames import as_pandas  # noqa: F401  (re-export)
from bayesjudge.data.judgments import (  # noqa: F401  (re-exports)
    MisclassificationCounts,
    check_calibration_classes,
    validate_calibration,
    validate_judgment_counts,
    validate_judgments,
    validate_misclassification,
)
from bayesjudge.data.messages import (  # noqa: F401  (re-exports)
    ID_COLUMNS,
    LINE_INDEX,
    DataValidationError,
    show_rows,
    show_values,
)
from bayesjudge.data.schema import (  # noqa: F401  (re-exports)
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
    label_key,
    require_frame,
    validate_labels,
    validate_votes,
    warn_spaced_ids,
)
from bayesjudge.data.symmetrization import symmetrize  # noqa: F401  (re-export)
