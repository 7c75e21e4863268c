"""The `%mcp` magic and its subcommands, one module per feature group; `commands` is the table."""
