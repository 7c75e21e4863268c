"""`python -m mcp_notebook.replay PATH [--http] [--match params|method|order]`: play a cassette.

Run, this is the cassette server (`mcp_notebook.cassette`). Imported, it is the function
the package names `mcp_notebook.replay` (`api.cassettes.replay.replay`), which starts that server and
connects: the module stands aside in `sys.modules`, so importing it never hides the function.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from .cassette.cli import main

    raise SystemExit(main())
else:
    from .api.cassettes.replay import replay

    sys.modules[__name__] = replay  # type: ignore[assignment]  # what `import mcp_notebook.replay` binds
