"""A connection's tools: listing and calling, arguments and their JSON Schema checks (compiled once per
listing), a tool's own view and form fields, and tool definitions checked against their pin."""
