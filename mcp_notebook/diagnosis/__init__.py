"""The connection doctor, `mcp_notebook.doctor()`: connect step by step and say what failed and
what to try (`run`), with the stdio, network, HTTP, authorization and session steps each in
their module. A layer above `api` (it opens connections as `connect()` does and shows its
checklist through the API's front end); the API never imports it."""
