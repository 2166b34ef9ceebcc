"""Replay an application's I/O (a Darshan log, or an hpcio trace) as a workload."""
