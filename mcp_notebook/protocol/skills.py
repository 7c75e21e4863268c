"""The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): what a skill entry must be,
and how a file read for a skill is verified against the entry it was loaded from.

Protocol knowledge only; the API applies it. The rules kept here: an entry whose `resources`
is neither a complete list nor "dynamic", or that exceeds the extension's limits, is not
loadable; a file's bytes must have the entry's `size` and `digest` (`sha256:` + 64 lowercase
hex); a SKILL.md's YAML frontmatter must equal the entry's `frontmatter` field by field; a
skill file not listed in the held entry is a verification failure. YAML is read without
turning dates into date objects (the entry carries them as JSON strings). Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Any

EXTENSION = "io.modelcontextprotocol/skills"
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
DYNAMIC = "dynamic"
SKILL_FILE = "SKILL.md"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def declared(capabilities: Any) -> bool:
    """Whether a server's capabilities declare the extension."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def entry_problem(entry: Any) -> str | None:
    """Why a skill entry cannot be loaded, or None."""
    if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
        return "the entry has no uri"
    uri, frontmatter, resources = entry["uri"], entry.get("frontmatter"), entry.get("resources")
    if not uri.endswith("/" + SKILL_FILE):
        return f"its uri {uri!r} does not name a {SKILL_FILE}"
    if not isinstance(frontmatter, dict) or not all(isinstance(frontmatter.get(k), str) for k in ("name", "description")):
        return "its frontmatter lacks a name or a description"
    if uri.rsplit("/", 2)[-2] != frontmatter["name"]:
        return f"its uri's last path segment is not its name {frontmatter['name']!r}"
    if resources == DYNAMIC:
        return None
    if not isinstance(resources, list):
        return "its resources are neither a list of files nor 'dynamic'"
    if len(resources) > MAX_FILES:
        return f"it lists {len(resources)} files, more than the {MAX_FILES} a host must accept"
    return _files_problem(uri, resources)


def _files_problem(uri: str, resources: list[Any]) -> str | None:
    total, seen = 0, set()
    for item in resources:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            return "a file of its resources has no uri"
        size, digest = item.get("size"), item.get("digest")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            return f"file {item['uri']!r} has no byte size"
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            return f"file {item['uri']!r} has no sha256 digest"
        if item["uri"] in seen:
            return f"file {item['uri']!r} is listed twice"
        seen.add(item["uri"])
        total += size
    if uri not in seen:
        return f"its resources do not list its {SKILL_FILE}"
    if total > MAX_BYTES:
        return f"its files add up to {total} bytes, more than the {MAX_BYTES} a host must accept"
    return None


def listed(entry: dict[str, Any], uri: str) -> dict[str, Any] | None:
    """The entry's record of file `uri` (None if it lists no such file, or is dynamic)."""
    resources = entry.get("resources")
    if not isinstance(resources, list):
        return None
    return next((item for item in resources if isinstance(item, dict) and item.get("uri") == uri), None)


def resolve(skill_uri: str, path: str) -> str:
    """A skill file's URI: `path` relative to the skill's root (the SKILL.md's directory), or a URI under it."""
    root = skill_uri.rsplit("/", 1)[0]
    if path.startswith(root + "/"):
        return path
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise ValueError(f"{path!r} leaves the skill's directory")
            parts.pop()
        else:
            parts.append(part)
    if not parts:
        raise ValueError(f"{path!r} names no file")
    return root + "/" + "/".join(parts)


def content_bytes(result: Any, uri: str) -> bytes | None:
    """The raw bytes a `resources/read` result carries for `uri` (text as UTF-8, blobs decoded)."""
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        return None
    chosen = [c for c in contents if isinstance(c, dict) and c.get("uri") == uri] or [c for c in contents if isinstance(c, dict)]
    if len(chosen) != 1:
        return None
    content = chosen[0]
    if isinstance(content.get("text"), str):
        return str(content["text"]).encode("utf-8")
    if isinstance(content.get("blob"), str):
        try:
            return base64.b64decode(content["blob"], validate=True)
        except (binascii.Error, ValueError):
            return None
    return None


def bytes_problem(data: bytes, item: dict[str, Any]) -> str | None:
    """Why `data` is not the file the entry describes (size first, then digest), or None."""
    if len(data) != item["size"]:
        return f"{item['uri']} is {len(data)} bytes; the skill's entry says {item['size']}"
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != item["digest"]:
        return f"{item['uri']}'s sha256 digest is not the one the skill's entry gives"
    return None


def frontmatter_of(text: str) -> dict[str, Any] | None:
    """A SKILL.md's YAML frontmatter as a dict, or None if it has none (PyYAML parses it)."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return None
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip("\r") == "---"), None)
    if end is None:
        return None
    import yaml

    resolvers = {
        key: [(tag, rx) for tag, rx in found if tag != "tag:yaml.org,2002:timestamp"]
        for key, found in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    # A SafeLoader whose dates stay strings, as the entry's JSON has them.
    loader = type("FrontmatterLoader", (yaml.SafeLoader,), {"yaml_implicit_resolvers": resolvers})
    try:
        found = yaml.load("\n".join(lines[1:end]), Loader=loader)
    except yaml.YAMLError:
        return None
    return found if isinstance(found, dict) else None


def frontmatter_problem(text: str, expected: dict[str, Any]) -> str | None:
    """Why a SKILL.md's frontmatter differs from the entry's, field by field, or None."""
    found = frontmatter_of(text)
    if found is None:
        return "its SKILL.md has no YAML frontmatter"
    for key in sorted(set(found) | set(expected)):
        if key not in found or key not in expected or found[key] != expected[key]:
            return f"its SKILL.md's frontmatter field {key!r} differs from the skill's entry"
    return None
