"""Tab completion on `%mcp` lines and in a connection's methods: the candidates, where they come from, and IPython's hook."""
