"""Splitting a `%mcp` line into words as users type them: shell rules, and JSON written as is.

Outside brackets the rules are the shell's (`shlex`, POSIX): whitespace separates words,
quotes group them and are removed, a backslash escapes the next character. A `[` or `{` that
starts a word, or follows the `=` of a `key=` pair, opens a JSON value instead: everything up
to its matching bracket (strings, inner quotes and spaces included) stays in the word exactly
as written, so `entities=[{"name": "Bob"}]` arrives intact. The rule kept here: a line that
shell quoting already handled (`obj='{"a": 1}'`) splits exactly as `shlex.split` splits it.

`split` is strict (an open quote or bracket is an error); `split_partial` is what completion
needs: the finished words, and the word being typed as it was written and where it starts.
"""

from __future__ import annotations

from dataclasses import dataclass

OPENERS = {"[": "]", "{": "}"}


class Unfinished(ValueError):
    """The line ends inside a quote or a bracketed JSON value."""


@dataclass
class Word:
    text: str  # the word as the parser sees it (quotes removed, JSON kept)
    start: int  # where it starts in the line
    end: int  # where it ends (exclusive)


def _quoted(line: str, i: int) -> tuple[str, int]:
    """The text of the quote opening at `i` and the index after it (shell rules)."""
    quote, j = line[i], i + 1
    out: list[str] = []
    while j < len(line):
        c = line[j]
        if c == quote:
            return "".join(out), j + 1
        if quote == '"' and c == "\\" and j + 1 < len(line) and line[j + 1] in '"\\$`':
            out.append(line[j + 1])
            j += 2
            continue
        out.append(c)
        j += 1
    raise Unfinished(f"no closing quotation ({quote})")


def _bracketed(line: str, i: int) -> int:
    """The index after the bracket that closes the JSON value opening at `i`."""
    stack, j, in_string = [OPENERS[line[i]]], i + 1, False
    while j < len(line):
        c = line[j]
        if in_string:
            if c == "\\":
                j += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in OPENERS:
            stack.append(OPENERS[c])
        elif c in "]}":
            if c != stack[-1]:
                raise ValueError(f"{c!r} closes {line[i]!r} at column {i + 1} before {stack[-1]!r}")
            stack.pop()
            if not stack:
                return j + 1
        j += 1
    raise Unfinished(f"no closing {stack[-1]!r} for the {line[i]!r} at column {i + 1}")


def words(line: str) -> list[Word]:
    """Every word of `line`; raises Unfinished (a ValueError) on an open quote or bracket."""
    found: list[Word] = []
    out: list[str] = []
    start: int | None = None
    i = 0
    while i < len(line):
        c = line[i]
        if c.isspace():
            if start is not None:
                found.append(Word("".join(out), start, i))
                out, start = [], None
            i += 1
            continue
        if start is None:
            start = i
        if c in "'\"":
            text, i = _quoted(line, i)
            out.append(text)
        elif c in OPENERS and (not out or "".join(out).endswith("=") and "=" not in "".join(out)[:-1]):
            end = _bracketed(line, i)
            out.append(line[i:end])
            i = end
        elif c == "\\" and i + 1 < len(line):
            out.append(line[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    if start is not None:
        found.append(Word("".join(out), start, len(line)))
    return found


def split(line: str) -> list[str]:
    """The words of a `%mcp` line (see the module's rules); ValueError if it is unfinished."""
    return [word.text for word in words(line)]


def _closed(raw: str) -> str:
    """An unfinished word as the parser would see it once its quote is closed (else as typed)."""
    for quote in ("'", '"'):
        try:
            closed = split(raw + quote)
        except ValueError:
            continue
        if len(closed) == 1:
            return closed[0]
    return raw


def split_partial(text: str) -> tuple[list[str], str, str]:
    """For completion: the finished words before the cursor, the word being typed as written
    (quotes and all; "" after a space) and as the parser will see it (quotes removed)."""
    if not text or text[-1].isspace():
        try:
            return split(text), "", ""
        except ValueError:
            return text.split(), "", ""
    try:
        found = words(text)
    except Unfinished:  # the word being typed opens a quote or a bracket: it starts after the last good split
        for cut in [n + 1 for n in range(len(text) - 1, -1, -1) if text[n].isspace()] + [0]:
            try:
                done = split(text[:cut])
            except ValueError:
                continue
            return done, text[cut:], _closed(text[cut:])
        return [], text, text
    except ValueError:
        return [], text, text
    last = found[-1]
    return [w.text for w in found[:-1]], text[last.start :], last.text
