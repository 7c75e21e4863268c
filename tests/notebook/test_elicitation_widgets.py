"""Question and progress widgets without a browser: fill the elicitation form, click,
check the reply frame; the sampling box; the URL prompt; the progress bar."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import sdk_server_cmd, server_everything_cmd

import mcp_notebook
from mcp_notebook.api.progress import ProgressState
from mcp_notebook.api.server_requests import Question
from mcp_notebook.notebook import interaction_widgets as iw

XSS = "<script>alert(1)</script>"


@pytest.fixture
def kernel_cell(monkeypatch, shown_as):
    """Pretend the caller is a Jupyter cell: collect what it displays and the forms it builds."""
    shown, forms = [], []

    make_form = iw.question_form

    def form_of(question):
        form = make_form(question)
        forms.append(form)
        return form

    shown_as("kernel")
    monkeypatch.setattr("IPython.display.display", shown.append)
    monkeypatch.setattr(iw, "question_form", form_of)
    return shown, forms


def in_background(fn, *args, **kwargs):
    box: dict = {}

    def run():
        try:
            box["result"] = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, box


def wait_for(predicate, timeout=15.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.02)


def replies(conn, method):
    asked = {e.id for e in conn.trace.frames("in") if e.kind == "request" and e.method == method}
    return [e.message for e in conn.trace.frames("out") if e.kind in ("response", "error") and e.id in asked]


def test_the_elicitation_form_is_filled_accepted_and_sent(kernel_cell):
    shown, forms = kernel_cell
    with mcp_notebook.connect(server_everything_cmd(), name="form", era="legacy", elicitation=True) as conn:
        thread, box = in_background(conn.call_tool, "trigger-elicitation-request")
        wait_for(lambda: forms)
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
        wait_for(lambda: forms)
        getattr(forms[0], button).click()
        thread.join(15)
        assert replies(conn, "elicitation/create")[0]["result"] == {"action": action}


def test_the_sampling_box_sends_the_typed_reply(kernel_cell):
    _, forms = kernel_cell
    with mcp_notebook.connect(server_everything_cmd(), name="sample", era="legacy", sampling=True) as conn:
        thread, box = in_background(conn.call_tool, "trigger-sampling-request", {"prompt": XSS})
        wait_for(lambda: forms)
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
        wait_for(lambda: forms)
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
        wait_for(lambda: forms)
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
        wait_for(lambda: forms)
        assert "https://modelcontextprotocol.io" in forms[0].header.value  # from the -32042 error
        forms[0].accept_button.click()
        wait_for(lambda: len(forms) == 2)  # the retry asks for the original URL
        assert "https://example.com/files" in forms[1].header.value
        forms[1].accept_button.click()
        thread.join(15)
        assert "completed the URL elicitation" in box["result"].text


def test_a_javascript_url_is_not_a_link():
    question = Question("elicitation", {"mode": "url", "url": "javascript:alert(1)", "message": XSS, "elicitationId": "x"})
    header = iw.UrlPrompt(question).header.value
    assert "href" not in header and "<script>" not in header


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
