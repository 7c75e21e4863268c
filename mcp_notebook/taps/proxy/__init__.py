"""The HTTP reverse proxy of a tap: `server` (`TapProxy`, on 127.0.0.1, forwarding byte for byte),
`sessions` (which local session a message belongs to, and the secrets it carries, registered before
any record) and `sse` (event streams read, the HTTP+SSE endpoint rewritten). Its upstream side is
`transports.forward`.
"""
