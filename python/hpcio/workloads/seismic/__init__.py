"""The RTM study's I/O (reference 004): a synthetic velocity volume written and read through
SEG-Y, HDF5 or Zarr (`volume`), and the imaging step's reads and writes (`imaging`)."""
