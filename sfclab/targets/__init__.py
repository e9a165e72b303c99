"""Switch targets sfclab runs composed programs on.

``sfclab.targets.model`` is the embedded switch model (a v1model interpreter of
sfclab's own P4 AST, the default target); ``sfclab.targets.trace`` holds the
per-packet traces every target produces.
"""
