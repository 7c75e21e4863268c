"""Who this client says it is."""

__version__ = "0.1.0"
CLIENT_NAME = "mcp-notebook"
