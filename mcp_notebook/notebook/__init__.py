"""The notebook front ends: the `%mcp` magics, widgets, and the display of waiting calls.

Thin layers over the plain Python API: everything here can be done from Python without them."""
