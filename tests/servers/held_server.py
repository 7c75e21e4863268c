"""A scripted stdio server whose `initialize` answer the test holds, for races with the handshake
(no real peer can be made to wait for a test's word before it answers).

It reads `initialize`, then connects to the test on 127.0.0.1:PORT, says its pid, and waits
for the test's word (the connection closing) before it answers; then it answers `ping` and
ignores everything else until its stdin ends.

Usage: python held_server.py PORT
"""

from __future__ import annotations

import json
import os
import socket
import sys

WAIT = 60.0  # seconds it waits for the test's word at most


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    port = int(sys.argv[1])
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as test:
                test.sendall(f"{os.getpid()}\n".encode())
                test.recv(16)  # the test's word: any bytes, or the connection closed
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {},
                "serverInfo": {"name": "held", "version": "0"},
            }
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "ping" and request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})


if __name__ == "__main__":
    main()
