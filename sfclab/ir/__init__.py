"""The chain IR: chains as graphs, their service paths, and checks on them.

See :mod:`sfclab.ir.model` for the node and edge attribute schema.
"""

from __future__ import annotations

from .classifier import Classifier, FieldMatch
from .fields import FIELDS, HeaderField, resolve_field
from .model import (
    EDGE_KINDS,
    TERMINALS,
    Chain,
    ChainSet,
    Condition,
    Decision,
    ServicePath,
    linear_chain,
)
from .paths import service_paths
from .topology import Host, Link, Server, Switch, Topology
from .validate import validate

__all__ = [
    "Chain", "ChainSet", "Condition", "Decision", "ServicePath", "Classifier", "FieldMatch",
    "FIELDS", "HeaderField", "resolve_field", "EDGE_KINDS", "TERMINALS", "linear_chain",
    "service_paths", "validate", "Topology", "Switch", "Host", "Server", "Link",
]
