"""The HTTP reverse proxy of a tap: `server` (`TapProxy`, on 127.0.0.1, forwarding byte for byte),
`downstream` (one client connection, HTTP/1.1 by h11), `sessions` (which local session a message
belongs to, and the secrets it carries, registered before any record) and `sse` (event streams
read, the HTTP+SSE endpoint rewritten). Its upstream side is `transports.forward`.
"""
