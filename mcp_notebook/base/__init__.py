"""The foundation every layer stands on: who this client is, the exceptions it raises, and
escaping and clipping of text a server controls. Nothing here imports the rest of the package."""
