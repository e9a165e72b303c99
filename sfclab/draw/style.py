"""sfclab's one visual language for graphs, in every view (widgets, editor, HTML report).

Colour by NF protocol layer, shape by node kind (NF: rounded box; end point:
ellipse), line by edge kind.  The editor's front end (``js/src/graph-style.js``)
uses the same values.

>>> LAYER_COLORS[4], EDGE_COLORS["else"]
('#f28e2b', '#c62828')
"""

from __future__ import annotations

__all__ = ["LAYER_COLORS", "OTHER_LAYER_COLOR", "ENDPOINT_COLORS", "EDGE_COLORS", "LAYER_NAMES"]

#: NF fill colour by protocol layer (2 link, 3 network, 4 transport, 7 application).
LAYER_COLORS = {2: "#4e79a7", 3: "#59a14f", 4: "#f28e2b", 7: "#b07aa1"}
LAYER_NAMES = {2: "L2 link", 3: "L3 network", 4: "L4 transport", 7: "L7 application"}
OTHER_LAYER_COLOR = "#9c755f"
ENDPOINT_COLORS = {"input": "#bab0ac", "output": "#bab0ac", "drop": "#e15759", "cpu": "#76b7b2"}
#: Edge colour by kind: sequence, branch taken, branch not taken, case, loop, loop exit.
EDGE_COLORS = {"seq": "#777777", "then": "#2e7d32", "else": "#c62828", "case": "#1565c0",
               "loop": "#6a1b9a", "exit": "#6a1b9a"}
