"""Tables in, tables validated: schemas of the long tables (``schema``) and the
small real datasets shipped with the package (files in this folder, see its
README, LICENSE and NOTICE)."""

from bayesjudge.data.schema import (  # noqa: F401
    COUNT_COLUMNS,
    DataValidationError,
    Labels,
    VoteCounts,
    align_calibration,
    check_integer_values,
    check_no_missing,
    require_frame,
    validate_labels,
    validate_votes,
)
from bayesjudge.data.judgments import MisclassificationCounts, check_calibration_classes, validate_calibration, validate_judgment_counts, validate_judgments, validate_misclassification  # noqa: F401,E501
