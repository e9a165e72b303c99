"""A Mininet network built from a :class:`~sfclab.ir.topology.Topology`.

Mininet (Debian's ``mininet`` package; no Open vSwitch needed) is the engine:
every host and server is a Mininet host in its own network namespace, with the
topology's address and MAC; every link is a veth pair (a ``TCLink`` with the
link's latency and bandwidth, checksum offload off as Mininet's ``TCULink``
does for software switches); every switch is a Mininet switch node in the root
namespace whose data plane is a process sfclab starts on the node's interfaces
(``sfclab model-switch --iface 1@s1-eth1 …``: :mod:`.switches`), or, with
*switch_namespaces*, a node in a network namespace of its own holding its interfaces,
where its process runs (``simple_switch_grpc -i 1@s1-eth1 …``: BMv2's Thrift server
binds 0.0.0.0:9090, and there it is alone and on no outside address).  IPv6 is off on every interface before it
comes up, so no kernel chatter (neighbour discovery, MLD) reaches a switch;
hosts know each other's MACs (static ARP), so traffic needs no broadcast.

Switch ports keep the topology's numbers; a switch's interfaces are named
``PREFIX+SWITCH-ethPORT`` (``s1-eth2``), hosts' ``HOST-ethN`` inside their own
namespaces.  Switch interfaces live in the root namespace, so give concurrent
networks different *prefix* es.  :meth:`MininetEmulation.stop` removes what
the emulation made, and only that: its processes, hosts, links and interfaces.

Mininet is Python 2/3 code that Debian installs for its own ``python3``; it is
loaded from there when this interpreter has no ``mininet`` (:func:`load_mininet`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ...errors import SfclabError, TargetError
from ...ir.topology import Topology
from ..ports.interfaces import InterfacePorts

__all__ = ["MININET_DIR", "missing_mininet", "load_mininet", "netns", "interface_name",
           "MininetEmulation"]

#: Where Debian's ``mininet`` package puts the Python package.
MININET_DIR = Path("/usr/lib/python3/dist-packages/mininet")
INSTALL_MININET = ("apt-get install --no-install-recommends mininet iputils-ping ethtool "
                   "(Debian, Ubuntu)")
_CLONE_NEWNET = 0x40000000
#: Linux's interface names have at most 15 characters.
IFNAMSIZ = 15


def missing_mininet() -> str | None:
    """Why a Mininet network cannot run here (None: it can): not root, no Mininet."""
    if os.geteuid() != 0:
        return "Mininet needs root (network namespaces, veth pairs, raw sockets)"
    if shutil.which("mnexec") is None:
        return f"Mininet is not installed (no mnexec on PATH): {INSTALL_MININET}"
    try:
        load_mininet()
    except TargetError as e:
        return e.message
    return None


def load_mininet() -> ModuleType:
    """The ``mininet`` package: this interpreter's, else Debian's (:data:`MININET_DIR`)."""
    with contextlib.suppress(ImportError):
        import mininet.net  # noqa: F401

        return sys.modules["mininet"]
    import importlib.util

    init = MININET_DIR / "__init__.py"
    if not init.is_file():
        raise TargetError("Mininet is not installed", hint=INSTALL_MININET)
    spec = importlib.util.spec_from_file_location("mininet", init,
                                                  submodule_search_locations=[str(MININET_DIR)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["mininet"] = module
    try:
        spec.loader.exec_module(module)
        import mininet.net  # noqa: F401
    except Exception as e:
        sys.modules.pop("mininet", None)
        raise TargetError(f"cannot load Mininet from {MININET_DIR}: {e}",
                          hint=INSTALL_MININET) from None
    return module


@contextlib.contextmanager
def netns(pid: int) -> Iterator[None]:
    """Run the block (this thread only) in the network namespace of process *pid*:
    sockets made inside stay in that namespace."""
    setns = getattr(os, "setns", None) or _libc_setns
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    except OSError as e:
        os.close(own)
        raise TargetError(f"cannot enter the network namespace of process {pid}: "
                          f"{e.strerror}") from None
    try:
        setns(target, _CLONE_NEWNET)
        try:
            yield
        finally:
            setns(own, _CLONE_NEWNET)
    finally:
        os.close(target)
        os.close(own)


def _libc_setns(fd: int, nstype: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, nstype) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def interface_name(node: str, port: int, prefix: str = "") -> str:
    """The interface of *node*'s *port* (Mininet's naming, after *prefix*).

    >>> interface_name("s1", 2, "t7")
    't7s1-eth2'
    """
    name = f"{prefix}{node}-eth{port}"
    if len(name) > IFNAMSIZ:
        raise TargetError(f"interface name {name!r} is longer than Linux's {IFNAMSIZ} "
                          f"characters", hint="use shorter switch names or a shorter prefix")
    return name


def _subnet(topology: Topology) -> int:
    """The prefix length of the smallest network holding every host's address."""
    addrs = [h.ipv4 for h in topology.hosts.values()]
    if not addrs:
        return 8
    length = 32
    while length > 0 and len({a >> (32 - length) for a in addrs}) > 1:
        length -= 1
    return min(length, 24) if length else 0


#: The queueing disciplines Mininet's ``TCIntf`` shapes links with: ``htb`` for a
#: bandwidth, ``netem`` for a latency (with their kernel modules).
SHAPERS = {"htb": ("bandwidth", "sch_htb", "handle 5:0 htb default 1"),
           "netem": ("latency", "sch_netem", "netem delay 1ms")}
_QDISCS: dict[str, bool] = {}


def kernel_qdiscs() -> dict[str, bool]:
    """Which of :data:`SHAPERS` this kernel has, tried once (per process) on a veth
    pair in a network namespace of its own; where it cannot be tried, all are
    assumed (and :meth:`MininetEmulation._check_shaping` looks afterwards)."""
    if not _QDISCS:
        script = "ip link add q0 type veth peer name q1 || exit 9\n" + "".join(
            f"tc qdisc add dev q0 root {args} >/dev/null 2>&1 && echo {q}=1 || echo {q}=0\n"
            f"tc qdisc del dev q0 root >/dev/null 2>&1\n" for q, (_, _, args) in SHAPERS.items())
        try:
            done = subprocess.run(["unshare", "--net", "sh", "-c", script], capture_output=True,
                                  text=True, timeout=20, check=False)
            got = dict(line.split("=") for line in done.stdout.split() if "=" in line)
        except (OSError, subprocess.TimeoutExpired):
            got = {}
        _QDISCS.update({q: got.get(q, "1") == "1" for q in SHAPERS})
    return dict(_QDISCS)


def _link_params(link, qdiscs: dict[str, bool] | None = None
                 ) -> tuple[dict[str, Any], list[str]]:
    """TCIntf parameters of a topology link, and notes on what Mininet cannot do;
    *qdiscs* (:func:`kernel_qdiscs`): a shaping the kernel cannot do is left out
    (the caller says so once, not Mininet once per link)."""
    qdiscs = qdiscs if qdiscs is not None else {q: True for q in SHAPERS}
    params: dict[str, Any] = {"txo": False, "rxo": False}
    notes = []
    if link.latency_ms and qdiscs["netem"]:
        params["delay"] = f"{link.latency_ms:g}ms"
    if link.bandwidth_gbps is not None and qdiscs["htb"]:
        mbps = link.bandwidth_gbps * 1000
        if mbps > 1000:
            notes.append(f"link {link}: Mininet shapes at most 1 Gbit/s, so its "
                         f"{link.bandwidth_gbps:g} Gbit/s is not limited")
        else:
            params["bw"] = mbps
    return params, notes


def unshaped_notes(topology: Topology, qdiscs: dict[str, bool]) -> list[str]:
    """One note per shaping the kernel lacks: what is not shaped, and why.

    >>> from sfclab.lang import parse_topology
    >>> t = parse_topology("switch s1, s2\\nlink s1 -- s2 latency 1ms bandwidth 1Gbps")
    >>> unshaped_notes(t, {"htb": True, "netem": False})
    ['latency is not emulated on 1 link (s1--s2): this kernel has no tc netem queueing discipline (modprobe sch_netem); packets cross those links unshaped']
    """
    out = []
    for q, (what, module, _) in SHAPERS.items():
        if qdiscs.get(q, True):
            continue
        links = [k for k in topology.links
                 if (k.latency_ms if what == "latency" else k.bandwidth_gbps)]
        if links:
            shown = ", ".join(f"{k.a}--{k.b}" for k in links[:6]) + (
                f" and {len(links) - 6} more" if len(links) > 6 else "")
            out.append(f"{what} is not emulated on {len(links)} link{'s' * (len(links) != 1)} "
                       f"({shown}): this kernel has no tc {q} queueing discipline "
                       f"(modprobe {module}); packets cross those links unshaped")
    return out


class MininetEmulation:
    """Hosts, servers, links and switch processes of a topology, in Mininet.

    *launch(switch, interfaces)* starts a switch's data-plane process on its
    interfaces (``{port: interface}``) and returns it (a
    :class:`~sfclab.targets.process.tools.ManagedProcess`); *workdir* holds logs."""

    def __init__(self, topology: Topology, launch: Callable[[str, dict[int, str]], Any], *,
                 prefix: str = "", workdir: str | os.PathLike | None = None,
                 switch_namespaces: bool = False) -> None:
        why = missing_mininet()
        if why:
            raise TargetError(f"cannot build a Mininet network: {why}",
                              hint="run as root on Linux with Mininet installed")
        self.topology = topology
        self.prefix = prefix
        #: Free switch ports that chains enter or leave by (``s3:7``), in order: each gets
        #: an interface, linked to a host of its own (no address) that stands for the
        #: outside world there (:meth:`set_port_ends`).
        self.port_ends: tuple[tuple[str, int], ...] = ()
        for s in topology.switches:                 # every name fits, before anything is made
            self.interfaces(s)
        self.launch = launch
        #: each switch node in a network namespace of its own (its process started there)
        self.switch_namespaces = switch_namespaces
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="sfclab-mininet-")).absolute()
        self._own_workdir = workdir is None
        self.notes: list[str] = []
        self.qdiscs: dict[str, bool] = {}
        self.net = None
        self.processes: dict[str, Any] = {}
        self._made: list[str] = []                  # the root namespace's interfaces we made

    # -- names ---------------------------------------------------------------------------------
    def node_name(self, node: str) -> str:
        """The Mininet node of a topology node (switches get the prefix; a port end,
        ``s3:7``, is a host of that name)."""
        return f"{self.prefix}{node}" if node in self.topology.switches else node

    def interfaces(self, node: str) -> dict[int, str]:
        """``{port: interface}`` of a topology node (a switch's free ports that chains
        enter or leave by included) or of a port end (``s3:7``: its one interface)."""
        if node in self.port_names():
            return {0: self.port_names()[node]}
        ports = set(self.topology.ports_used(node))
        ports |= {p for s, p in self.port_ends if s == node}
        return {p: interface_name(self.node_name(node), p) for p in sorted(ports)}

    def set_port_ends(self, ends) -> None:
        """Give each free switch port of *ends* (``(switch, port)``) an interface when the
        network is built (before :meth:`start`)."""
        if self.net is not None:
            raise TargetError("the Mininet network is built already: its ports are fixed",
                              hint="stop it and start it again")
        for sw, p in ends:
            problem = self.topology.port_endpoint_problem(sw, p)
            if problem:
                raise TargetError(f"{sw}:{p}: {problem[0]}", hint=problem[1])
        self.port_ends = tuple(sorted(set(ends)))
        for sw in {s for s, _ in self.port_ends}:     # every name fits
            self.interfaces(sw)

    def port_names(self) -> dict[str, str]:
        """Port end (``s3:7``) -> the interface of the host standing for the outside
        world there (in its own namespace)."""
        return {f"{sw}:{p}": f"pe{i}-eth0" for i, (sw, p) in enumerate(self.port_ends, 1)}

    def node(self, name: str):
        """The Mininet node (``Host`` or switch) of topology node *name*."""
        return self.net[self.node_name(name)]

    # -- building ------------------------------------------------------------------------------
    def start(self) -> MininetEmulation:
        """Build the network and start every switch's process."""
        load_mininet()
        from mininet.log import setLogLevel
        from mininet.net import Mininet

        setLogLevel("error")
        self.net = Mininet(controller=None, build=False, autoSetMacs=False,
                           autoStaticArp=False, inNamespace=False)
        try:
            self._add_hosts()
            self._add_switches()
            self._add_links()
            self.net.build()
            self._static_arp()
            self._check_shaping()
            self.net.start()
        except SfclabError:
            self.stop()
            raise
        except Exception as e:                  # Mininet's own: a name taken, a tool missing
            self.stop()
            raise TargetError(f"Mininet could not build the network: {e}".strip(),
                              hint="another network may use the same interface names: give "
                                   "this one a prefix of its own") from None
        except BaseException:
            self.stop()
            raise
        return self

    def _add_hosts(self) -> None:
        from mininet.node import Host

        plen = _subnet(self.topology)
        for name in self.topology:
            kind = self.topology.kind(name)
            if kind == "switch":
                continue
            obj = self.topology.node(name)
            if kind == "host":
                h = self.net.addHost(name, cls=Host, ip=f"{obj.ip}/{plen}", mac=obj.mac_text)
            else:                           # a server: no address (it runs NFs, L2 only)
                h = self.net.addHost(name, cls=Host, ip=None)
            # new interfaces inherit "default": no IPv6, so no neighbour discovery or MLD
            h.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
                  "net.ipv6.conf.default.disable_ipv6=1")
        for end in self.port_names():                # the outside world at a free port
            h = self.net.addHost(end, cls=Host, ip=None)
            h.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
                  "net.ipv6.conf.default.disable_ipv6=1")

    def _add_switches(self) -> None:
        cls = _switch_class()
        for i, name in enumerate(self.topology.switches, 1):
            self.net.addSwitch(self.node_name(name), cls=cls, dpid=f"{i:x}",
                               start_process=self._start_switch(name),
                               inNamespace=self.switch_namespaces)

    def _start_switch(self, name: str) -> Callable[[], None]:
        def start() -> None:
            with self.in_node(name):       # a process forked here is in the node's namespace
                self.processes[name] = self.launch(name, self.interfaces(name))
        return start

    def in_node(self, name: str) -> contextlib.AbstractContextManager:
        """The block runs (this thread only) in node *name*'s network namespace."""
        node = self.node(name)
        return netns(node.pid) if node.inNamespace else contextlib.nullcontext()

    def netns_pid(self, name: str) -> int | None:
        """A process in node *name*'s network namespace (None: the root namespace)."""
        node = self.node(name)
        return node.pid if node.inNamespace else None

    def _add_links(self) -> None:
        from mininet.link import Link

        intf = _intf_class()
        self.qdiscs = kernel_qdiscs() if any(
            k.latency_ms or k.bandwidth_gbps for k in self.topology.links) else {}
        self.notes += unshaped_notes(self.topology, self.qdiscs)
        for link in self.topology.links:
            a, b = link.a, link.b
            if self.topology.kind(a) == "switch" and self.topology.kind(b) != "switch":
                a, b = b, a                 # the host first: its end is made in its namespace
            params, notes = _link_params(link, self.qdiscs or None)
            self.notes += notes
            pa, pb = link.port_of(a), link.port_of(b)
            opts = {}
            for key, node in (("addr1", a), ("addr2", b)):
                if self.topology.kind(node) == "host":
                    opts[key] = self.topology.node(node).mac_text
            names = interface_name(self.node_name(a), pa), interface_name(self.node_name(b), pb)
            self.net.addLink(self.node_name(a), self.node_name(b), port1=pa, port2=pb,
                             cls=Link, intf=intf, intfName1=names[0], intfName2=names[1],
                             params1=params, params2=params, **opts)
            self._made += [n for n, node in zip(names, (a, b))
                           if self.topology.kind(node) == "switch"]
        for end, host_side in self.port_names().items():
            sw, p = end.split(":")
            name = interface_name(self.node_name(sw), int(p))
            self.net.addLink(end, self.node_name(sw), port1=0, port2=int(p), cls=Link, intf=intf,
                             intfName1=host_side, intfName2=name,
                             params1={"txo": False, "rxo": False},
                             params2={"txo": False, "rxo": False})
            self._made.append(name)

    def _static_arp(self) -> None:
        hosts = self.topology.hosts
        for name in hosts:
            h = self.net[name]
            lines = [f"neigh replace {o.ip} lladdr {o.mac_text} dev {h.defaultIntf()} "
                     f"nud permanent" for n, o in hosts.items() if n != name]
            if lines:
                h.cmd("ip -batch - <<'EOF'\n" + "\n".join(lines) + "\nEOF")

    def _check_shaping(self) -> None:
        if not self.qdiscs.get("netem", True):
            return                                  # said once already (unshaped_notes)
        for link in self.topology.links:
            if not link.latency_ms:
                continue
            sw = link.a if self.topology.kind(link.a) == "switch" else link.b
            name = interface_name(self.node_name(sw), link.port_of(sw))
            with self.in_node(sw):
                shown = subprocess.run(["tc", "qdisc", "show", "dev", name],
                                       capture_output=True, text=True, check=False).stdout
            if "netem" not in shown:
                self.notes.append(f"link {link}: its latency is not emulated (this kernel has "
                                  f"no tc netem: modprobe sch_netem)")

    # -- using ---------------------------------------------------------------------------------
    def host_ports(self, host: str) -> InterfacePorts:
        """Raw sockets on *host*'s interfaces, inside its namespace (``{port: …}``)."""
        node = self.node(host)
        with netns(node.pid):
            return InterfacePorts(self.interfaces(host))

    # -- stopping ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the switch processes, then Mininet (hosts, links); remove any interface
        this network made that is left (and no other)."""
        for proc in self.processes.values():       # all at once: they stop in parallel
            if proc.running:
                with contextlib.suppress(ProcessLookupError):
                    proc.popen.send_signal(signal.SIGTERM)
        for proc in self.processes.values():
            with contextlib.suppress(Exception):
                proc.stop(3.0)
        self.processes.clear()
        if self.net is not None:
            with contextlib.suppress(Exception):
                self.net.stop()
            self.net = None
        for name in self._made:                    # what Mininet left of ours (only ours)
            if Path("/sys/class/net", name).exists():
                subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)
        self._made.clear()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


_CLASSES: dict[str, type] = {}


def _switch_class() -> type:
    """A Mininet switch node (root namespace) whose data plane is a process."""
    if "switch" not in _CLASSES:
        from mininet.node import Switch

        class ProcessSwitch(Switch):
            """A switch whose data plane is a process sfclab starts on its interfaces."""

            def __init__(self, name: str, *, start_process: Callable[[], None],
                         **params: Any) -> None:
                super().__init__(name, **params)
                self.start_process = start_process

            def start(self, controllers) -> None:
                self.start_process()

        _CLASSES["switch"] = ProcessSwitch
    return _CLASSES["switch"]


def _intf_class() -> type:
    """Mininet's TCIntf, with IPv6 off on the interface before it comes up, and an
    htb whose quantum fits the link's rate (tc warns per link otherwise, which
    Mininet prints as an error: ``quantum of class 50001 is big``)."""
    if "intf" not in _CLASSES:
        from mininet.link import TCIntf

        class QuietIntf(TCIntf):
            def bwCmds(self, bw=None, **kw: Any):
                cmds, parent = super().bwCmds(bw=bw, **kw)
                if bw and not kw.get("use_hfsc") and not kw.get("use_tbf"):
                    # quantum = rate in bytes / r2q must stay within tc's 1,000..200,000
                    r2q = max(10, -(-int(bw * 1e6 / 8) // 200_000))
                    cmds = [c.replace("htb default 1", f"htb default 1 r2q {r2q}")
                            for c in cmds]
                return cmds, parent

            def config(self, **params: Any):
                if self.node.inNamespace:
                    self.cmd(f"sysctl -qw net.ipv6.conf.{self.name}.disable_ipv6=1")
                else:
                    with contextlib.suppress(OSError):
                        Path(f"/proc/sys/net/ipv6/conf/{self.name}/disable_ipv6").write_text("1")
                return super().config(**params)

        _CLASSES["intf"] = QuietIntf
    return _CLASSES["intf"]

