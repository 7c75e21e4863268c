"""Many sessions at once: load tests of a server (`mcp_notebook.load`), in the kernel or on a Dask cluster.

- `records`: one record per call and the statistics over them (imports nothing of ours but `base`).
- `workload`: what each session does, again and again: tool calls, a cassette's requests, a function.
- `engine`: one share of the sessions driven on an event loop of its own thread (the kernel's, a worker's).
- `watch`: each open session's health (pongs, their latency, violations) read as the load runs.
- `report`: `LoadReport`, the records and what the sessions' health said, as tables and text.
- `cluster`: the sessions split over a Dask cluster's workers, their records streamed back.
- `run`: `load()`, the public function, tying them together with the live view.
(Not named `load`: that is the package's public function, which a subpackage of the same name would shadow.)
"""
