"""A connection's prompts and argument completion."""
