"""Switch processes sfclab starts: finding executables, free ports, the keeper that
binds a switch to this machine and ends it with its Python, and what it listens on."""
