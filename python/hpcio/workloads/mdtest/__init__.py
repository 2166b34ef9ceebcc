"""mdtest's metadata phases (create, stat, read, remove of files and directories, in a tree
per rank or one shared), their rates as mdtest computes them."""
