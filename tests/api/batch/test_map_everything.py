"""`conn.map` against server-everything over stdio (the `conn` fixture): its `echo` over many rows
in row order, and its `get-sum` over a pandas DataFrame's rows."""

from __future__ import annotations

import pytest
from support.features import sent

pd = pytest.importorskip("pandas")

pytestmark = [pytest.mark.node]


def test_echo_over_many_rows_comes_back_in_row_order(conn):
    rows = [{"message": f"row {i}"} for i in range(100)]
    result = conn.map("echo", rows, concurrency=16)
    assert [o.result.text for o in result] == [f"Echo: row {i}" for i in range(100)]
    assert len(result.ok) == 100 and result.calls_per_second and result.latency(0.95) >= result.latency(0.5)
    assert [c["params"]["arguments"] for c in sent(conn, "tools/call")] == rows


def test_a_dataframes_rows_are_the_arguments_and_its_index_labels_the_outcomes(conn):
    frame = pd.DataFrame({"a": [1, 2, None, 4], "b": [10, 20, 30, None]}, index=pd.Index(["w", "x", "y", "z"], name="key"))
    result = conn.map("get-sum", frame)
    assert [o.status for o in result] == ["ok", "ok", "failed", "failed"]
    assert "11" in result[0].result.text and "22" in result[1].result.text
    assert result[2].error == "ToolArgumentError: get-sum: missing required 'a'" and result[2].attempts == 0
    sent_arguments = [c["params"]["arguments"] for c in sent(conn, "tools/call")]
    assert sent_arguments == [{"a": 1, "b": 10}, {"a": 2, "b": 20}]  # empty cells left out, rows with one not sent
    table = result.to_pandas()
    assert table.index.name == "key" and list(table.index) == ["w", "x", "y", "z"]
    assert table["ok"].tolist() == [True, True, False, False] and table.loc["z", "error"].endswith("missing required 'b'")
    assert table.loc["w", "result"] == result[0].result.text  # the value, not the ToolResult object
    joined = frame.join(table[["ok", "latency"]])
    assert joined["ok"].tolist() == [True, True, False, False]
