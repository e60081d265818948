"""Rankings anchored to a reference judge: Davidson-BT in the reference's outcomes, the
other judges' verdicts as noisy channels of them (Dawid & Skene, 1979; Davidson, 1970).

The peer method is prediction-powered ranking (Chatzi, Straitouri, Thejaswi &
Gomez-Rodriguez, NeurIPS 2024, arXiv:2402.17826).
"""

from bayesjudge.models.anchored.agreement import JudgeDependenceWarning
from bayesjudge.models.anchored.model import AnchoredBT

__all__ = ["AnchoredBT", "JudgeDependenceWarning"]
