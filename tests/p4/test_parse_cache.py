"""The P4 parser's table cache is loaded only from the user's private cache directory:
a pickle planted by another user (at lark's old predictable /tmp name, or in a cache
directory others can write) is never loaded, so it never runs."""

from __future__ import annotations

import os
import pickle
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from lark import Lark

from sfclab.p4 import parsecache
from sfclab.p4 import parser as P

PROGRAM = "header h_t { bit<8> a; }\ncontrol c(inout h_t h) { apply { h.a = 1; } }\n"


class _Planted:
    """Unpickling this creates *marker*: proof that the planted file was loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _plant(path: Path, marker: Path) -> None:
    path.write_bytes(b"0" * 64 + b"\n" + pickle.dumps(_Planted(marker)))


def _parse_in_fresh_python(env: dict[str, str]) -> subprocess.CompletedProcess:
    code = ("import sys; from sfclab.p4 import parse_p4; "
            "parse_p4(sys.stdin.read()); print('parsed')")
    return subprocess.run([sys.executable, "-c", code], input=PROGRAM, capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120)


def test_a_file_planted_at_larks_predictable_tmp_name_is_never_loaded(tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # Where lark's cache=True would look for the P4 grammar's tables in this temporary dir.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    Lark(P._grammar(), parser="lalr", lexer="contextual", postlex=P._POSTLEX,
         transformer=P._BUILDER, maybe_placeholders=True, cache=True)
    (predictable,) = tmp.glob(".lark_cache_*")
    marker = tmp_path / "planted-code-ran"
    _plant(predictable, marker)
    done = _parse_in_fresh_python({"TMPDIR": str(tmp), "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert done.returncode == 0 and "parsed" in done.stdout, done.stderr
    assert not marker.exists()


def test_the_cache_lives_in_a_0700_directory_of_the_user_and_is_used(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    for _ in range(2):                      # the first run writes the cache, the second loads it
        done = _parse_in_fresh_python(env)
        assert done.returncode == 0, done.stderr
    folder = tmp_path / "xdg" / "sfclab"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (cached,) = folder.glob("p4-parser-*.lark")
    assert cached.stat().st_size > 10_000


def test_a_cache_directory_others_can_write_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "sfclab"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    marker = tmp_path / "planted-code-ran"
    assert parsecache.cache_dir() is None and parsecache.cache_file("k") is None
    key_file = folder / "p4-parser-x.lark"
    _plant(key_file, marker)
    done = _parse_in_fresh_python({"XDG_CACHE_HOME": str(tmp_path)})
    assert done.returncode == 0 and "parsed" in done.stdout, done.stderr
    assert not marker.exists()
    assert [p.name for p in folder.iterdir()] == [key_file.name]     # nothing written there


def test_a_symlinked_cache_directory_or_file_is_not_followed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "sfclab").symlink_to(elsewhere)
    assert parsecache.cache_dir() is None
    (tmp_path / "sfclab").unlink()
    folder = parsecache.cache_dir()
    assert folder == tmp_path / "sfclab"
    target = elsewhere / "target"
    target.write_text("not a parser")
    (folder / "p4-parser-k.lark").symlink_to(target)
    path = parsecache.cache_file("k")
    assert path == folder / "p4-parser-k.lark" and not path.exists()   # the link is removed
    assert target.read_text() == "not a parser"


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="handing a file to another user needs root")
def test_a_file_of_another_user_in_the_cache_directory_is_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = parsecache.cache_dir()
    planted = folder / "p4-parser-k.lark"
    _plant(planted, tmp_path / "marker")
    os.chown(planted, 65534, 65534)
    assert parsecache.cache_file("k") == planted and not planted.exists()


def test_no_cache_directory_still_parses(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file, not a directory")
    done = _parse_in_fresh_python({"XDG_CACHE_HOME": str(blocked)})
    assert done.returncode == 0 and "parsed" in done.stdout, done.stderr
