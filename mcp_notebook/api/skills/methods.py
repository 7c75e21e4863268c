"""A connection's skills (`io.modelcontextprotocol/skills`, SEP-2640): listing, getting one
entry, loading a skill, and reading its files, every read verified.

The rules kept here: nothing of a skill is read ahead of need (listing and getting read no
file); `load_skill` reads the SKILL.md and checks its size, digest and frontmatter against the
entry it was loaded from; `read_skill_file` reads only files that entry lists and checks each;
content that fails a check is never returned (SkillVerificationError says why). Each method is
written once, as steps (`calls.twins` gives its two faces, which `Connection` takes by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...base.errors import McpNotebookError, UsageError
from ...base.public import public
from ...protocol import skills as rules
from ..calls.core import Featured
from ..calls.exchange import CallSpec, Steps
from ..calls.steps import pages
from ..calls.twins import twin


@public
class SkillVerificationError(McpNotebookError):
    """A skill's content is not what its entry describes (size, digest, frontmatter, or a file it
    does not list), or the entry itself cannot be loaded: the content was not used."""


@public
@dataclass(frozen=True)
class Skill:
    """One skill's entry: the URI of its SKILL.md, its frontmatter, and its files (each with
    digest and size), or "dynamic"; `server` is the connection that serves it."""

    server: str
    uri: str
    frontmatter: dict[str, Any]
    resources: list[dict[str, Any]] | str

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))


@public
@dataclass(frozen=True)
class LoadedSkill:
    """A loaded skill: the entry it was loaded from (which every later read is verified
    against) and its SKILL.md's text, verified."""

    skill: Skill
    text: str


def _skill(server: str, entry: Any) -> Skill:
    entry = entry if isinstance(entry, dict) else {}
    frontmatter, resources = entry.get("frontmatter"), entry.get("resources")
    return Skill(
        server,
        str(entry.get("uri", "")),
        frontmatter if isinstance(frontmatter, dict) else {},
        resources if isinstance(resources, (list, str)) else [],
    )


def _entry(skill: Skill) -> dict[str, Any]:
    return {"uri": skill.uri, "frontmatter": skill.frontmatter, "resources": skill.resources}


def _declared(conn: Featured) -> None:
    fx = conn._core
    if not rules.declared(fx.session.server.capabilities):
        raise UsageError(f"{fx.name}: the server does not declare the skills extension ({rules.EXTENSION})")


def list_skills(conn: Featured) -> Steps[list[Skill]]:
    """The server's skill entries (every page); no skill file is read. A listing may be partial:
    `load_skill(uri)` loads a skill it leaves out."""
    _declared(conn)
    return [_skill(conn._core.name, entry) for entry in (yield from pages(conn._core, "skills/list", "skills"))]


def get_skill(conn: Featured, uri: str) -> Steps[Skill]:
    """One skill's entry, by the URI of its SKILL.md (`skills/get`); no skill file is read."""
    _declared(conn)
    result = yield CallSpec("skills/get", {"uri": uri})
    return _skill(conn._core.name, result.get("skill") if isinstance(result, dict) else None)


def load_skill(conn: Featured, skill: Skill | str) -> Steps[LoadedSkill]:
    """Load a skill (an entry, or the URI of its SKILL.md, whose entry is then asked for): its
    SKILL.md is read and verified against the entry (size, digest, frontmatter), or
    SkillVerificationError is raised and nothing of it is used."""
    held = skill if isinstance(skill, Skill) else (yield from get_skill(conn, skill))
    problem = rules.entry_problem(_entry(held))
    if problem is not None:
        raise SkillVerificationError(f"{held.server}: skill {held.uri!r} cannot be loaded: {problem}")
    data = yield from _verified(conn, held, held.uri)
    text = data.decode("utf-8", errors="replace")
    try:
        problem = rules.frontmatter_problem(text, held.frontmatter)
    except ImportError:
        raise SkillVerificationError(
            f"{held.server}: skill {held.uri!r} not loaded: its frontmatter is YAML, which needs PyYAML (pip install pyyaml)"
        ) from None
    if problem is not None:
        raise SkillVerificationError(f"{held.server}: skill {held.name!r} not loaded: {problem}")
    return LoadedSkill(held, text)


def read_skill_file(conn: Featured, skill: LoadedSkill, path: str) -> Steps[bytes]:
    """A file of a loaded skill (`path` relative to its directory, or its URI), verified against
    the entry the skill was loaded from; a file the entry does not list is refused unread."""
    try:
        uri = rules.resolve(skill.skill.uri, path)
    except ValueError as exc:
        raise UsageError(f"{skill.skill.server}: skill {skill.skill.name!r}: {exc}") from None
    return (yield from _verified(conn, skill.skill, uri))


def _verified(conn: Featured, skill: Skill, uri: str) -> Steps[bytes]:
    """The bytes of a skill's file, read and checked against the entry (dynamic: unchecked)."""
    where = f"{skill.server}: skill {skill.name!r}"
    item = rules.listed(_entry(skill), uri)
    if item is None and skill.resources != rules.DYNAMIC:
        raise SkillVerificationError(f"{where}: {uri} is not among the files its entry lists; not read")
    data = rules.content_bytes((yield CallSpec("resources/read", {"uri": uri})), uri)
    if data is None:
        raise SkillVerificationError(f"{where}: the server's answer for {uri} holds no single text or blob")
    problem = rules.bytes_problem(data, item) if item is not None else None
    if problem is None and item is None and len(data) > rules.MAX_BYTES:
        problem = f"{uri} is {len(data)} bytes, more than a skill may hold"
    if problem is not None:
        raise SkillVerificationError(f"{where}: {problem}; the content was not used")
    return data


# ----- the table: each method's blocking face and awaitable twin, taken by `Connection` -----

LIST_SKILLS = twin(list_skills)
GET_SKILL = twin(get_skill)
LOAD_SKILL = twin(load_skill)
READ_SKILL_FILE = twin(read_skill_file)
