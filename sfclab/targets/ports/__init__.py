"""Packets on a real switch's ports: nanomsg packet-in, raw interfaces, pcap files."""
