"""The query of a target's URL (``bmv2?device_id=1&veth=1@veth0``): every target reads it
the same way, so a user's mistake in it reads the same on every target.

A target states its parameters as data, each a :class:`Param` (how its value is read, what
it must be); :func:`read_query` reads the query against them.  An unknown parameter gets a
"did you mean …" (else the list of known ones); a bad value says what the value must be::

>>> PARAMS = {"device_id": INTEGER, "format": choice("pi", "bfrt"), "veth": VETH}
>>> read_query("tofino://h?device_id=1&veth=1@veth0", PARAMS)
{'device_id': 1, 'veth': {1: 'veth0'}}
>>> read_query("tofino://h?devid=1", PARAMS)
Traceback (most recent call last):
sfclab.errors.TargetError: unknown parameter 'devid' in 'tofino://h?devid=1'
hint: did you mean 'device_id'?
>>> read_query("tofino://h?format=json", PARAMS)
Traceback (most recent call last):
sfclab.errors.TargetError: format must be pi or bfrt in 'tofino://h?format=json', not 'json'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..errors import TargetError, did_you_mean

__all__ = ["Param", "TEXT", "INTEGER", "NUMBER", "VETH", "PORTS", "choice", "parse_veth",
           "read_query"]


@dataclass(frozen=True, slots=True)
class Param:
    """One URL parameter: *read* turns its text into its value (``ValueError`` for a bad
    one, its message, if any, naming the part it could not read), *must_be* says what a
    good value is, *hint* how to write one; *choices*: the values it may take, if a few."""

    read: Callable[[str], Any]
    must_be: str = ""
    hint: str = ""
    choices: tuple[str, ...] = ()


def _text(value: str) -> str | None:
    return value or None


def _integer(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError() from None


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError() from None


def _ports(value: str) -> tuple[int, ...]:
    return tuple(_integer(x) for x in value.split(",") if x.strip())


def parse_veth(text: str) -> dict[int, str]:
    """``1@veth0,2@veth2`` -> ``{1: 'veth0', 2: 'veth2'}`` (the switch's ends of the
    veth pairs its ports are on); ``ValueError`` naming the pair it cannot read.

    >>> parse_veth("1@veth0, 2@veth2")
    {1: 'veth0', 2: 'veth2'}
    """
    out: dict[int, str] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        port, sep, name = item.partition("@")
        if not sep or not port.strip().isdigit() or not name.strip():
            raise ValueError(f"cannot read the port {item!r}")
        out[int(port)] = name.strip()
    return out


#: A parameter whose value is its text (an empty one: None).
TEXT = Param(_text)
#: An integer (``device_id=1``).
INTEGER = Param(_integer, "an integer")
#: A number (``timeout=2.5``).
NUMBER = Param(_number, "a number")
#: Ports on veth pairs (``veth=1@veth0,2@veth2``; an empty one: None).
VETH = Param(lambda v: parse_veth(v) or None, "PORT@INTERFACE pairs",
             "give the switch's ends of its veth pairs: veth=1@veth0,2@veth2")
#: Port numbers (``loopback=4,132``).
PORTS = Param(_ports, "port numbers", "give them with commas: loopback=4,132")


def choice(*names: str, hint: str = "") -> Param:
    """A parameter that is one of *names* (a bad one gets a "did you mean", else *hint*).

    >>> choice("pi", "bfrt").read("pi")
    'pi'
    """
    def read(value: str) -> str:
        if value not in names:
            raise ValueError()
        return value
    return Param(read, " or ".join(names), hint, names)


def read_query(url: str, params: Mapping[str, Param]) -> dict[str, Any]:
    """The parameters *url*'s query gives (the last value of one given twice), read as
    *params* says; :class:`TargetError` for one not in *params* or a bad value, naming the
    parameter, the URL and what the value must be."""
    out: dict[str, Any] = {}
    for key, values in parse_qs(urlsplit(url).query, keep_blank_values=True).items():
        if key not in params:
            raise TargetError(f"unknown parameter {key!r} in {url!r}",
                              hint=did_you_mean(key, params) or ("known: " + ", ".join(params)
                                                                 if params else
                                                                 "it takes no parameters"))
        out[key] = _read_value(url, key, values[-1], params[key])
    return out


def _read_value(url: str, key: str, value: str, param: Param) -> Any:
    try:
        return param.read(value)
    except ValueError as e:
        detail = f" ({e})" if str(e) else ""
        raise TargetError(f"{key} must be {param.must_be} in {url!r}, not {value!r}{detail}",
                          hint=did_you_mean(value, param.choices) or param.hint) from None
