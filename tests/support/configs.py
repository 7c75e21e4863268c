"""A scripted user for configured servers: answers consent and inputs as told, keeps what it was asked."""

from __future__ import annotations

from mcp_notebook.api.display import frontend


class ScriptedUser(frontend.FrontEnd):
    """Answers consent with `runs` (one answer per question), inputs with `values`; keeps what it saw."""

    def __init__(self, runs: list[bool | None] = (), values: dict[str, str] | None = None) -> None:
        self.runs = list(runs)
        self.values = values
        self.asked: list = []
        self.input_requests: list = []
        self.warnings: list[str] = []

    def ask_consent(self, request):
        self.asked.append(request)
        return self.runs.pop(0)

    def ask_inputs(self, requests, entry):
        self.input_requests.append(requests)
        return self.values

    def warn(self, text: str) -> None:
        self.warnings.append(text)
