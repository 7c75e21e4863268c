"""The client's side of MCP: the answers to what the server asks (roots, sampling, elicitation, URLs
to open, tasks we run for it) and what the client tells the server about itself (its roots, the
log level it wants)."""
