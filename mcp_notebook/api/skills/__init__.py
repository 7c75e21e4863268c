"""A connection's skills (the `io.modelcontextprotocol/skills` extension): listing, and loading with verification."""
