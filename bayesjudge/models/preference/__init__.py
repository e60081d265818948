"""Probabilistic judges: preference distributions and calibrated autoraters.

Calibrating autoraters to human preference distributions. Modules: ``posterior``
(Beta closed forms), ``temperature`` (:class:`TemperatureScaling`), ``model``
(:class:`PreferenceDistribution`), ``alignment`` (:func:`alignment_error`). Model card:
``models/preference.md``.
"""

from bayesjudge.models.preference.alignment import alignment_error
from bayesjudge.models.preference.model import PreferenceDistribution
from bayesjudge.models.preference.temperature import TemperatureScaling

__all__ = ["PreferenceDistribution", "TemperatureScaling", "alignment_error"]
