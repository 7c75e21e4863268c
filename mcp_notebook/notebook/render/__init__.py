"""Plain text, HTML and SVG renderings of plain data, shared by magics and widgets: no IPython, no ipywidgets."""
