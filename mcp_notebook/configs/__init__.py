"""Server configurations other clients wrote, read-only, and what we remember about them: which
configured commands the user allowed to run, and the tool definitions each server first showed."""
