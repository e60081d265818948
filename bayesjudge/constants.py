"""Project-wide constants, importable from every layer of the package."""

__version__ = "0.1.0"

CI_PROB = 0.95
"""Credible/confidence interval mass used by every default (equal-tailed)."""
