"""Per-operation traces: hpcio's own (--trace) and Darshan logs read in."""
