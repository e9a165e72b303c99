"""Where a program the model refuses goes wrong: the refusal's place (file, line,
column), that line with a caret under the construct, and what to do.

Every refusal of :class:`~sfclab.targets.model.expr.ExprCompiler` (and of the v1model and
TNA compilers built on it) goes through :func:`refusal`, so none shows a bare position.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import caret_context
from ...p4 import ast as A
from ...p4.printer import expr_p4
from .errors import ModelCompileError

__all__ = ["source_line", "refusal"]


def source_line(pos: A.Pos, width: int) -> str:
    """The line *pos* is on with a caret under it: from the text *pos*'s file was parsed
    from, else the file read now (empty when neither is known)."""
    text = pos.text
    if text is None and pos.file and Path(pos.file).is_file():
        text = Path(pos.file).read_text(errors="replace")
    return caret_context(text, pos.line, pos.column, width) if text else ""


def _width(node: A.Node, pos: A.Pos) -> int:
    """How many characters the caret covers: *node*'s name or text where the line has it
    at *pos*, else one."""
    text = pos.text
    if text is None and pos.file and Path(pos.file).is_file():
        text = Path(pos.file).read_text(errors="replace")
    lines = (text or "").splitlines()
    at = lines[pos.line - 1][pos.column - 1:] if 0 < pos.line <= len(lines) else ""
    names = [getattr(node, "name", None)]
    try:
        names.append(expr_p4(node))
    except Exception:  # noqa: BLE001 - not an expression (a declaration): its name only
        pass
    for name in names:
        if isinstance(name, str) and name and at.startswith(name):
            return len(name)
    return 1


def refusal(msg: str, node: A.Node | None = None, *, hint: str = "") -> ModelCompileError:
    """The model's refusal *msg* of *node*: ``file:line:col: msg``, the line with a caret
    under *node* (where its text is known) and *hint*."""
    pos = getattr(node, "pos", None)
    if not pos:
        return ModelCompileError(msg, hint=hint)
    caret = source_line(pos, _width(node, pos))
    return ModelCompileError(f"{pos}: {msg}" + (f"\n{caret}" if caret else ""), hint=hint)
