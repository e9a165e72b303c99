"""The wheels of a JupyterLite site, all pure Python, and the Pyodide lockfile that loads them.

sfclab runs in Pyodide on pure-Python wheels from PyPI: :func:`collect` starts from
sfclab's wheel and the kernel's packages, reads each wheel's ``Requires-Dist`` with
Pyodide's environment markers (``platform_system == "Emscripten"``: no grpcio, no
highspy, no numpy) and downloads what is missing with ``pip download --only-binary
:all: --platform any`` (a package with no pure-Python wheel is an error that names it),
until nothing is missing.  finsy comes without its dependencies (:data:`NO_DEPS`: sfclab
uses its protobuf messages only, :mod:`sfclab._protos`).  :func:`lockfile` then writes
the ``pyodide-lock.json`` that lists exactly these wheels, so that the kernel loads them
all from the site at start: nothing is installed by a cell, nothing comes from a CDN.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename

from ..errors import SfclabError

__all__ = ["Wheel", "collect", "lockfile", "pyodide_markers", "NO_DEPS", "download"]

#: Packages installed without their declared dependencies, with what is needed of them
#: instead: finsy's protobuf messages need protobuf (its pin), not grpcio.
NO_DEPS = {"finsy": ("protobuf",)}


@dataclass
class Wheel:
    """One wheel file and what its metadata says."""

    path: Path
    name: str
    version: str
    requires: list[Requirement] = field(default_factory=list)
    python: SpecifierSet = field(default_factory=SpecifierSet)

    @classmethod
    def read(cls, path: Path) -> Wheel:
        with zipfile.ZipFile(path) as z:
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            msg = Parser().parsestr(z.read(meta).decode("utf-8"))
        return cls(path, canonicalize_name(msg["Name"]), msg["Version"],
                   [Requirement(r) for r in msg.get_all("Requires-Dist") or ()],
                   SpecifierSet(msg.get("Requires-Python") or ""))

    def needs(self, markers: dict[str, str]) -> list[Requirement]:
        """The requirements that hold in the environment *markers* (no extras)."""
        keep = NO_DEPS.get(self.name)
        out = [r for r in self.requires
               if r.marker is None or r.marker.evaluate({**markers, "extra": ""})]
        return [r for r in out if keep is None or canonicalize_name(r.name) in keep]

    def imports(self) -> list[str]:
        """The top-level modules the wheel installs."""
        with zipfile.ZipFile(self.path) as z:
            tops = {n.split("/")[0] for n in z.namelist()}
        return sorted(t.removesuffix(".py") for t in tops
                      if not t.endswith((".dist-info", ".data")) and t != "")


def pyodide_markers(python: str) -> dict[str, str]:
    """Environment markers of Pyodide running CPython *python* (``3.14.2``)."""
    return {"platform_system": "Emscripten", "sys_platform": "emscripten", "os_name": "posix",
            "platform_machine": "wasm32", "platform_release": "", "platform_version": "",
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "implementation_version": python, "python_full_version": python,
            "python_version": ".".join(python.split(".")[:2])}


def download(specs: list[str], into: Path, python: str) -> None:
    """``pip download`` the pure-Python wheels of *specs* (no dependencies) into *into*."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--no-deps", "--only-binary", ":all:", "--platform", "any", "--implementation",
           "py", "--abi", "none", "--python-version", ".".join(python.split(".")[:2]),
           "--dest", str(into), *specs]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SfclabError(f"pip could not download pure-Python wheels of {', '.join(specs)}: "
                          f"{done.stderr.strip().splitlines()[-1] if done.stderr else ''}",
                          hint="Pyodide runs pure-Python wheels only: a package with none "
                               "cannot be in the site (is PyPI reachable?)")


def collect(roots: Iterable[Path], wanted: Iterable[str], cache: Path, python: str, *,
            fetch: Callable[[list[str], Path, str], None] = download) -> dict[str, Wheel]:
    """Every wheel *roots* (wheel files) and the requirements *wanted* need in Pyodide,
    by name: downloaded into *cache* (kept there: a wheel already in it is used)."""
    markers = pyodide_markers(python)
    have = {w.name: w for w in map(Wheel.read, roots)}
    fixed = set(have)                          # given, never replaced by a download
    pending = [r for r in map(Requirement, wanted)
               if r.marker is None or r.marker.evaluate({**markers, "extra": ""})]
    pending += [r for w in have.values() for r in w.needs(markers)]
    specs: dict[str, SpecifierSet] = {}
    while pending:
        for r in pending:
            name = canonicalize_name(r.name)
            specs[name] = specs.get(name, SpecifierSet()) & r.specifier
        missing = sorted(n for n, s in specs.items()
                         if n not in have or not s.contains(have[n].version, prereleases=True))
        pending = []
        if not missing:
            break
        clash = [n for n in missing if n in fixed]
        if clash:
            n = clash[0]
            raise SfclabError(f"the wheel given for {n} ({have[n].version}) does not satisfy "
                              f"{n}{specs[n]}", hint="give a wheel that does")
        for n in missing:
            have.pop(n, None)
        found = _cached(cache, missing, specs, python)
        to_fetch = [n for n in missing if n not in found]
        if to_fetch:
            fetch([f"{n}{specs[n]}" for n in to_fetch], cache, python)
            found.update(_cached(cache, to_fetch, specs, python))
        for n in missing:
            if n not in found:
                raise SfclabError(f"no pure-Python wheel of {n}{specs[n]} was found",
                                  hint="Pyodide runs pure-Python wheels only")
            have[n] = found[n]
            pending += found[n].needs(markers)
    return have


def _cached(cache: Path, names: list[str], specs: dict[str, SpecifierSet],
            python: str) -> dict[str, Wheel]:
    """The newest wheel in *cache* of each of *names* that satisfies its specifier and
    runs on *python*."""
    best: dict[str, Wheel] = {}
    for path in sorted(cache.glob("*.whl")):
        name, version, _, _ = parse_wheel_filename(path.name)
        if name in names and specs[name].contains(version, prereleases=True) and (
                name not in best or version > parse_wheel_filename(best[name].path.name)[1]):
            wheel = Wheel.read(path)
            if wheel.python.contains(python, prereleases=True):
                best[name] = wheel
    return best


def lockfile(base: dict, wheels: dict[str, Wheel], python: str) -> dict:
    """A ``pyodide-lock.json`` (as a dict) with *base*'s ``info`` and exactly *wheels*,
    each file named relative to the lockfile's folder (the wheels sit beside it)."""
    markers = pyodide_markers(python)
    packages = {}
    for name, w in sorted(wheels.items()):
        depends = sorted({canonicalize_name(r.name) for r in w.needs(markers)} & set(wheels))
        packages[name] = {
            "name": name, "version": w.version, "file_name": w.path.name,
            "install_dir": "site", "package_type": "package", "imports": w.imports(),
            "depends": depends, "sha256": hashlib.sha256(w.path.read_bytes()).hexdigest(),
            "unvendored_tests": False, "shared_library": False,
        }
    return {"info": dict(base["info"]), "packages": packages}


def write_lockfile(path: Path, lock: dict) -> None:
    path.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
