"""sfclab: design, compile and run service function chains on P4 switches.

>>> import sfclab
>>> chains = sfclab.parse("chain web: firewall -> nat -> l3fwd")
>>> [str(p) for p in chains.paths()]
['web/0 [1]: input -> firewall -> nat -> l3fwd -> output']
"""

from __future__ import annotations

from . import _moved  # noqa: F401  (old module paths: sfclab.network, sfclab.plots, ...)
from . import _browser, _protos
from . import frontends as _frontends
from ._version import __version__
from .errors import SfclabError
from .ir import Chain, ChainSet, ServicePath
from .lang import format, format_topology, parse, parse_file, parse_topology, parse_topology_file

__all__ = ["__version__", "SfclabError", "Chain", "ChainSet", "ServicePath",
           "parse", "parse_file", "format", "parse_topology", "parse_topology_file",
           "format_topology", "compile", "catalog", "Lab", "Network", "notebook", "load_ipython_extension"]

#: Subpackages reachable as attributes after a bare ``import sfclab``, imported on first
#: use (``sfclab.notebook.ChainEditor()``): the plain import stays as fast as before.
_LAZY_SUBPACKAGES = ("p4", "notebook")


def _widgets():
    """sfclab's widgets as the front end Labs are drawn with (imported on first use)."""
    from .notebook.front_end import WIDGETS

    return WIDGETS


_frontends.register(_widgets)
_protos.install()      # finsy's protobuf messages without grpcio, where there is none (Pyodide)
if _browser.in_browser():
    _browser.prepare()     # scapy in Pyodide: IPv6 layers, a loopback interface, no noise


def load_ipython_extension(ipython) -> None:
    """``%load_ext sfclab``: the ``%%chain``, ``%%nf`` and ``%sfc`` magics."""
    from .notebook.magics import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str):
    # `sfclab.catalog` (the NF library, loaded on first use), `sfclab.compile`, `sfclab.Lab`,
    # and the subpackages of _LAZY_SUBPACKAGES
    if name == "catalog":
        from .p4.catalog import load_default

        return load_default()
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name == "Lab":
        from .api.lab import Lab

        return Lab
    if name == "Network":
        from .api.network import Network

        return Network
    if name == "compile":
        from .compiler import compile

        return compile
    raise AttributeError(f"module 'sfclab' has no attribute {name!r}")
