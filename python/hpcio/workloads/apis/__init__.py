"""Other interfaces a pattern's bytes go through (IOR's -a): each runs an engine plan's I/O itself,
in a Python body timed by the engine's Recorder."""
