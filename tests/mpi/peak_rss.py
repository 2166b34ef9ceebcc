"""Run a command as one MPI rank and write its peak resident memory (KiB, the kernel's
high-water mark, as /usr/bin/time %M reports it) to DIR/rss.RANK.

    mpiexec -n 2 python peak_rss.py DIR -- python -m hpcio run ...
"""

import os
import resource
import subprocess
import sys
from pathlib import Path

if __name__ == "__main__":
    out, command = Path(sys.argv[1]), sys.argv[3:]
    rank = os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("PMI_RANK", "0")
    code = subprocess.run(command, check=False).returncode
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    (out / f"rss.{rank}").write_text(str(peak_kib))
    sys.exit(code)
