"""MCP Apps (SEP-1865): which tools have a view, fetching and showing it, the host side of the
JSON-RPC a view speaks, and the tool calls it makes."""
