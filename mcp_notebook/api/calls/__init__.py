"""Requests a caller waits on, the core every feature stands on: one request from a thread or
a coroutine in either era (`exchange`), deadlines and progress (`progress`), what every request
of a connection needs (`core`), the list caches (`listings`), the steps features share (`steps`),
and each feature method's two faces (`twins`). The core imports no feature and no front end."""
