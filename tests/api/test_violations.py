"""Each protocol rule a server can break yields exactly that violation, and only that one:
acted out by tests/servers/raw_server.py (scenario `violate`, `--tools SHAPE`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mcp_notebook
from mcp_notebook import ProtocolViolation

RAW = [sys.executable, str(Path(__file__).parents[1] / "servers" / "raw_server.py")]


def raw(*extra: str, **options: object) -> mcp_notebook.Connection:
    return mcp_notebook.connect([*RAW, *extra], era="legacy", name="raw", **options)  # type: ignore[arg-type]


def violate(conn: mcp_notebook.Connection, rule: str) -> object:
    result = conn.request("tools/call", {"name": "violate", "arguments": {"rule": rule}})
    return json.loads(result["content"][0]["text"])


def found(conn: mcp_notebook.Connection) -> list[tuple[str, str | None, str]]:
    return [(v.rule, v.method, v.where) for v in conn.violations]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])  # draft-07 and 2020-12 schemas
def test_a_notification_that_breaks_the_schema(version: str) -> None:
    with raw("--version", version) as conn:
        assert violate(conn, "schema") == "violated"
        [violation] = conn.violations
        assert (violation.rule, violation.method, violation.direction) == ("schema", "notifications/progress", "in")
        assert violation.where.startswith("/params")
        assert violation.url == f"https://modelcontextprotocol.io/specification/{version}/basic"
        entry = next(e for e in conn.trace if e.seq == violation.index)
        assert entry.method == "notifications/progress"
        assert conn.trace.marks[entry.seq] == ("schema",)


def test_a_result_that_is_not_its_method_s_result_type() -> None:
    with raw() as conn:
        conn.request("tools/call", {"name": "violate", "arguments": {"rule": "result-shape"}})
        assert found(conn) == [("result-shape", "tools/call", "/result/content")]
        assert "CallToolResult" in conn.violations[0].message


def test_a_response_to_no_request_of_ours() -> None:
    with raw() as conn:
        violate(conn, "unmatched-response")
        assert found(conn) == [("unmatched-response", None, "/id")]


def test_a_notification_the_server_s_capabilities_do_not_cover() -> None:
    with raw() as conn:  # it declares tools only: no resources.subscribe
        violate(conn, "capability-notification")
        assert found(conn) == [("capability", "notifications/resources/updated", "/method")]
        assert "resources.subscribe" in conn.violations[0].message


def test_a_request_the_client_did_not_offer() -> None:
    with raw() as conn:  # no sampling= given: the client offers no sampling
        violate(conn, "capability-request")
        assert found(conn) == [("capability", "sampling/createMessage", "/method")]
        assert conn.violations[0].url.endswith("/basic/lifecycle#capability-negotiation")


def test_a_banner_on_stdout() -> None:
    with raw() as conn:
        violate(conn, "not-json-rpc")
        [violation] = conn.violations
        assert (violation.rule, violation.method) == ("not-json-rpc", None)
        assert violation.url == "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio"
        assert next(e for e in conn.trace if e.seq == violation.index).kind == "invalid"


def test_a_tool_whose_input_schema_is_not_json_schema() -> None:
    with raw("--tools", "bad-schema") as conn:
        conn.request("tools/list")
        assert found(conn) == [("tool-schema", "tools/list", "/result/tools/0/inputSchema")]
        assert "'broken'" in conn.violations[0].message


def test_a_tool_listed_twice_across_pages() -> None:
    with raw("--tools", "duplicate") as conn:
        conn.list_tools()
        assert found(conn) == [("duplicate-tool", "tools/list", "/result/tools/0/name")]


def test_a_next_cursor_loop() -> None:
    with raw("--tools", "cursor-loop") as conn:
        conn.list_tools()  # the client stops at the cursor it has seen
        assert found(conn) == [("cursor-loop", "tools/list", "/result/nextCursor")]


def test_structured_content_that_breaks_the_output_schema() -> None:
    with raw("--tools", "ok") as conn:
        conn.request("tools/list")
        conn.request("tools/call", {"name": "structured"})
        assert found(conn) == [("structured-content", "tools/call", "/result/structuredContent/n")]


def test_a_clean_session_has_none_and_health_counts_them() -> None:
    with raw("--tools", "ok") as conn:
        conn.request("tools/list")
        conn.ping()
        assert conn.violations == [] and conn.health.violations == 0
        violate(conn, "unmatched-response")
        assert len(conn.violations) == 1  # every frame so far checked
        assert conn.health.violations == 1
        assert "violations" in repr(conn.health._repr_html_())


def test_strict_fails_the_call_naming_the_rule_and_ends_the_connection() -> None:
    conn = raw(strict=True)
    with pytest.raises(ProtocolViolation, match="result-shape"):
        conn.request("tools/call", {"name": "violate", "arguments": {"rule": "result-shape"}})
    assert conn.wait_closed(timeout=30)
    with pytest.raises(mcp_notebook.ConnectionClosed, match="strict mode: .*result-shape"):
        conn.ping()
    assert found(conn) == [("result-shape", "tools/call", "/result/content")]


def test_strict_ends_the_connection_on_a_banner() -> None:
    conn = raw(strict=True)
    with pytest.raises(mcp_notebook.ConnectionClosed, match="not-json-rpc"):
        violate(conn, "not-json-rpc")
    assert conn.closed


def test_checking_can_be_turned_off() -> None:
    with raw(check_frames=False) as conn:
        violate(conn, "not-json-rpc")
        assert conn.violations == []


def test_a_violation_that_quotes_a_known_secret_is_redacted() -> None:
    secret = "lst-" + "s3cr" * 5
    with raw(secrets=[secret]) as conn:  # it logs without declaring logging: the violation quotes the params
        conn.call_tool("say", {"text": f"the key is {secret}"}, validate=False)
        found = [v for v in conn.violations if v.rule == "capability"]
        assert found and all("[redacted]" in v.message for v in found)
        assert secret not in repr(conn.violations)


def test_a_batch_where_the_version_allows_none() -> None:
    with raw() as conn:  # 2025-11-25: batches were removed in 2025-06-18
        violate(conn, "batch")
        assert found(conn) == [("schema", None, "")]
        assert "does not allow" in conn.violations[0].message


def test_a_batch_where_the_version_allows_it_has_each_item_checked() -> None:
    with raw("--version", "2025-03-26") as conn:
        violate(conn, "batch")
        assert conn.violations == []
        violate(conn, "bad-batch")  # its one notification broken: where points into the batch
        assert found(conn) == [("schema", "notifications/progress", "/0/params")]


def test_a_banner_before_the_handshake() -> None:
    """The most common server bug: a line printed on stdout at start-up, before any frame."""
    script = RAW[1]
    code = (
        "print('Starting demo server v1.2 ...', flush=True); import runpy, sys; "
        f"sys.argv = [{script!r}]; runpy.run_path({script!r}, run_name='__main__')"
    )
    with mcp_notebook.connect([sys.executable, "-c", code], era="legacy", name="banner") as conn:
        conn.ping()
        [violation] = conn.violations
        assert (violation.rule, violation.method, violation.index) == ("not-json-rpc", None, conn.trace.frames("in")[0].seq)
        assert violation.url == "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio"


def test_a_body_that_is_not_json_rpc_over_http_names_the_http_transport() -> None:
    from support.http_servers import RAW_HTTP, serving
    from support.servers import free_port

    port = free_port()
    with serving([*RAW_HTTP, str(port)], port) as base, mcp_notebook.connect(base + "/mcp", era="legacy", name="raw") as conn:
        with pytest.raises(ProtocolViolation):
            conn.request("tools/call", {"name": "malformed", "arguments": {"shape": "not-utf8"}})
        [violation] = conn.violations
        assert (violation.rule, violation.method) == ("not-json-rpc", "tools/call")
        assert violation.url == "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http"
