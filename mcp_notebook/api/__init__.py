"""The API layer: the public Python API over sessions run by the runtime, grouped by feature.

- `connection`: `Connection`, one live connection; it composes the features below.
- `connecting`: `connect()`, its options and settings, targets, configured servers,
  authorization, the demo server.
- `calls`: requests a caller waits on, from a thread or a coroutine (`exchange`), progress and
  deadlines, the per-connection feature state, and `twins`: a method written once, as steps,
  given its blocking face and awaitable twin.
- the features, each with its methods' steps and their table (`methods`): `tools` (with their
  arguments, schema checks, views, form fields and pins), `resources`, `prompts`, `tasks`,
  `apps` (MCP Apps), `client_side` (answers to server requests, roots, the log level).
- `results`: result objects and their content blocks; `health`: the health monitor and the
  server's rule violations; `doctor`: `doctor()`'s steps; `cassettes`: `replay()` and `compare()`.
- `display`: the `FrontEnd` seam (`display.frontend`), the only way this layer shows things to
  people (a plain-script default here, the notebook's plugged in from above), and the panels
  and diagrams it shows as plain data.
"""
