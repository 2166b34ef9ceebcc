"""Storage profiles: fio-like measurements (streaming, latency, random I/O, small working set)
expressed as runs of the N-N patterns, so they go through the same runner and documents."""
