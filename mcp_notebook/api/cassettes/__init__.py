"""Saved sessions (cassettes) against servers: `replay()` plays one as a server, `compare()` asks a
live server what it asked and reports what came back different (`comparison`)."""
