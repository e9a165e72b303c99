"""p4runtime-shell against sfclab's model switch; run by tests/runtime/test_interop.py.

    .venv-p4rt-shell/bin/python tests/runtime/p4rt_shell_check.py --grpc-addr HOST:PORT

p4runtime-shell (p4runtime-shell==0.0.6 on PyPI) pins IPython 7 and protobuf 3.20, so
it lives in its own virtualenv and this script runs there, not in sfclab's.  It
connects as the primary (election id (0, 2)) without a config, so the P4Info comes
from the device (GetForwardingPipelineConfig), then inserts a table entry the way
the shell's users do (``te = table_entry["..."](action="...")``, ``te.insert()``),
reads it back, modifies the default entry and programs a multicast group.  It
prints one JSON object on its last line for the test to check.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grpc-addr", required=True)
    ap.add_argument("--device-id", type=int, default=1)
    args = ap.parse_args(argv)

    import p4runtime_sh.shell as sh
    from google.rpc import code_pb2
    from p4runtime_sh.context import P4RuntimeEntity, P4Type
    from p4runtime_sh.p4runtime import P4RuntimeWriteException

    sh.setup(device_id=args.device_id, grpc_addr=args.grpc_addr, election_id=(0, 2),
             config=None, verbose=False)
    out: dict = {}
    try:
        table_entry = sh.P4RuntimeEntityBuilder(P4Type.table, P4RuntimeEntity.table_entry,
                                                sh.TableEntry)
        info = sh.client.get_p4info()
        out["tables"] = sorted(t.preamble.name for t in info.tables)
        out["api_version"] = sh.client.api_version()

        te = table_entry["I.l2"](action="I.fwd")
        te.match["hdr.ethernet.dst"] = "00:00:00:00:00:0c"
        te.action["port"] = "3"
        te.insert()

        out["read"] = [{"dst": e.match["hdr.ethernet.dst"].exact.value.hex(),
                        "action": e.action.action_name,
                        "port": e.action["port"].value.hex()}
                       for e in table_entry["I.l2"].read()]

        try:                           # inserting it again: the server says ALREADY_EXISTS
            te.insert()
            out["duplicate"] = "accepted"
        except P4RuntimeWriteException as e:
            out["duplicate"] = [code_pb2.Code.Name(err.canonical_code) for _, err in e.errors]

        d = table_entry["I.routes"](is_default=True, action="I.fwd")
        d.action["port"] = "9"
        d.modify()
        (back,) = list(table_entry["I.routes"](is_default=True).read())
        out["default"] = {"action": back.action.action_name,
                          "port": back.action["port"].value.hex()}

        sh.MulticastGroupEntry(7).add(1, 0).add(2, 0).insert()
        out["groups"] = [sorted([r.egress_port, r.instance] for r in g.replicas)
                         for g in sh.MulticastGroupEntry(7).read()]
    finally:
        sh.teardown()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
