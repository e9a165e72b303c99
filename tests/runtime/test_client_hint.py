"""sfclab's P4Runtime client adds "the request does not fit the program's P4Info" to an
INVALID_ARGUMENT only when the switch's own message does not say what is wrong: not to
the model's refusals (which say it, some with a hint of their own), but to a bare
``Invalid P4 id`` (what BMv2 1.15.5 answers a Read of an id its P4Info lacks) or an
empty message.  The same against a real BMv2 is in tests/targets/test_live.py."""

from __future__ import annotations

import pytest
from finsy.proto import p4r, rpc_code

from sfclab.errors import TargetError
from sfclab.runtime.client import Client
from sfclab.targets.model.p4rt.codec import _fail

from p4rt_rig import PROGRAM

P4INFO_HINT = "does not fit the program's P4Info"


def test_a_refusal_that_says_what_is_wrong_gets_no_p4info_hint(primary):
    with Client(primary.server.address, election_id=20) as c:
        for action, config, said, own_hint in [
            ("COMMIT", PROGRAM.encode(), "COMMIT takes no config", False),
            ("VERIFY", b"garbage", "the program does not run on the model: <string>:1:1: "
                                   "unexpected 'garbage'", True),
        ]:
            with pytest.raises(TargetError) as info:
                c.set_pipeline(primary.info, config, action=action)
            e = info.value
            assert e.status == "INVALID_ARGUMENT" and said in e.message
            assert e.hint == "" and P4INFO_HINT not in str(e)
            assert str(e).count("\nhint: ") == own_hint      # the model's own hint, once


def test_a_bare_invalid_id_or_nothing_gets_the_p4info_hint(primary):
    said = iter(["Invalid P4 id", "invalid table id", ""])

    def read(request):
        _fail(rpc_code.INVALID_ARGUMENT, next(said))

    primary.server._read = read
    with Client(primary.server.address, election_id=20) as c:
        for _ in range(3):
            with pytest.raises(TargetError) as info:
                c.read([p4r.Entity(table_entry=p4r.TableEntry())])
            assert info.value.status == "INVALID_ARGUMENT"
            assert info.value.hint.endswith(P4INFO_HINT)
