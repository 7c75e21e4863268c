"""Who this client says it is."""

__version__ = "0.1.0"
CLIENT_NAME = "mcp-notebook"

# The first line of a trace written as JSON lines (a cassette): {"format": TRACE_FORMAT, ...}.
TRACE_FORMAT = "mcp-notebook-trace"
TRACE_FORMAT_VERSION = 1
