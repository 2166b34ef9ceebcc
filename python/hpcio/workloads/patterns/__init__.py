"""The five patterns of DESIGN.md: one module each (sfsw, sfmw, mfmw, sfmr, mfmr), their params
in params.py. Nothing is imported here: the option path imports params.py alone."""
