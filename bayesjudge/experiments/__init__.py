"""Experiment protocols: calibration splits, significance, Monte Carlo studies."""

# calibration-split protocol (davidson_itc_aggregation.txt, Section 5)
from bayesjudge.experiments.calibration import (  # noqa: F401
    BUILTIN_METHODS,
    Split,
    SplitProtocolResult,
    calibration_splits,
    leave_one_rater_out,
    rounded_median_from_counts,
    split_protocol,
)
from bayesjudge.experiments.significance import (  # noqa: F401
    PermutationTestResult,
    TopClusterResult,
    paired_permutation_test,
    top_cluster,
)
# PandaLM misclassification study (misclassification_adjusted_reporting.txt, Section 8.2)
from bayesjudge.experiments.pandalm_misclassification import (  # noqa: F401,E402
    PandaLMMisclassificationStudy,
    pandalm_misclassification_study,
)
