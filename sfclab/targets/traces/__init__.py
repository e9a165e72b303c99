"""Per-packet traces, the same for every target: what a switch did to a packet, the
bounded store of the packets a Lab sent, and the per-pass timeline people read."""
