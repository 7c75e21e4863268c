"""The auth layer: the OAuth 2.1 client of MCP's authorization spec, for HTTP servers.

Discovery (RFC 9728, RFC 8414, OpenID), client identity (pre-registered, metadata document,
RFC 7591), the grants (authorization code with PKCE, refresh, client credentials, cross-app
access) and the flow that ties them to an HTTP transport through its `AuthHook`; where the
browser's redirect comes back (the Jupyter server's callback, through the hand-off files the
server extension shares, or a loopback listener). It stands on
`base` and `transports`; who asks the user, and how, is injected from the API layer."""
