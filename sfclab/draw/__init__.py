"""The pictures: every SVG sfclab draws, in one package, in one visual style.

- :mod:`~sfclab.draw.chains`: chains, P4SC's merged IR, FlexMesh's MA-FSA as graphs;
- :mod:`~sfclab.draw.switch`: what the compiler decided about a switch (pipelines, passes, placement);
- :mod:`~sfclab.draw.topology`: a network with the NFs placed on its switches, and a packet's route;
- :mod:`~sfclab.draw.plots`: small bar, line and timeline plots;
- :mod:`~sfclab.draw.layered` and :mod:`~sfclab.draw.topology_layout`: where the boxes go;
- :mod:`~sfclab.draw.style`: the colours every view shares (widgets, editor, HTML report).

Nothing here runs a pass or a switch: a picture takes results and returns SVG text.
"""
