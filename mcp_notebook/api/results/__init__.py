"""Result objects for tools, resources and prompts, and their content blocks as text and HTML."""
