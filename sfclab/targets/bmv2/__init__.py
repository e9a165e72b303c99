"""The BMv2 target: sfclab's v1model program on a real ``simple_switch_grpc``, its
event logger, packet ports, pcap files, Thrift registers and many packets at once."""

from .. import _lends

#: ``from sfclab.targets.bmv2 import X`` as before the folder: X from :mod:`.target`.
__getattr__ = _lends(__name__, "target")
