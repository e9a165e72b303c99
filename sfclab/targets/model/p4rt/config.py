"""SetForwardingPipelineConfig / GetForwardingPipelineConfig: verify, save, commit and
reconcile (carry the forwarding state into a new program)."""

from __future__ import annotations

from finsy.proto import p4r, rpc_code

from .codec import _fail
from .pipeline import _DigestState, _Pipeline

__all__ = ["PipelineConfigMixin"]


class PipelineConfigMixin:
    """The pipeline config of :class:`~.server.P4RuntimeModelServer`."""

    def _set_pipeline(self, request):
        A = p4r.SetForwardingPipelineConfigRequest
        self._check_role(request)
        self._check_primary(request, "SetForwardingPipelineConfig")
        action = request.action
        if action == A.COMMIT:
            if request.HasField("config"):
                _fail(rpc_code.INVALID_ARGUMENT, "COMMIT takes no config (it commits the one "
                                                 "VERIFY_AND_SAVE saved)")
            if self.saved is None:
                _fail(rpc_code.NOT_FOUND, "COMMIT: no saved pipeline config (send "
                                          "VERIFY_AND_SAVE first)")
            self._activate(self.saved)
            return p4r.SetForwardingPipelineConfigResponse()
        if action not in (A.VERIFY, A.VERIFY_AND_SAVE, A.VERIFY_AND_COMMIT,
                          A.RECONCILE_AND_COMMIT):
            _fail(rpc_code.INVALID_ARGUMENT, "SetForwardingPipelineConfig: the action is "
                                             "unspecified")
        if not request.HasField("config"):
            _fail(rpc_code.INVALID_ARGUMENT, f"{A.Action.Name(action)} needs a config")
        # a VERIFY followed by the same config (a careful controller's push) builds it once
        key = request.config.SerializeToString(deterministic=True)
        verified, self._verified = self._verified, None
        pl = verified[1] if verified is not None and verified[0] == key else \
            self._verify(request.config)
        if action == A.VERIFY:
            self._verified = (key, pl)           # untouched: no entry, no state
        elif action == A.VERIFY_AND_SAVE:
            if self.saved is not None:
                self._stop_digests(self.saved)
            self.saved = pl
        elif action == A.VERIFY_AND_COMMIT:
            self._activate(pl)
        elif action == A.RECONCILE_AND_COMMIT:
            if self.active is not None:
                self._reconcile(self.active, pl)
            self._activate(pl)
        return p4r.SetForwardingPipelineConfigResponse()

    def _activate(self, pl: _Pipeline) -> None:
        for old in (self.active, self.saved):
            if old is not None and old is not pl:
                self._stop_digests(old)
        self.active, self.saved = pl, None

    def _verify(self, config: p4r.ForwardingPipelineConfig) -> _Pipeline:
        from ....codegen.p4info import build_p4info, compare_p4info
        from ..tna.load import load_switch

        try:
            text = config.p4_device_config.decode()
        except UnicodeDecodeError:
            _fail(rpc_code.INVALID_ARGUMENT, "p4_device_config must be the P4 program's text "
                                             "(UTF-8) for sfclab's model switch")
        if not text.strip():
            _fail(rpc_code.INVALID_ARGUMENT, "p4_device_config is empty: the model switch "
                                             "needs the P4 program's text")
        try:
            switch, arch = load_switch(self.parsed.get(text) or text, cpu_port=self.cpu_port,
                                       tna=self.tna)
            ours = build_p4info(switch.program, arch=arch)
        except Exception as e:           # the program's errors, whatever raises them
            _fail(rpc_code.INVALID_ARGUMENT, f"the program does not run on the model: {e}")
        diffs = compare_p4info(ours, config.p4info)
        if diffs:
            _fail(rpc_code.INVALID_ARGUMENT, "the P4Info does not match the program: "
                                             + "; ".join(diffs[:5]))
        return _Pipeline.of(config, switch)

    def _reconcile(self, old: _Pipeline, new: _Pipeline) -> None:
        """Carry *old*'s forwarding state into *new*; INVALID_ARGUMENT (and nothing changes)
        when some of it has no place there."""
        def cannot(why: str):
            _fail(rpc_code.INVALID_ARGUMENT, f"RECONCILE_AND_COMMIT: the forwarding state "
                                             f"cannot be kept: {why}")
        sw, nsw = old.switch, new.switch
        for name, ot in sw.tables.items():
            entries = [e for e in ot.entries.values() if not e.const]
            changed = ot.default is not ot.initial_default
            if not entries and not changed:
                continue
            nt = nsw.tables.get(name)
            if nt is None:
                cannot(f"the new program has no table {name}")
            if [(k.name, k.kind, k.width) for k in ot.keys] != \
                    [(k.name, k.kind, k.width) for k in nt.keys]:
                cannot(f"table {name} has another key in the new program")
            if len(entries) + len(nt.entries) > nt.size:
                cannot(f"table {name} holds {len(entries)} entries, more than its new size")

            def same(a):
                na = nt.actions.get(a.name)
                if na is None or na.params != a.params:
                    cannot(f"table {name}: action {a.name} is not the same in the new program")
                return na
            for e in entries:
                ne = nt.make_entry(e.match, e.priority, same(e.action), e.args)
                if nt.counter_kind:
                    ne.packets, ne.bytes = e.packets, e.bytes
                if nt.meter_kind:
                    ne.meter = e.meter
                nt.entries[(e.match, e.priority)] = ne
            if changed:
                if nt.default_const:
                    cannot(f"table {name}'s default action is const in the new program")
                nt.default = (same(ot.default[0]), ot.default[1])
            nt.reindex()
        new.extras.update((k, v) for k, v in old.extras.items() if k[0] in nsw.tables)
        for name, ext in sw.externs.items():
            st, nst = ext.state, getattr(nsw.externs.get(name), "state", None)
            kind = type(st).__name__
            if kind == "RegisterArray" and any(st.cells):
                if type(nst).__name__ != kind or (nst.size, nst.width, nst.signed) != \
                        (st.size, st.width, st.signed):
                    cannot(f"register {name} is not the same in the new program")
                nst.cells[:] = st.cells
            elif kind == "CounterArray" and (any(st.packets) or any(st.bytes)):
                if type(nst).__name__ != kind or nst.size != st.size:
                    cannot(f"counter {name} is not the same in the new program")
                nst.packets[:], nst.bytes[:] = st.packets, st.bytes
            elif kind == "MeterArray" and any(m.configured for m in st.meters):
                if type(nst).__name__ != kind or (nst.size, nst.kind) != (st.size, st.kind):
                    cannot(f"meter {name} is not the same in the new program")
                nst.meters[:] = st.meters
        nsw.mc_groups.update(sw.mc_groups)
        nsw.clone_sessions.update(sw.clone_sessions)
        new.mc_groups.update(old.mc_groups)
        new.clone_sessions.update(old.clone_sessions)
        by_name = {d.preamble.name: i for i, d in new.digests.items()}
        for i, st in old.digest_state.items():
            ni = by_name.get(old.digests[i].preamble.name)
            if ni is None:
                cannot(f"digest {old.digests[i].preamble.name} is not in the new program")
            new.digest_state[ni] = _DigestState(st.config)

    def _get_pipeline(self, request):
        R = p4r.GetForwardingPipelineConfigRequest
        resp = p4r.GetForwardingPipelineConfigResponse()
        if self.active is None:
            return resp                 # P4Runtime: the config field stays unset
        stored = self.active.config
        cfg = resp.config
        cfg.SetInParent()
        if request.response_type in (R.ALL, R.P4INFO_AND_COOKIE):
            cfg.p4info.CopyFrom(stored.p4info)
        if request.response_type in (R.ALL, R.DEVICE_CONFIG_AND_COOKIE):
            cfg.p4_device_config = stored.p4_device_config
        if stored.HasField("cookie"):
            cfg.cookie.CopyFrom(stored.cookie)
        return resp
