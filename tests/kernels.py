"""A kernelspec for tests: this interpreter (the venv's) running ipykernel, no kernel.json needed."""

from __future__ import annotations

import sys
from pathlib import Path

from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

REPO = Path(__file__).resolve().parents[1]
KERNEL_NAME = "mcp-notebook-test"


class VenvKernelSpecManager(KernelSpecManager):
    """One kernelspec, built here: this interpreter running ipykernel, no kernel.json needed."""

    def _spec(self) -> KernelSpec:
        return KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="mcp-notebook tests",
            language="python",
            interrupt_mode="signal",
            resource_dir=str(REPO),
        )

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:  # type: ignore[override]
        if kernel_name == KERNEL_NAME:
            return self._spec()
        return super().get_kernel_spec(kernel_name)

    def find_kernel_specs(self) -> dict[str, str]:  # type: ignore[override]
        return {KERNEL_NAME: str(REPO)}
