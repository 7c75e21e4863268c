"""Skills (`io.modelcontextprotocol/skills`, SEP-2640) against FastMCP's Skills extension: listing
reads no file, loading verifies the SKILL.md (size, digest, frontmatter), a supporting file is read
only if the held entry lists it, and content that fails a check is never returned."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from support.http_servers import serving

import mcp_notebook
from mcp_notebook.protocol import skills as rules

SERVER = [sys.executable, str(Path(__file__).parents[2] / "servers" / "fastmcp_skills_server.py")]
SKILL_MD = (
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n"
    "metadata:\n  version: '2.1'\n---\n\nSee references/FORMS.md.\n"
)
DATED_MD = SKILL_MD.replace("metadata:", "released: 2024-05-01\nmetadata:")
FORMS = "Forms content.\n"


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    skill = tmp_path / "skills" / "pdf-processing"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "references" / "FORMS.md").write_text(FORMS)
    return tmp_path / "skills"


@pytest.fixture
def skills_url(skills_dir: Path, port: int):
    with serving([*SERVER, str(skills_dir), str(port)], port) as base:
        yield base + "/mcp"


def reads(conn: mcp_notebook.Connection) -> list[str]:
    return [e.message["params"]["uri"] for e in conn.trace.frames("out") if e.method == "resources/read"]


def test_list_load_and_read_verified_with_no_file_read_ahead(skills_url: str) -> None:
    with mcp_notebook.connect(skills_url, name="sk") as conn:
        [skill] = conn.list_skills()
        assert (skill.name, skill.uri, skill.frontmatter["metadata"]) == (
            "pdf-processing",
            "skill://pdf-processing/SKILL.md",
            {"version": "2.1"},
        )
        assert conn.get_skill(skill.uri) == skill
        assert reads(conn) == []  # neither listing nor getting reads a file
        loaded = conn.load_skill(skill)
        assert loaded.text == SKILL_MD and reads(conn) == [skill.uri]
        assert conn.read_skill_file(loaded, "references/FORMS.md") == FORMS.encode()
        with pytest.raises(mcp_notebook.SkillVerificationError, match="not among the files its entry lists; not read"):
            conn.read_skill_file(loaded, "references/OTHER.md")
        with pytest.raises(mcp_notebook.UsageError, match="leaves the skill's directory"):
            conn.read_skill_file(loaded, "../../x")
        assert reads(conn) == [skill.uri, "skill://pdf-processing/references/FORMS.md"]


def test_a_file_changed_since_the_entry_is_refused(skills_url: str, skills_dir: Path) -> None:
    with mcp_notebook.connect(skills_url, name="sk") as conn:
        [skill] = conn.list_skills()
        (skills_dir / "pdf-processing" / "SKILL.md").write_text(SKILL_MD.replace("See", "Now see"))
        with pytest.raises(
            mcp_notebook.SkillVerificationError,
            match="SKILL.md is 141 bytes; the skill.s entry says 137; the content was not used",
        ):
            conn.load_skill(skill)
        loaded = conn.load_skill(skill.uri)  # a fresh entry (skills/get) describes the new content
        (skills_dir / "pdf-processing" / "references" / "FORMS.md").write_text(FORMS.upper())
        with pytest.raises(mcp_notebook.SkillVerificationError, match="FORMS.md's sha256 digest is not the one"):
            conn.read_skill_file(loaded, "references/FORMS.md")


def test_a_server_without_the_extension_is_told_so() -> None:
    with mcp_notebook.demo(name="plain") as conn:
        with pytest.raises(mcp_notebook.UsageError, match="does not declare the skills extension"):
            conn.list_skills()


def entry(text: str = DATED_MD, **changes: object) -> dict:
    data = text.encode()
    item = {"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
    base = {
        "uri": "skill://pdf-processing/SKILL.md",
        "frontmatter": {
            "name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents",
            "released": "2024-05-01",
            "metadata": {"version": "2.1"},
        },
        "resources": [item],
    }
    return {**base, **changes}


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"resources": None}, "neither a list of files nor 'dynamic'"),
        ({"resources": []}, "do not list its SKILL.md"),
        ({"uri": "skill://other/SKILL.md"}, "last path segment is not its name"),
        ({"uri": "skill://pdf-processing/README.md"}, "does not name a SKILL.md"),
        ({"frontmatter": {"name": "pdf-processing"}}, "lacks a name or a description"),
        ({"resources": [{"uri": "skill://pdf-processing/SKILL.md", "digest": "md5:00", "size": 1}]}, "has no sha256 digest"),
        (
            {
                "resources": [
                    {"uri": f"skill://pdf-processing/{i}", "digest": "sha256:" + "0" * 64, "size": 1} for i in range(513)
                ]
            },
            "more than the 512",
        ),
        (
            {"resources": [{"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 17 * 2**20}]},
            "more than the 16777216",
        ),
    ],
)
def test_an_entry_that_cannot_be_loaded_says_why(changes: dict, problem: str) -> None:
    found = rules.entry_problem(entry(**changes))
    assert found is not None and problem in found
    assert rules.entry_problem(entry()) is None and rules.entry_problem(entry(resources="dynamic")) is None


def test_frontmatter_is_compared_field_by_field() -> None:
    expected = entry()["frontmatter"]
    assert rules.frontmatter_problem(DATED_MD, expected) is None  # the date stays the string the entry has
    tampered = DATED_MD.replace("description: Extract, fill, and assemble PDF documents", "description: Exfiltrate credentials")
    assert (
        rules.frontmatter_problem(tampered, expected)
        == "its SKILL.md's frontmatter field 'description' differs from the skill's entry"
    )
    assert "field 'extra'" in (rules.frontmatter_problem(DATED_MD.replace("released", "extra: 1\nreleased"), expected) or "")
    assert rules.frontmatter_problem("no frontmatter", expected) == "its SKILL.md has no YAML frontmatter"
