"""%%chain, %%nf and %sfc in a real IPython shell: every option, every error path."""

from __future__ import annotations

import re

import pytest
from IPython.core.error import UsageError

import sfclab.notebook.magics as magics_module
from sfclab import Lab
from sfclab.notebook import LiveView, current_lab
from sfclab.notebook.magics import SfcMagics, SfcUsageError
from notebook_support import ipython_shell
from test_editor import dummy_comm  # noqa: F401  (widgets talk to a dummy comm)

WEB = """chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain mgmt match vlan.vid == 100 { input => l2fwd => output; }
"""
P4SC = "IDS before Firewall before NAT\nEnd_of_Request\nLB first\nLB before L3fwd\n"
INTENT = ('{"name": "web_ips", "NFs": [{"name": "fw1", "type": "Firewall"}], '
          '"Links": [["input", "fw1"], ["fw1", "output"]], "Route": {"weight": 1}}')
TAGGER = """control tagger(inout headers_t hdr, inout sfc_meta_t sfc) {
    apply { sfc.metadata = 1; }
}"""



@pytest.fixture(scope="module")
def ip():
    return ipython_shell()

@pytest.fixture
def sfc(ip, monkeypatch):
    """Fresh magics (and Lab) for each test; what they display lands in ``sfc.shown``."""
    ip.config.pop("SfcMagics", None)
    magics = SfcMagics(ip)
    ip.register_magics(magics)
    magics.shown = []
    monkeypatch.setattr(magics_module, "display", magics.shown.append)
    yield magics
    ip.configurables.remove(magics)


def run(ip, cell: str) -> None:
    """Run a cell as the kernel would; errors are shown, not raised."""
    ip.run_cell(cell)


# -- loading ---------------------------------------------------------------------------------------

def test_load_ext_registers_the_magics(ip):
    assert {"chain", "nf"} <= set(ip.magics_manager.magics["cell"])
    assert "sfc" in ip.magics_manager.magics["line"]
    assert isinstance(ip.magics_manager.registry["SfcMagics"], SfcMagics)


def test_current_lab_is_the_magics_lab(ip, sfc):
    assert current_lab() is sfc.lab and current_lab(ip) is sfc.lab
    mine = Lab()
    sfc.lab = mine
    assert current_lab() is mine


def test_current_lab_without_the_extension():
    class Bare:
        class magics_manager:
            registry: dict = {}

    with pytest.raises(UsageError, match="%load_ext sfclab"):
        current_lab(Bare())


# -- %%chain ---------------------------------------------------------------------------------------

def test_chain_adds_compiles_and_displays(ip, sfc):
    assert ip.run_cell_magic("chain", "", WEB) is None
    assert sfc.lab.chains.names() == ["web", "mgmt"] and len(sfc.lab.compiled.paths) == 3
    (view,) = sfc.shown
    assert isinstance(view, LiveView) and view is sfc.lab.view and "2 chains" in view.summary


def test_every_chain_cell_shows_the_same_view_updated_in_place(ip, sfc):
    ip.run_cell_magic("chain", "", WEB)
    ip.run_cell_magic("chain", "", "chain web: firewall -> l3fwd\nchain extra: nat")
    # web lost its match, so mgmt and extra after it get no packets: warnings follow the view
    first, second = [v for v in sfc.shown if isinstance(v, LiveView)]
    assert len(sfc.shown) == 3 and "gets no packets" in str(sfc.shown[2])
    assert first is second and sfc.lab.chains.names() == ["web", "mgmt", "extra"]
    assert "3 chains" in first.summary


@pytest.mark.parametrize("cell, names", [(P4SC, ["sfc1", "sfc2"]), (INTENT, ["web_ips"]),
                                         ("chain a: nat -> l3fwd", ["a"])])
def test_chain_takes_every_style(ip, sfc, cell, names):
    ip.run_cell_magic("chain", "", cell)
    assert sfc.lab.chains.names() == names


def test_chain_name_renames(ip, sfc):
    ip.run_cell_magic("chain", "--name web2", "chain web: firewall -> nat")
    ip.run_cell_magic("chain", "-n p4sc", "LB before L3fwd\n")
    assert sfc.lab.chains.names() == ["web2", "p4sc"]


def test_chain_arch_stays(ip, sfc):
    ip.run_cell_magic("chain", "--arch tna", "chain web: firewall -> nat")
    assert sfc.lab.arch == "tna" and sfc.lab.compiled.placement is not None
    ip.run_cell_magic("chain", "", "chain x: nat")
    assert sfc.lab.compiled.arch == "tna"
    ip.run_cell_magic("chain", "-a v1model", "chain x: nat")
    assert sfc.lab.arch == "v1model"


def test_chain_show_picks_tabs(ip, sfc):
    ip.run_cell_magic("chain", "--show p4,ir", WEB)
    ip.run_cell_magic("chain", "-s ir,p4", "chain x: nat")
    a, b = sfc.shown
    assert a is b and a.show == ("ir", "p4") and a is not sfc.lab.view
    assert "3 chains" in a.summary


def test_arch_default_is_configurable(ip, sfc):
    ip.run_line_magic("config", "SfcMagics.arch = 'tna'")
    assert sfc.lab.arch == "tna"
    ip.run_line_magic("config", "SfcMagics.arch = 'bmv2'")         # IPython logs the error
    assert sfc.arch == "tna"


@pytest.mark.parametrize("line, cell, message", [
    ("--arch bmv2", WEB, "invalid choice: 'bmv2'"),
    ("--show irr", WEB, "unknown view 'irr'; did you mean 'ir'?"),
    ("--colour red", WEB, "unrecognized arguments: --colour red"),
    ("", "  \n ", "the cell is empty"),
])
def test_chain_usage_errors(ip, sfc, line, cell, message):
    with pytest.raises(UsageError, match=message):
        ip.run_cell_magic("chain", line, cell)
    assert len(sfc.lab.chains) == 0 and sfc.shown == []


@pytest.mark.parametrize("line, cell, first_line", [           # lines as the cell shows them
    ("", "chain c {\n    input => firewal => output;\n}",
     "ChainValidationError: <cell>:3:14: unknown NF 'firewal'"),
    ("", "chain c {\n    input => => output;\n}", "ChainSyntaxError: <cell>:3:14:"),
    ("", "chain a: nat\nchain a: lb", "ChainValidationError: <cell>:3:7: duplicate chain name"),
    ("--name x", WEB, "ChainError: <cell>: a name is for one chain; got 2 (web, mgmt)"),
])
def test_chain_errors_are_short_and_change_nothing(ip, sfc, capsys, line, cell, first_line):
    ip.run_cell_magic("chain", "", "chain keep: nat")
    sfc.shown.clear()
    before = sfc.lab.compiled
    with pytest.raises(SfcUsageError) as e:
        ip.run_cell_magic("chain", line, cell)
    rendered = "\n".join(e.value._render_traceback_())
    assert rendered.startswith(first_line) and "Traceback" not in rendered
    assert sfc.lab.compiled is before and sfc.shown == []
    run(ip, f"%%chain {line}\n{cell}")                     # as a notebook shows it
    out = capsys.readouterr()
    assert first_line in out.out + out.err and "Traceback" not in out.out + out.err


def test_positions_count_the_magic_line_as_the_editor_does(ip, sfc):
    cell = "chain web {\n    input => firewall;\n    firewall => (nat : drop ? firewall.colour == 0);\n}"
    with pytest.raises(SfcUsageError) as e:
        ip.run_cell_magic("chain", "--arch tna", cell)
    err = e.value.error
    editor_lines = f"%%chain --arch tna\n{cell}".splitlines()         # what the user sees
    assert err.line == 4 and err.location.startswith("<cell>:4:")       # not 3: the body's
    start = editor_lines[3].index("firewall.colour") + 1
    assert start <= err.column < start + len("firewall.colour")        # a caret in the token
    assert err.context.splitlines()[0].strip() == editor_lines[3].strip()
    with pytest.raises(SfcUsageError) as e:
        ip.run_cell_magic("nf", "tagger", "control tagger(inout headers_t hdr, inout sfc_meta_t "
                                          "sfc) {\n    apply { x = ; }\n}")
    assert e.value.error.location == "<nf tagger>:3:17"
    assert "apply { x = ; }" in e.value.error.context


def test_weights_spread_over_cells_are_refused_where_they_go_past_one(ip, sfc):
    ip.run_cell_magic("chain", "", "chain web weight 0.7: firewall -> nat")
    cell = "chain a: l3fwd\nchain b weight 0.6: nat"
    with pytest.raises(SfcUsageError) as e:
        ip.run_cell_magic("chain", "", cell)
    err = e.value.error
    assert err.line == 3 and err.column == len("chain b weight ") + 1   # the %%chain line is 1
    assert "add up to 1.3" in err.message and sfc.lab.chains.names() == ["web"]


def test_the_caret_line_is_shown(ip, sfc, capsys):
    run(ip, "%%chain\nchain c {\n    input => firewal => output;\n}")
    shown = capsys.readouterr()
    lines = (shown.out + shown.err).splitlines()
    i = next(i for i, x in enumerate(lines) if "input => firewal" in x)
    assert lines[i + 1].strip() == "^^^^^^^" and lines[i + 2] == "hint: did you mean 'firewall'?"


def test_traceback_option_brings_tracebacks_back(ip, sfc, capsys):
    ip.run_line_magic("config", "SfcMagics.traceback = True")
    assert sfc.traceback
    run(ip, "%%chain\nchain c { input => firewal => output; }")
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" in text and "lab.py" in text and "unknown NF 'firewal'" in text
    ip.run_line_magic("config", "SfcMagics.traceback = False")
    run(ip, "%%chain\nchain c { input => firewal => output; }")
    assert "Traceback" not in capsys.readouterr().out


def test_other_exceptions_are_not_hidden(ip, sfc, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug in sfclab")

    monkeypatch.setattr(sfc.lab, "add", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        ip.run_cell_magic("chain", "", "chain c: nat")


def test_chain_warnings_show_below_the_view(ip, sfc, monkeypatch):
    # the compiled chains' warnings (a chain earlier ones shadow) and the Lab's own, if any
    from types import SimpleNamespace

    shadow = SimpleNamespace(message="chain 'web' gets no packets: chain 'all' takes them")
    real = Lab.compiled
    monkeypatch.setattr(Lab, "compiled", property(
        lambda lab: SimpleNamespace(warnings=(shadow,), paths=real.fget(lab).paths)))
    monkeypatch.setattr(Lab, "warnings", lambda lab: [f"{len(lab.chains)} chains: look"],
                        raising=False)
    ip.run_cell_magic("chain", "", WEB)
    view, warned = sfc.shown
    assert view is sfc.lab.view
    bundle = warned._repr_mimebundle_()
    assert bundle["text/plain"] == ("warning: chain 'web' gets no packets: chain 'all' takes "
                                    "them\nwarning: 2 chains: look")
    assert "sfc-warning" in bundle["text/html"] and "2 chains: look" in bundle["text/html"]
    monkeypatch.setattr(Lab, "compiled", real)
    monkeypatch.setattr(Lab, "warnings", lambda lab: [], raising=False)
    sfc.shown.clear()
    ip.run_cell_magic("chain", "", WEB)
    assert sfc.shown == [sfc.lab.view]                       # nothing to say: nothing shown


def test_without_a_widget_front_end_the_view_is_the_summary(ip, sfc, monkeypatch, capsys):
    from IPython.display import display

    monkeypatch.setattr(magics_module, "display", display)
    run(ip, "%%chain\n" + WEB)
    assert "2 chains, 3 service paths (v1model)" in capsys.readouterr().out


# -- %%nf ------------------------------------------------------------------------------------------

def test_nf_adds_to_the_labs_catalogue(ip, sfc, capsys):
    ip.run_cell_magic("nf", "tagger --layer 3 --offload partially --field mark:8", TAGGER)
    info = sfc.lab.catalog.resolve("tagger")
    assert (info.layer, info.offload, dict(info.fields)) == (3, "partially", {"mark": 8})
    assert "NF 'tagger': layer 3, partially offloadable" in capsys.readouterr().out
    ip.run_cell_magic("chain", "", "chain c { input => tagger => (nat : drop ? tagger.mark == 1);"
                                   " nat => output; }")
    assert "tagger" in sfc.lab.generated().program.text
    ip.run_cell_magic("nf", "tagger --field mark:8", TAGGER)       # the cell run again
    assert sfc.lab.catalog.resolve("tagger").layer == 4


def test_nf_shadows_the_library_only_with_replace(ip, sfc):
    nat = TAGGER.replace("tagger", "nat")
    with pytest.raises(SfcUsageError, match="already in the catalogue"):
        ip.run_cell_magic("nf", "nat", nat)
    ip.run_cell_magic("nf", "nat --replace", nat)
    assert sfc.lab.catalog.definition("nat").has_p4


@pytest.mark.parametrize("line, cell, error, message", [
    ("tagger --field mark", TAGGER, UsageError, "--field is NAME:WIDTH"),
    ("tagger --offload maybe", TAGGER, UsageError, "invalid choice: 'maybe'"),
    ("tagger --layer three", TAGGER, UsageError, "invalid int value"),
    ("", TAGGER, UsageError, "the following arguments are required: name"),
    ("tagger", "\n", UsageError, "the cell is empty"),
    ("tagger", "control tagger( {", SfcUsageError, "P4SyntaxError: <nf tagger>:2:"),
    ("other", TAGGER, SfcUsageError, "expected one control named 'other'"),
    ("tagger", TAGGER.replace("= 1", "= one"), SfcUsageError,    # the cell's line, a caret
     "<nf tagger>:3:28: one: declaration not found\n        apply { sfc.metadata = one; }\n"
     + " " * 31 + "^^^"),
])
def test_nf_errors(ip, sfc, line, cell, error, message):
    before = sorted(sfc.lab.catalog.names())
    with pytest.raises(error) as e:
        ip.run_cell_magic("nf", line, cell)
    shown = "\n".join(e.value._render_traceback_()) if error is SfcUsageError else str(e.value)
    assert message in shown and "Traceback" not in shown
    assert sorted(sfc.lab.catalog.names()) == before


# -- %sfc ------------------------------------------------------------------------------------------

def test_sfc_help_lists_every_command(ip, sfc):
    shown = ip.run_line_magic("sfc", "help")
    bundle = shown._repr_mimebundle_()
    out, html = bundle["text/plain"], bundle["text/html"]
    for cmd in ("help", "show [VIEW", "export DIR", "remove CHAIN", "%%chain", "%%nf",
                "target [URL]", "push", "update [--reload]", "send CHAIN [N]", "send-pcap FILE",
                "trace [N]", "tables", "counters"):
        assert cmd in out and cmd.replace("<", "&lt;") in html
    # URLs only as code in the HTML (JupyterLab turns URLs in plain text into links)
    assert "<code>%sfc target [URL]</code>" in html
    assert "bmv2://H:P?device_id=N" in html and "<Lab" not in out
    assert ip.run_line_magic("sfc", "")._repr_mimebundle_()["text/plain"] == out
    assert SfcMagics.commands() == ["help", "show", "export", "remove", "chains", "target", "push",
                                    "update", "send", "send-pcap", "trace", "tables", "counters",
                                    "topology", "edit"]


def test_sfc_unknown_command(ip, sfc):
    with pytest.raises(UsageError, match="unknown %sfc command 'remov'; did you mean 'remove'?"):
        ip.run_line_magic("sfc", "remov web")
    with pytest.raises(UsageError, match="%sfc help lists them"):
        ip.run_line_magic("sfc", "zzz")


def test_adding_a_command_is_one_method(ip, capsys):
    class More(SfcMagics):
        def sfc_send_pcap(self, args: str) -> str:
            """send-pcap FILE           send the packets of a pcap file"""
            return f"sent {args}"

    magics = More(ip)
    ip.register_magics(magics)
    try:
        assert ip.run_line_magic("sfc", "send-pcap x.pcap") == "sent x.pcap"
        help_text = ip.run_line_magic("sfc", "help")._repr_mimebundle_()["text/plain"]
        assert re.search(r"%sfc send-pcap FILE +send the packets of a pcap file", help_text)
    finally:
        ip.register_magics(SfcMagics(ip))


def test_sfc_show(ip, sfc):
    ip.run_cell_magic("chain", "", WEB)
    ip.run_line_magic("sfc", "show")
    ip.run_line_magic("sfc", "show pipeline fsm")
    ip.run_line_magic("sfc", "  show\tfsm,pipeline ")
    full, a, b = sfc.shown[1:]
    assert full is sfc.lab.view and a is b and a.show == ("pipeline", "fsm")
    with pytest.raises(UsageError, match="unknown view 'pipe'; did you mean 'pipeline'?"):
        ip.run_line_magic("sfc", "show pipe")


def test_sfc_export(ip, sfc, tmp_path, capsys):
    ip.run_cell_magic("chain", "", WEB)
    ip.run_line_magic("sfc", f"export {tmp_path / 'v1'}")
    assert "wrote program.p4, p4info.txt, entries.json, plan.txt" in capsys.readouterr().out
    ip.run_line_magic("sfc", f"export '{tmp_path / 'with space'}' --arch tna")
    assert "TNA" in (tmp_path / "with space" / "program.p4").read_text().splitlines()[0]
    with pytest.raises(UsageError, match="required: dir"):
        ip.run_line_magic("sfc", "export")
    with pytest.raises(UsageError, match="invalid choice: 'bmv2'"):
        ip.run_line_magic("sfc", "export out --arch bmv2")
    (tmp_path / "file").write_text("")
    with pytest.raises(SfcUsageError, match="cannot create"):
        ip.run_line_magic("sfc", f"export {tmp_path / 'file' / 'sub'}")


def test_sfc_remove(ip, sfc, capsys):
    ip.run_cell_magic("chain", "", WEB)
    view = sfc.lab.view
    ip.run_line_magic("sfc", "remove mgmt")
    assert sfc.lab.chains.names() == ["web"] and "1 chains" in view.summary
    assert "removed mgmt; chains left: web" in capsys.readouterr().out
    with pytest.raises(SfcUsageError) as e:
        ip.run_line_magic("sfc", "remove wbe")
    assert e.value._render_traceback_() == ["ChainError: lab: no chain 'wbe'\n"
                                            "hint: did you mean 'web'?"]
    with pytest.raises(UsageError, match="name the chains to remove"):
        ip.run_line_magic("sfc", "remove")
    assert sfc.lab.chains.names() == ["web"]
