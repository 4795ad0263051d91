"""Protobuf request bodies (`application/vnd.kubernetes.protobuf`) for the local API server.

kubectl's typed clients (every `kubectl create <generator>`, `create token`, `auth can-i`,
`drain`, ...) encode built-in kinds as protobuf and offer no JSON fallback: client-go only
downgrades CBOR to JSON after a 415, never protobuf. They accept JSON responses, so only
request bodies are decoded here; responses stay JSON.

`wire` reads the wire format and the `k8s\\x00` envelope, `schema` the table grammar,
`messages` the table itself, `decode` turns a message into the JSON dict the JSON path would
have received.
"""

from __future__ import annotations

from typing import Any

from ..errors import ApiError, bad_request
from .decode import UnknownKindError, decode_message, decode_object, message_for
from .wire import WireError

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


def decode_body(raw: bytes) -> dict[str, Any]:
    """Decode a protobuf request body, answering as kube-apiserver would when it cannot."""
    try:
        return decode_object(raw)
    except UnknownKindError as err:
        # What kube-apiserver says for kinds it has no protobuf codec for (custom resources).
        raise ApiError(415, "UnsupportedMediaType",
                       f"the body of the request was in an unknown format - accepted media types"
                       f' include: application/json, application/yaml (got "{CONTENT_TYPE}"'
                       f" for {err.api_version}, Kind={err.kind})") from None
    except WireError as err:
        raise bad_request(f"unable to decode the protobuf body: {err}") from None


__all__ = ["CONTENT_TYPE", "WireError", "decode_body", "decode_message", "decode_object",
           "message_for"]
