"""Question and progress widgets without a browser: fill the elicitation form, click,
check the reply frame; the sampling box; the URL prompt; the progress bar."""

from __future__ import annotations

import pytest
from support.servers import sdk_server_cmd, server_everything_cmd
from support.waiting import wait_until
from support.widgets import in_background, replies

import mcp_notebook
from mcp_notebook.api.calls.progress import ProgressState
from mcp_notebook.api.client_side.answers import Question
from mcp_notebook.notebook.widgets import interaction as iw

pytestmark = [pytest.mark.node]

XSS = "<script>alert(1)</script>"


def test_the_elicitation_form_is_filled_accepted_and_sent(kernel_cell):
    shown, forms = kernel_cell
    with mcp_notebook.connect(server_everything_cmd(), name="form", era="legacy", elicitation=True) as conn:
        thread, box = in_background(conn.call_tool, "trigger-elicitation-request")
        wait_until(lambda: forms)
        form = forms[0]
        assert isinstance(form.fields["check"], iw.widgets.Checkbox)
        assert form.fields["integer"].min == 1 and form.fields["integer"].max == 100 and form.fields["integer"].value == 42
        assert form.fields["firstLine"].value == "It was a dark and stormy night."
        assert form.fields["untitledMultipleSelectEnum"].value == ("Guitar",)
        assert dict(form.fields["titledSingleSelectEnum"].options)["Wonder Woman"] == "hero-3"
        assert dict(form.fields["legacyTitledEnum"].options)["Dogs"] == "pet-2"
        form.fields["name"].value = ""
        assert not form.accept() and "missing required &#x27;name&#x27;" in form.status.value  # required: not sent
        form.fields["name"].value = "Ada"
        form.fields["check"].value = True
        form.fields["integer"].value = 7
        form.fields["number"].value = 12  # the published schema.json allows only integers here
        form.fields["titledMultipleSelectEnum"].value = ("fish-2", "fish-3")
        form.accept_button.click()
        thread.join(15)
        assert "Name: Ada" in box["result"].text and form.accept_button.disabled
        reply = replies(conn, "elicitation/create")[0]["result"]
        assert reply["action"] == "accept"
        assert reply["content"]["name"] == "Ada" and reply["content"]["check"] is True
        assert reply["content"]["integer"] == 7 and reply["content"]["titledMultipleSelectEnum"] == ["fish-2", "fish-3"]
        assert "email" not in reply["content"]  # an empty optional field is left out
        assert form.widget in shown


@pytest.mark.parametrize("button, action", [("decline_button", "decline"), ("cancel_button", "cancel")])
def test_decline_and_cancel(kernel_cell, button, action):
    _, forms = kernel_cell
    with mcp_notebook.connect(server_everything_cmd(), name="form", era="legacy", elicitation=True) as conn:
        thread, box = in_background(conn.call_tool, "trigger-elicitation-request")
        wait_until(lambda: forms)
        getattr(forms[0], button).click()
        thread.join(15)
        assert replies(conn, "elicitation/create")[0]["result"] == {"action": action}


def test_the_sampling_box_sends_the_typed_reply(kernel_cell):
    _, forms = kernel_cell
    with mcp_notebook.connect(server_everything_cmd(), name="sample", era="legacy", sampling=True) as conn:
        thread, box = in_background(conn.call_tool, "trigger-sampling-request", {"prompt": XSS})
        wait_until(lambda: forms)
        box_form = forms[0]
        assert "cannot take clicks" in box_form.status.value  # no kernel here to route clicks through
        assert "<script>" not in box_form.header.value and "&lt;script&gt;" in box_form.header.value
        box_form.reply.value = "forty-two"
        box_form.send_button.click()
        thread.join(15)
        reply = replies(conn, "sampling/createMessage")[0]["result"]
        assert reply["content"] == {"type": "text", "text": "forty-two"} and reply["role"] == "assistant"
        assert "forty-two" in box["result"].text


def test_url_mode_shows_a_link_and_accepts(kernel_cell):
    _, forms = kernel_cell
    with mcp_notebook.connect(server_everything_cmd(), name="url", era="legacy", elicitation=True) as conn:
        thread, box = in_background(conn.call_tool, "trigger-url-elicitation", {"url": "https://example.com/a?b=<c>"})
        wait_until(lambda: forms)
        prompt = forms[0]
        assert isinstance(prompt, iw.UrlPrompt)
        assert 'href="https://example.com/a?b=&lt;c&gt;"' in prompt.header.value
        prompt.accept_button.click()
        thread.join(15)
        assert replies(conn, "elicitation/create")[0]["result"] == {"action": "accept"}
        assert "completed the URL elicitation" in box["result"].text


def test_url_mode_shows_when_the_server_reports_completion(kernel_cell):
    _, forms = kernel_cell
    with mcp_notebook.connect(sdk_server_cmd(), name="url", era="legacy", elicitation=True) as conn:
        thread, box = in_background(conn.call_tool, "open_url", {"url": "https://example.com/sign-in"})
        wait_until(lambda: forms)
        prompt = forms[0]
        assert "completed" not in prompt.status.value
        prompt.accept_button.click()
        thread.join(15)
        assert box["result"].text == "accept"
        # The notice came before the result, and its repeat was ignored.
        assert "completed: the server reports the interaction done" in prompt.status.value
        assert prompt.question.completed.is_set() and prompt.accept_button.disabled


def test_a_url_the_server_requires_first_is_shown_and_the_call_retried(kernel_cell):
    _, forms = kernel_cell
    with mcp_notebook.connect(server_everything_cmd(), name="url", era="legacy", elicitation=True) as conn:
        thread, box = in_background(
            conn.call_tool, "trigger-url-elicitation", {"url": "https://example.com/files", "errorPath": True}
        )
        wait_until(lambda: forms)
        assert "https://modelcontextprotocol.io" in forms[0].header.value  # from the -32042 error
        forms[0].accept_button.click()
        wait_until(lambda: len(forms) == 2)  # the retry asks for the original URL
        assert "https://example.com/files" in forms[1].header.value
        forms[1].accept_button.click()
        thread.join(15)
        assert "completed the URL elicitation" in box["result"].text


def test_a_javascript_url_is_not_a_link():
    question = Question("elicitation", {"mode": "url", "url": "javascript:alert(1)", "message": XSS, "elicitationId": "x"})
    header = iw.UrlPrompt(question).header.value
    assert "href" not in header and "<script>" not in header


@pytest.mark.parametrize(
    ("url", "host", "refused"),
    [
        ("https://example.com/sign-in", "example.com", None),
        ("http://127.0.0.1:8080/callback", "127.0.0.1", None),
        ("http://localhost/callback", "localhost", None),
        ("http://[::1]:9/x", "::1", None),
        ("http://example.com/sign-in", "example.com", "only https URLs are opened (http only to this machine)"),
        ("javascript:alert(1)", "", "only https URLs are opened, not javascript:"),
        ("JavaScript:alert(1)//https://example.com", "", "only https URLs are opened, not javascript:"),
        ("data:text/html,<script>alert(1)</script>", "", "only https URLs are opened, not data:"),
        ("file:///etc/passwd", "", "only https URLs are opened, not file:"),
        ("//example.com/x", "example.com", "only https URLs are opened, not one without a scheme"),
        ("https:///nohost", "", "it names no host"),
        ("https://[::1/x", "", "it is not a valid URL"),
    ],
)
def test_which_urls_may_be_opened(url, host, refused):
    from mcp_notebook.api.client_side.answers import check_url

    check = check_url(url)
    assert (check.host, check.refused) == (host, refused)


def test_punycode_and_user_names_before_the_host_are_flagged():
    from mcp_notebook.api.client_side.answers import check_url

    check = check_url("https://xn--80ak6aa92e.com/login")  # Cyrillic letters that look like apple.com
    assert check.refused is None and check.host == "xn--80ak6aa92e.com"
    assert any("punycode" in w and "аррӏе.com" in w for w in check.warnings)
    check = check_url("https://accounts.example.com@evil.example/login")
    assert check.host == "evil.example" and any("goes to evil.example" in w for w in check.warnings)
    assert check_url("https://example.com/").warnings == ()


def test_a_url_that_is_not_https_is_refused_and_never_shown_as_accepted(kernel_cell):
    """The official SDK's server asks; the form says refused, offers nothing to click, and the
    server hears decline."""
    _, forms = kernel_cell
    with mcp_notebook.connect(sdk_server_cmd(), name="url", era="legacy", elicitation=True) as conn:
        for n, url in enumerate(("javascript:alert(1)", "http://example.com/sign-in", "data:text/html,<b>x</b>"), 1):
            assert conn.call_tool("open_url", {"url": url}, timeout=30).text == "decline"
            assert len(forms) == n
            prompt = forms[-1]
            assert "href" not in prompt.header.value and "<b>x" not in prompt.header.value
            assert all(b.disabled for b in (prompt.accept_button, prompt.decline_button, prompt.cancel_button))
            assert "refused: only https URLs are opened" in prompt.status.value and "accepted" not in prompt.status.value
            prompt.accept_button.click()  # disabled: nothing happens
            with pytest.raises(mcp_notebook.UsageError, match="this URL cannot be accepted"):
                prompt.question.accept()
            assert "accepted" not in prompt.status.value
        assert [r["result"] for r in replies(conn, "elicitation/create")] == [{"action": "decline"}] * 3


def test_the_host_is_shown_apart_and_a_punycode_host_flagged(kernel_cell):
    _, forms = kernel_cell
    with mcp_notebook.connect(sdk_server_cmd(), name="url", era="legacy", elicitation=True) as conn:
        thread, box = in_background(conn.call_tool, "open_url", {"url": "https://xn--80ak6aa92e.com/login"})
        wait_until(lambda: forms)
        header = forms[0].header.value
        assert 'host: <b style="font-size:1.25em">xn--80ak6aa92e.com</b>' in header
        assert "punycode" in header and "аррӏе.com" in header
        assert 'href="https://xn--80ak6aa92e.com/login"' in header  # https: offered, with the warning
        forms[0].accept_button.click()
        thread.join(15)
        assert box["result"].text == "accept"


def test_the_terminal_prompt_shows_the_host_and_refuses_without_asking(monkeypatch, capsys):
    from mcp_notebook.notebook.frontend import ask_in_terminal

    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("a refused URL asked for an answer"))
    question = Question(
        "elicitation", {"mode": "url", "url": "javascript:alert(1)", "message": "\x1b[2Jhi", "elicitationId": "x"}
    )
    ask_in_terminal(question)
    out = capsys.readouterr().out
    assert "refused: only https URLs are opened, not javascript:; declined" in out and "\x1b" not in out
    assert question.future.result() == {"action": "decline"}
    monkeypatch.setattr("builtins.input", lambda prompt="": "a")
    question = Question(
        "elicitation", {"mode": "url", "url": "https://xn--80ak6aa92e.com/", "message": "go", "elicitationId": "y"}
    )
    ask_in_terminal(question)
    out = capsys.readouterr().out
    assert "  host: xn--80ak6aa92e.com\n" in out and "warning: the host is an international (punycode) name" in out
    assert question.future.result() == {"action": "accept"}


def test_the_terminal_form_asks_again_for_a_value_its_schema_refuses(monkeypatch, capsys):
    from mcp_notebook.notebook.frontend import ask_in_terminal

    answers = iter(["many", "3", "", "a"])  # count: refused, then 3; note: left out; accept
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    schema = {"type": "object", "properties": {"count": {"type": "integer"}, "note": {"type": "string"}}}
    question = Question("elicitation", {"message": "how many?", "requestedSchema": schema})
    ask_in_terminal(question)
    out = capsys.readouterr().out
    assert "  'count' should be integer (JSON), not 'many'; again, or empty to leave it out\n" in out
    assert question.future.result() == {"action": "accept", "content": {"count": 3}}


def test_where_widgets_are_not_drawn_the_progress_bar_reads_as_its_last_state(kernel_cell):
    shown, _ = kernel_cell
    bar = iw.ProgressBar("demo tools/call").show()
    assert shown == [bar.widget]
    assert bar.widget._repr_mimebundle_()["text/plain"] == "demo tools/call: waiting for progress"
    bar.update(ProgressState(progress=2, total=4, message="step \x1b[31mtwo", updates=1))
    bar.close()
    assert shown == [bar.widget, bar.widget]  # the output was updated at the end: a saved notebook keeps that
    bundle = bar.widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/plain"]
    assert text.startswith("demo tools/call: [#") and text.endswith("] 2/4 step two (done)"), text


def test_the_progress_bar_follows_progress(kernel_cell):
    shown, _ = kernel_cell
    bar = iw.ProgressBar("demo tools/call")
    bar.update(ProgressState(progress=2, total=4, message=XSS, updates=1))
    assert bar.bar.value == 0.5 and "2/4" in bar.message.value and "<script>" not in bar.message.value
    bar.close(failed=True)
    assert bar.bar.bar_style == "danger"
    with mcp_notebook.connect(server_everything_cmd(), name="bar", era="legacy") as conn:
        conn.call_tool("trigger-long-running-operation", {"duration": 0.6, "steps": 3})
        frames = conn.trace.frames("in")
    widget = shown[-1]
    bars = [w for w in widget.children[0].children if isinstance(w, iw.widgets.FloatProgress)]
    assert bars[0].value == 1.0 and bars[0].bar_style == "success"
    # server-everything may send its last progress notification just after the result, so the
    # bar shows the last progress that arrived before the response (usually 3/3).
    answered = next(i for i, e in enumerate(frames) if e.method == "tools/call" and e.kind == "response")
    last = [e for e in frames[:answered] if e.method == "notifications/progress"][-1].message["params"]["progress"]
    assert f"{last:g}/3" in widget.children[1].value
