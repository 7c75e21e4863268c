"""JSON-RPC 2.0 frames: decoding, classification by shape, and builders.

Nothing here knows about transports or sessions; it turns text into classified
frames and messages into text.
"""

from __future__ import annotations

import json
import json.encoder
import json.scanner
import re
from typing import Any, NamedTuple

JSONRPC = "2.0"

# Standard JSON-RPC error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

REQUEST = "request"
NOTIFICATION = "notification"
RESPONSE = "response"
ERROR = "error"
INVALID = "invalid"
BATCH = "batch"

RequestId = int | str


def is_valid_id(value: object) -> bool:
    """True for the id types MCP allows: a string or an integer (never a bool)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Frame(NamedTuple):
    """One decoded message with its kind; `problem` says why an invalid one is invalid.

    A named tuple: one is made for every frame read, and a tuple is the cheapest to make."""

    kind: str
    message: Any
    problem: str | None = None

    @property
    def method(self) -> str | None:
        if isinstance(self.message, dict):
            method = self.message.get("method")
            return method if isinstance(method, str) else None
        return None

    @property
    def id(self) -> Any:
        return self.message.get("id") if isinstance(self.message, dict) else None

    @property
    def answers(self) -> RequestId | None:
        """The id of the request this frame answers: a response's, or an invalid frame's that is
        shaped like a response (an id, `result` or `error`, no `method`), so that the request
        it was meant for can fail at once instead of waiting for an answer that will not come."""
        message = self.message
        if not isinstance(message, dict) or "method" in message or ("result" not in message and "error" not in message):
            return None
        request_id = message.get("id")
        return request_id if is_valid_id(request_id) else None


def classify(message: Any) -> Frame:
    """Tell a message's kind by its shape alone.

    A frame with `method` is a request (with `id`) or a notification (without);
    only a frame with `result` or `error` and no `method` is a response, so a
    server request whose id collides with an awaited one is never taken for it.
    """
    if isinstance(message, list):
        if not message:
            return Frame(INVALID, message, "empty batch")
        return Frame(BATCH, message)
    if not isinstance(message, dict):
        return Frame(INVALID, message, "not a JSON object")
    if message.get("jsonrpc") != JSONRPC:
        return Frame(INVALID, message, 'missing "jsonrpc": "2.0"')
    if "method" in message:
        return _with_method(message)
    if "id" in message:
        return _answer(message)
    return Frame(INVALID, message, "neither a request, a notification nor a response")


def _with_method(message: dict[str, Any]) -> Frame:
    """A request (with an id) or a notification (without)."""
    if not isinstance(message["method"], str):
        return Frame(INVALID, message, "method is not a string")
    if "id" not in message:
        return Frame(NOTIFICATION, message)
    if not is_valid_id(message["id"]):
        return Frame(INVALID, message, "request id is not a string or an integer")
    return Frame(REQUEST, message)


def _answer(message: dict[str, Any]) -> Frame:
    """A response: exactly one of `result` and `error`, an error being an object with a code."""
    if "result" in message and "error" in message:
        return Frame(INVALID, message, "it has both result and error")
    if "result" in message:
        return Frame(RESPONSE, message)
    if "error" in message:
        error = message["error"]
        if isinstance(error, dict) and isinstance(error.get("code"), int):
            return Frame(ERROR, message)
        return Frame(INVALID, message, "error is not an object with an integer code")
    return Frame(INVALID, message, "neither a request, a notification nor a response")


_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # the C scanner json.loads ends in, without its wrapping

TOO_DEEP = "invalid JSON: nested too deeply to decode"


def decode(text: str, problem: str | None = None) -> Frame:
    """Parse one frame of text; whatever is wrong with it comes back as an invalid frame, never raises.

    A frame that is one JSON value and nothing else (what peers send) goes straight to the
    scanner; anything else takes `json.loads`, for its exact verdict and message. The depth
    the scanner goes to is bounded by the interpreter's recursion limit, so a hostile frame
    nested deeper costs bounded time and stack: it is an invalid frame, not an exception.
    `problem` is the transport's word that the bytes were already wrong (not UTF-8): the
    frame is invalid for that reason, with the message parsed from the text where it can be,
    so that a request it answers can still be named.
    """
    try:
        message, end = _scan(text, 0)
        if end != len(text):
            raise ValueError("more than one value")
    except RecursionError:
        return Frame(INVALID, None, problem or TOO_DEEP)
    except (StopIteration, ValueError):
        try:
            message = json.loads(text)
        except RecursionError:
            return Frame(INVALID, None, problem or TOO_DEEP)
        except ValueError as exc:
            return Frame(INVALID, None, problem or f"invalid JSON: {exc}")
    if problem is not None:
        return Frame(INVALID, message, problem)
    return classify(message)


def utf8_problem(error: UnicodeDecodeError) -> str:
    """What to say of a frame whose bytes are not UTF-8, which JSON text must be (RFC 8259 section 8.1)."""
    return f"not UTF-8: {error.reason} at byte {error.start}"


_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRING_OR_BRACKET = re.compile(_STRING + r"|[{}\[\]]", re.DOTALL)
_ID_VALUE = re.compile(r"\s*:\s*(-?\d+(?![.eE\d])|" + _STRING + ")", re.DOTALL)
_KEY_COLON = re.compile(r"\s*:")


def id_in_text(text: str) -> RequestId | None:
    """The top-level `"id"` of a frame that did not parse, if the text shows one and no top-level
    `"method"` (a response, then, not a request of the server's).

    Read from the text alone, skipping strings and counting brackets, so it finds an id that
    comes before or after whatever broke the frame (nesting too deep, a control character).
    Called for invalid frames only: a regular-expression pass over the text, which stops once
    it has seen the id and a `"result"` or `"error"` beside it (as a response begins).
    """
    if not text.lstrip().startswith("{"):
        return None
    found: RequestId | None = None
    answer = False
    depth = 0
    for token in _STRING_OR_BRACKET.finditer(text):
        first = text[token.start()]
        if first in "[{":
            depth += 1
        elif first in "]}":
            depth -= 1
        elif depth == 1 and _KEY_COLON.match(text, token.end()):
            key = token.group()
            if key == '"method"':
                return None
            if key == '"id"' and found is None:
                value = _ID_VALUE.match(text, token.end())
                found = _id_value(value.group(1)) if value is not None else None
            answer = answer or key in ('"result"', '"error"')
            if found is not None and answer:
                return found
    return found


def _id_value(literal: str) -> RequestId | None:
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    return value if is_valid_id(value) else None


_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)  # CPython's; other Pythons may lack it
_fast_encode = _c_make_encoder and _c_make_encoder(
    None, _encoder.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
)


def encode(message: Any) -> str:
    """Serialise a message compactly (no newlines, so it fits newline-delimited stdio).

    The encoder json.dumps builds on every call is built once here, without the check for
    circular references; a message it refuses is encoded again by the checking one, whose
    error (circular reference, unserialisable type) is the one raised.
    """
    if _fast_encode is None:
        return _encoder.encode(message)
    try:
        return "".join(_fast_encode(message, 0))
    except (TypeError, ValueError, RecursionError):
        return _encoder.encode(message)


def params_of(message: dict[str, Any]) -> dict[str, Any]:
    """A request's or notification's params, or {} when it has none (or they are no object)."""
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def meta_of(message: dict[str, Any]) -> dict[str, Any]:
    """The `_meta` of a message's params, or {}."""
    meta = params_of(message).get("_meta")
    return meta if isinstance(meta, dict) else {}


def request(request_id: RequestId, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC, "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC, "method": method}
    if params is not None:
        message["params"] = params
    return message


def result(request_id: RequestId, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": request_id, "result": value}


def error(request_id: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": JSONRPC, "id": request_id, "error": body}
