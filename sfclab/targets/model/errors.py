"""Errors of the embedded switch model, all :class:`~sfclab.errors.TargetError`.

Control-plane requests that P4Runtime would refuse raise one class per
P4Runtime status, so a caller can tell a duplicate from a missing entry:

========================  ==========================
class                     P4Runtime status
========================  ==========================
:class:`UnknownNameError`  NOT_FOUND (no such table, action, extern, field)
:class:`InvalidValueError` INVALID_ARGUMENT (bad widths, counts, masks, priorities)
:class:`EntryExistsError`  ALREADY_EXISTS
:class:`EntryNotFoundError` NOT_FOUND (no such entry)
:class:`TableFullError`    RESOURCE_EXHAUSTED
:class:`ReadOnlyError`     PERMISSION_DENIED (const entries, const default action)
========================  ==========================

:class:`ModelCompileError` says a program uses something the model cannot run.
"""

from __future__ import annotations

from ...errors import TargetError

__all__ = ["ModelError", "ModelCompileError", "ControlPlaneError", "UnknownNameError",
           "InvalidValueError", "EntryExistsError", "EntryNotFoundError", "TableFullError",
           "ReadOnlyError"]


class ModelError(TargetError):
    """Root of the embedded model's errors."""


class ModelCompileError(ModelError):
    """The program uses a construct or extern the model does not implement."""


class ControlPlaneError(ModelError):
    """A control-plane request was refused."""


class UnknownNameError(ControlPlaneError):
    """No table, action, extern, match field or parameter has that name."""


class InvalidValueError(ControlPlaneError):
    """A value, mask, prefix, range, priority or argument count is wrong."""


class EntryExistsError(ControlPlaneError):
    """Insert of an entry whose match key (and priority) is already installed."""


class EntryNotFoundError(ControlPlaneError):
    """Modify or delete of an entry that is not installed."""


class TableFullError(ControlPlaneError):
    """Insert into a table that already holds ``size`` entries."""


class ReadOnlyError(ControlPlaneError):
    """Change to const entries or a const default action."""
