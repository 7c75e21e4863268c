"""A scripted raw stdio server for wire faults that real peers cannot produce.

It answers `initialize` (with `--version V`, or the version the client asked for),
then acts out a scenario for each `tools/call` whose tool name names one:

* `collide`       sends a ping whose id equals the awaited request's id, waits for the
                  pong, then answers the request; the result holds the pong it got.
* `bad-ids`       sends pings with null, bool, float, object and array ids, then a ping
                  with id "good"; the result holds the first line it reads back.
* `garbage`       writes lines that are not JSON-RPC frames, then answers.
* `pong-to-closed-stdin`  closes its stdin, sends a ping (the pong cannot be written),
                  answers the request, then exits.
* `batch`         sends a batch of [ping, notification] and waits for the reply line.
* `received`      answers with every line it has read so far.
* `say`           says its argument `text` every way a server can besides a result: a log
                  message (as data and as logger name), a progress message (when the call
                  has a progress token), and a stderr line; then answers "said".
* `long-line`     writes a log notification `size` bytes long (the tool's argument) in
                  pieces, then answers "survived".
* `log-flood`     sends `count` log notifications whose data is `size` characters, then
                  answers "flooded".
* `updates-flood` sends `notifications/resources/updated` for `count` resources, `note://0`
                  on, none of them subscribed, then answers "flooded".
* `stderr-flood`  writes `count` lines to stderr ("stderr line N"), then answers "flooded".
* `large`         answers with `items` text blocks (default 1), each `size` characters of
                  "x" (with no `size`: the block's number); the result is encoded once per
                  shape and kept, so a repeated call costs the server only its write (with
                  `prepare` true it encodes the result, keeps it and answers "prepared"; with
                  `ping_after` true it pings right after the result and times the pong).
* `pong-latencies` answers with the seconds each `ping_after` pong took, oldest first.
* `malformed`     answers with a malformed response of the given `shape`: `error-string`
                  (an error that is a string), `result-and-error`, `no-jsonrpc`, or one
                  that must not choke a decoder (`hostile_reply`: nested, not UTF-8, a NUL).
* `violate`       breaks the protocol rule named by its `rule` argument once (see
                  `VIOLATIONS`: a bad notification, a response to no request, a sampling
                  request the client did not offer, a banner on stdout, ...), then answers.
* `structured`    answers with structuredContent its outputSchema (`--tools ok`) forbids.

With `--tools SHAPE` it answers `tools/list` with a listing that breaks a rule: `bad-schema`
(an inputSchema that is not JSON Schema), `duplicate` (one name twice, across two pages),
`nameless` (a tool without the `name` the schema requires),
`cursor-loop` (the second page's nextCursor is the first's again), or none: `ok` (one tool,
`structured`, with an outputSchema), `large` (the `large` scenario, for a client that lists
tools before it calls one).

With `--ping-during-handshake` it pings the client before answering `initialize`.
With `--silent` it reads and never answers anything; with `--mute-before-initialize` it
ignores every request until `initialize` (a legacy server that leaves an era probe
unanswered); with `--exit-on-unknown` it exits (code 1, saying so on stderr) on a request
for a method it does not know, as some servers do when probed with `server/discover`.
With `--linger` it outlives the end of its stdin (until a signal ends it), like a server
that ignores the spec's first step. With `--child` it first starts a child
process (command line ending `raw-server-child`) in its process group, sharing its
stdio, that only a signal ends: what `npx`, `uvx` and shell wrappers leave behind if only
the process we spawned is stopped. `--name NAME` is the name it gives in
`serverInfo`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

received: list[str] = []
_pong_seconds: list[float] = []


def send(obj: object) -> None:
    sys.stdout.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    sys.stdout.flush()


def read() -> dict | None:
    line = sys.stdin.readline()
    if not line:
        return None
    received.append(line.rstrip("\n"))
    return json.loads(line)


def answer(request_id: object, text: object) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": json.dumps(text)}]}})


def say(text: str, request_id: object, token: object) -> None:
    send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "logger": text, "data": text}})
    if token is not None:
        send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "message": text},
            }
        )
    print(text, file=sys.stderr, flush=True)
    answer(request_id, "said")


def long_line(request_id: object, arguments: dict) -> None:
    head = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'
    fill = int(arguments["size"]) - len(head) - 4
    sys.stdout.write(head)
    for _ in range(fill // 65536):
        sys.stdout.write("x" * 65536)
    sys.stdout.write("x" * (fill % 65536) + '"}}\n')
    answer(request_id, "survived")


def log_flood(request_id: object, arguments: dict) -> None:
    for number in range(int(arguments["count"])):
        data = f"{number:06d}" + "x" * max(0, int(arguments["size"]) - 6)
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": data}})
    answer(request_id, "flooded")


def updates_flood(request_id: object, arguments: dict) -> None:
    for number in range(int(arguments["count"])):
        send({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": f"note://{number}"}})
    answer(request_id, "flooded")


def stderr_flood(request_id: object, arguments: dict) -> None:
    sys.stderr.write("".join(f"stderr line {number}\n" for number in range(int(arguments["count"]))))
    sys.stderr.flush()
    answer(request_id, "flooded")


def hostile_reply(request_id: object, shape: str) -> bytes | None:
    """A reply line no decoder should choke on, for `shape`: `nested` (its result 100,000 arrays
    deep), `not-utf8` (a byte that is no UTF-8 in its text), `nul` (a raw NUL in its text) or
    `id-last` (nested, its id after the result); None for other shapes."""
    head = json.dumps({"jsonrpc": "2.0", "id": request_id}).encode()[:-1]
    text = b'"result":{"content":[{"type":"text","text":"%s"}]}'
    deep = b"[" * 100_000 + b"]" * 100_000
    if shape == "nested":
        return head + b',"result":' + deep + b"}"
    if shape == "id-last":
        return b'{"jsonrpc":"2.0","result":' + deep + b',"id":' + json.dumps(request_id).encode() + b"}"
    if shape == "not-utf8":
        return head + b"," + text % b"caf\xe9" + b"}"
    if shape == "nul":
        return head + b"," + text % b"a\x00b" + b"}"
    return None


def malformed(request_id: object, arguments: dict) -> None:
    shape = arguments["shape"]
    hostile = hostile_reply(request_id, shape)
    if hostile is not None:
        sys.stdout.flush()
        sys.stdout.buffer.write(hostile + b"\n")
        sys.stdout.buffer.flush()
        return
    reply: dict = {"jsonrpc": "2.0", "id": request_id}
    if shape == "error-string":
        reply["error"] = "the tool failed"
    elif shape == "result-and-error":
        reply.update(result={"content": []}, error={"code": -32603, "message": "and also failed"})
    else:
        del reply["jsonrpc"]
        reply["result"] = {"content": []}
    send(reply)


def _text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}]}


VIOLATIONS = {
    "schema": [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": "lots"}}],
    "unmatched-response": [{"jsonrpc": "2.0", "id": 424242, "result": {}}],
    "capability-notification": [
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///x"}}
    ],
    "capability-request": [
        {"jsonrpc": "2.0", "id": "sample-1", "method": "sampling/createMessage",
         "params": {"messages": [], "maxTokens": 10}}
    ],
    "not-json-rpc": ["Server listening on port 3000 (a banner on stdout)"],
    "batch": [[{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}]],
    "bad-batch": [[{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": "lots"}}]],
}  # fmt: skip


def violate(request_id: object, arguments: dict) -> None:
    rule = arguments["rule"]
    if rule == "result-shape":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": "not a list"}})
        return
    for frame in VIOLATIONS[rule]:
        send(frame)
    if rule == "capability-request":
        read()  # the client's answer (Method not found)
    answer(request_id, "violated")


LARGE_TOOL = {
    "name": "large",
    "inputSchema": {
        "type": "object",
        "properties": {
            "items": {"type": "integer"},
            "size": {"type": "integer"},
            "prepare": {"type": "boolean"},
            "ping_after": {"type": "boolean"},
        },
    },
}
_large_bodies: dict[tuple[int, int], bytes] = {}


def large(request_id: object, arguments: dict) -> None:
    shape = int(arguments.get("items", 1)), int(arguments.get("size", 0))
    body = _large_bodies.get(shape)
    if body is None:
        items, size = shape
        content = [{"type": "text", "text": "x" * size if size else str(number)} for number in range(items)]
        body = _large_bodies[shape] = json.dumps({"content": content}, separators=(",", ":")).encode()
    if arguments.get("prepare"):
        answer(request_id, "prepared")
        return
    head = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1].encode()
    for part in (head, b', "result": ', body, b"}\n"):  # no copy of the body
        sys.stdout.buffer.write(part)
    sys.stdout.flush()
    if arguments.get("ping_after"):
        sent = time.perf_counter()
        send({"jsonrpc": "2.0", "id": "after-large", "method": "ping"})
        read()
        _pong_seconds.append(time.perf_counter() - sent)


TOOLS = {
    "ok": [{"name": "structured", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}],
    "bad-schema": [{"name": "broken", "inputSchema": {"type": "object", "properties": {"a": {"type": "strng"}}}}],
    "duplicate": [{"name": "twice", "inputSchema": {"type": "object"}}],
    "nameless": [{"description": "a tool with no name", "inputSchema": {"type": "object"}}],
    "large": [LARGE_TOOL],
}  # fmt: skip


def tools_list(request_id: object, shape: str, params: dict) -> None:
    """Two pages for `duplicate` (the second repeats the first's tool) and `cursor-loop` (the
    second names the first's cursor again); one page otherwise."""
    first = not params.get("cursor")
    if shape in ("duplicate", "cursor-loop"):
        page: dict = {"tools": TOOLS["duplicate"] if shape == "duplicate" or first else []}
        if first or shape == "cursor-loop":
            page["nextCursor"] = "page-2"
    else:
        page = {"tools": TOOLS[shape]}
    send({"jsonrpc": "2.0", "id": request_id, "result": page})


def pong_latencies(request_id: object, arguments: dict) -> None:
    answer(request_id, _pong_seconds)


WITH_ARGUMENTS = {
    "large": large,
    "pong-latencies": pong_latencies,
    "long-line": long_line,
    "log-flood": log_flood,
    "updates-flood": updates_flood,
    "stderr-flood": stderr_flood,
    "malformed": malformed,
    "violate": violate,
}


def scenario(name: str, request_id: object, params: dict) -> None:
    arguments = params.get("arguments") or {}
    if name == "say":
        say(str(arguments.get("text")), request_id, (params.get("_meta") or {}).get("progressToken"))
    elif name == "collide":
        send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        answer(request_id, {"pong": read()})
    elif name == "bad-ids":
        for bad in (None, True, 1.5, {"a": 1}, [1]):
            send({"jsonrpc": "2.0", "id": bad, "method": "ping"})
        send({"jsonrpc": "2.0", "id": "good", "method": "ping"})
        answer(request_id, {"first_reply": read()})
    elif name == "garbage":
        for line in (
            "not json",
            "{",
            "[]",
            "42",
            '"text"',
            '{"jsonrpc":"2.0"}',
            '{"id":7}',
            '{"jsonrpc":"1.0","id":1,"result":{}}',
        ):
            send(line)
        sys.stdout.buffer.write(b"\xff\xfe{oops}\n")
        sys.stdout.flush()
        answer(request_id, "survived")
    elif name == "pong-to-closed-stdin":
        os.close(0)
        send({"jsonrpc": "2.0", "id": "after-close", "method": "ping"})
        answer(request_id, "answered")
        sys.exit(0)
    elif name == "batch":
        send(
            [
                {"jsonrpc": "2.0", "id": "in-batch", "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}},
            ]
        )
        answer(request_id, {"reply": read()})
    elif name == "structured":
        send({"jsonrpc": "2.0", "id": request_id, "result": {**_text("{}"), "structuredContent": {"n": "many"}}})
    elif name == "received":
        answer(request_id, received)
    elif name in WITH_ARGUMENTS:
        WITH_ARGUMENTS[name](request_id, arguments)
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": f"unknown scenario {name}"}})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version")
    parser.add_argument("--name", default="raw-test-server")
    parser.add_argument("--ping-during-handshake", action="store_true")
    parser.add_argument("--silent", action="store_true")
    parser.add_argument("--linger", action="store_true")
    parser.add_argument("--mute-before-initialize", action="store_true")
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--exit-on-unknown", action="store_true")
    parser.add_argument("--tools")
    args = parser.parse_args()
    if args.child:
        subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()", "raw-server-child"])
    while (message := read()) is not None:
        if args.silent or "method" not in message or "id" not in message:
            continue
        method, request_id = message["method"], message["id"]
        if args.mute_before_initialize and method != "initialize":
            continue
        args.mute_before_initialize = False
        if method == "initialize":
            if args.ping_during_handshake:
                send({"jsonrpc": "2.0", "id": "hs-ping", "method": "ping"})
                pong = read()
                print(f"handshake pong: {json.dumps(pong)}", file=sys.stderr, flush=True)
            version = args.version or message["params"]["protocolVersion"]
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": version,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": args.name, "version": "0"},
                    },
                }
            )
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "tools/list" and args.tools:
            tools_list(request_id, args.tools, message.get("params") or {})
        elif method == "tools/call":
            scenario(message["params"]["name"], request_id, message["params"])
        elif args.exit_on_unknown:
            print(f"raw-test-server: unknown method {method}, exiting", file=sys.stderr, flush=True)
            sys.exit(1)
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
    if args.linger:
        signal.pause()


if __name__ == "__main__":
    main()
