"""Schemas and validation of the long tables every model consumes.

Validation happens once, here, and raises :class:`DataValidationError` naming
the column, the offending values and the fix. Nothing downstream re-checks.
"""

from __future__ import annotations


class DataValidationError(ValueError):
    """Raised when a user table does not follow the documented schema."""
