"""Whether a process of this host is still running, by its PID (stale locks, journals and
exit-status files name the process that made them)."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether process `pid` runs on this host: another user's counts (its signal is refused,
    it is there); 0 and negative PIDs name no one process."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
