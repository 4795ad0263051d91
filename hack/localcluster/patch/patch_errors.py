"""The errors a failed patch turns into, as kube-apiserver's patch handler reports them.

An undecodable patch is 400 BadRequest with encoding/json's message; a patch that cannot be
applied is 422 Invalid with only the generic text below (the handler drops the library's
message); strategic-merge errors the handler does not classify reach the client as 500 with an
empty reason and the library's message.
"""

from __future__ import annotations

from typing import Any, Final

from ..errors import ApiError, bad_request
from ..go_format import go_json_kind

__all__ = ["UNPROCESSABLE", "StrategicMergeError", "decode_error"]

#: NewGenericServerResponse(422, ...) keeps only this text; the library's message is dropped.
UNPROCESSABLE: Final = "the server rejected our request due to an error in our request"


def decode_error(value: Any, into: str) -> ApiError:
    """400 for a patch body that does not decode into the Go type the handler expects."""
    return bad_request(
        f"error decoding patch: json: cannot unmarshal {go_json_kind(value)} into {into}"
    )


class StrategicMergeError(Exception):
    """A strategic merge failure, with the HTTP code the patch handler gives it."""

    def __init__(self, message: str, code: int = 500) -> None:
        super().__init__(message)
        self.code = code

    def api_error(self) -> ApiError:
        if self.code == 400:
            return bad_request(str(self))
        if self.code == 422:
            return ApiError(422, "Invalid", UNPROCESSABLE)
        # Not a Status error: the apiserver reports it as 500 with an empty (Unknown) reason.
        return ApiError(500, "", str(self))
