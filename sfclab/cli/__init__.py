"""The faces that are not a notebook: the ``sfclab`` command line (:mod:`~sfclab.cli.commands`),
``sfclab demo`` (:mod:`~sfclab.cli.demo`) and its self-contained HTML report
(:mod:`~sfclab.cli.report`)."""

from __future__ import annotations

from .commands import main

__all__ = ["main"]
