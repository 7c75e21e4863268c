"""The API layer: the public Python API over sessions run by the runtime.

`connect()` and `Connection`, the client features (tools, resources, prompts, tasks, ...),
the health monitor, settings, and result objects. It shows things to people only through a
`FrontEnd` (`api.frontend`): a plain-script default here, the notebook's plugged in from above."""
