"""`python -m hpcio`: the same as the hpcio command (used by the MPI self-launch)."""

from hpcio.cli import main

raise SystemExit(main())
