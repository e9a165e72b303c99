"""Runtime: a P4Runtime client and sessions that push chain sets and change them at run time."""
