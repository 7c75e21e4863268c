"""The protocol layer: JSON-RPC frames, protocol versions and the rules of each era.

Pure functions of messages: no I/O, no sessions, no threads."""
