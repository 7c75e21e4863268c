"""Secrets kept out of what people see: registered strings replaced by "[redacted]" in text,
in parsed JSON values, and in exceptions (their text, attributes and causes).

The trace redacts every entry as it is recorded; the session hands errors and server text
to people through the same `Redactor`, so a secret registered once is hidden everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 4
E = TypeVar("E", bound=BaseException)


class Redactor:
    """Replaces registered secret strings in text and in parsed JSON values."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets: tuple[str, ...] = ()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str) -> None:
        """Register a secret; longer secrets are replaced first so prefixes do not leak a tail."""
        if not isinstance(secret, str) or len(secret) < MIN_SECRET_LENGTH:
            raise ValueError(f"a secret must be a string of at least {MIN_SECRET_LENGTH} characters")
        if secret not in self.secrets:
            self.secrets = tuple(sorted((*self.secrets, secret), key=len, reverse=True))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def found_in(self, text: str) -> bool:
        return any(secret in text for secret in self.secrets)

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def value(self, value: Any) -> Any:
        """A copy of a JSON-like value with secrets replaced (keys too); the original is untouched
        (and returned as it is while no secret is registered)."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.value(v) for v in value)
        return value

    def exception(self, exc: E) -> E:
        """`exc` itself, its text and attributes redacted in place (and those of what caused it)."""
        seen: set[int] = set()
        current: BaseException | None = exc
        while self.secrets and current is not None and id(current) not in seen:
            seen.add(id(current))
            current.args = self.value(current.args)
            for name, attribute in list(getattr(current, "__dict__", {}).items()):
                if isinstance(attribute, (str, dict, list, tuple)):
                    setattr(current, name, self.value(attribute))
            current = current.__cause__ or current.__context__
        return exc
