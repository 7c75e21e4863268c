"""Tasks (2025-11-25): task-augmented requests followed to their end, and the server's tasks."""
