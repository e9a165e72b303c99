"""The objects a user holds: :class:`Lab` (chains on one switch, or on a network) and
:class:`Network` (chains placed across a topology), and the values they hand back.

Both are reachable from the package root too (``sfclab.Lab``, ``sfclab.Network``, and the
modules ``sfclab.lab`` and ``sfclab.network``).
"""

from __future__ import annotations

from .lab import Lab, LabChange, LabTrace, SendResult
from .values import TableUse
from .network import Network

__all__ = ["Lab", "LabChange", "LabTrace", "Network", "SendResult", "TableUse"]
