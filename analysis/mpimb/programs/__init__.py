"""One module per program: its tables, its plots and its findings (mpimb.registry registers
each once).  A program module builds on the render layer (render, plotting, judge) and the data
layer (load, keys, units), and on nothing above it."""
