"""The transports layer: stdio and HTTP (Streamable HTTP, HTTP+SSE) moving frames.

A transport knows frames and wire events, never MCP methods; it pushes what it reads into
a `Sink` (the session) and reports its failures as `TransportError`s."""
