"""Opening connections: `connect()` and its options, from a target to a session (`targets`), servers
other clients configured, the settings every connection starts from, authorization (OAuth) and
the bundled demo server."""
