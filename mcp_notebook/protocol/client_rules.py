"""What a client frame breaks, where a tap watches both sides: `ClientFrameRules`.

The server's rules (`frame_rules.FrameRules`) read from the other side: a client request or
notification is checked against the JSON-RPC envelope and its method's definition in the
`ClientRequest`/`ClientNotification` unions of the negotiated version (`schema`); a response
to a server request against that request's result type (`CreateMessageResult`,
`ListRootsResult`, `ElicitResult`, ping's `EmptyResult`, the tasks' results: `result-shape`);
a response to no server request is `unmatched-response`; a request the server's declared
capabilities do not cover (resources/subscribe without `resources.subscribe`, logging/setLevel
without `logging`, ...) is `capability` (legacy versions, where capabilities are negotiated
once). Every violation found here has side "client" and direction "out" (the client's view).
Pure: no I/O, no threads; frames must come in the order they crossed.
"""

from __future__ import annotations

from .frame_rules import CAPABILITY, FrameRules, Seen, Violation, _has
from .versions import LEGACY_VERSIONS

# A client request -> the server capability (path) it needs; completions came in 2025-03-26.
CLIENT_REQUEST_NEEDS: dict[str, tuple[str, ...]] = {
    "tools/list": ("tools",),
    "tools/call": ("tools",),
    "prompts/list": ("prompts",),
    "prompts/get": ("prompts",),
    "resources/list": ("resources",),
    "resources/read": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "logging/setLevel": ("logging",),
    "completion/complete": ("completions",),
}
# A client notification -> the client capability (path) it needs.
CLIENT_NOTIFICATION_NEEDS: dict[str, tuple[str, ...]] = {"notifications/roots/list_changed": ("roots", "listChanged")}
NO_COMPLETIONS_CAPABILITY = ("2024-11-05",)  # completion/complete needed no capability then


class ClientFrameRules(FrameRules):
    """The rules a client's frames are held to, judged from the server's declared capabilities."""

    SIDE, DIRECTION = "client", "out"
    REQUESTS, NOTIFICATIONS = "ClientRequest", "ClientNotification"
    ANSWERED = "ServerRequest"
    UNMATCHED_TEXT = "a response whose id matches no request of the server's"

    def _capability(self, seen: Seen, request: bool) -> list[Violation]:
        method, section = seen.method or "", "basic/lifecycle#capability-negotiation"
        if seen.version not in LEGACY_VERSIONS:
            return []
        if not request and method in CLIENT_NOTIFICATION_NEEDS:
            path = CLIENT_NOTIFICATION_NEEDS[method]
            if seen.client_capabilities is None or _has(seen.client_capabilities, path):
                return []
            message = f"{method} from a client that did not declare capabilities.{'.'.join(path)}"
            return [self._found(seen, "/method", CAPABILITY, message, section)]
        path = CLIENT_REQUEST_NEEDS.get(method) if request else None
        if path is None or seen.server_capabilities is None:
            return []  # not a request that needs one, or the server's capabilities are not known (yet)
        if path == ("completions",) and seen.version in NO_COMPLETIONS_CAPABILITY:
            return []
        if _has(seen.server_capabilities, path):
            return []
        message = f"{method} sent to a server that did not declare capabilities.{'.'.join(path)}"
        return [self._found(seen, "/method", CAPABILITY, message, section)]
