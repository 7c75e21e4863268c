"""`mcp_notebook.doctor()`: connect step by step and say what failed and what to try (`run`), with
the stdio, network, HTTP, authorization and session steps each in their module."""
