"""The SDK's errors as one-line BackendErrors, with the SDK's hint.

The gate runner turns a BackendError into `error` checks, never `fail`: a
sandbox that could not start, a refused key or a lost stream is the gate's
problem, not the agent's. Every line is scrubbed of the API key, in case an
answer ever echoed it.
"""

from __future__ import annotations

import os
from typing import Any

from gatetui.errors import BackendError

LOCAL_TOO = "`--backend local` needs nothing"
ROOM_CODES = frozenset(
    {
        "no_capacity",
        "quota_exceeded",
        "account_share_full",
        "no_credit_running_limit",
        "no_credit_total_limit",
        "no_credit_domain_limit",
        "no_credit_capacity_full",
        "volume_releasing",
    }
)


def one_line(text: str) -> str:
    """Newlines out, and the key (if any answer ever carried it) redacted."""
    key = os.environ.get("RUNTIME_API_KEY", "").strip()
    line = " ".join(text.split())
    return line.replace(key, "[key]") if len(key) >= 4 else line


def backend_error(err: BaseException, doing: str) -> BackendError:
    """What went wrong while `doing`, what Runtime said, and what to do."""
    code = str(getattr(err, "code", "") or "")
    status = int(getattr(err, "status", 0) or 0)
    hint = str(getattr(err, "hint", "") or "")
    message = str(getattr(err, "message", "") or err)
    kind = type(err).__name__
    if code == "missing_api_key":
        line = f"runtime backend: no Runtime key: set RUNTIME_API_KEY or run `npx -y withruntime login` ({LOCAL_TOO})"
    elif kind == "AuthenticationError" or status == 401:
        line = (
            f"runtime backend: Runtime refused the key ({code} {status}): set RUNTIME_API_KEY to a "
            f"valid key or run `npx -y withruntime login` ({LOCAL_TOO})"
        )
    elif code in ROOM_CODES:
        line = f"runtime backend: no room for a sandbox while {doing} ({code}): {message}"
    elif kind == "RateLimitError":
        wait = getattr(err, "retry_after_ms", None)
        after = f"; Runtime asks to wait {wait / 1000:.0f} s" if isinstance(wait, int) else ""
        line = f"runtime backend: rate limited while {doing} ({code} 429), still after retries{after}: {message}"
    elif kind == "ConnectionError":
        line = f"runtime backend: lost the connection to Runtime while {doing} ({code}): {message}"
    elif kind == "ServiceUnavailableError":
        line = f"runtime backend: Runtime unavailable while {doing} ({code} {status}), still after retries: {message}"
    else:
        line = f"runtime backend: could not finish {doing} ({code or kind}{f' {status}' if status else ''}): {message}"
    if hint:
        line += f"; hint: {hint}"
    return BackendError(one_line(line))


def is_sdk_error(err: BaseException) -> bool:
    """A withruntime error (its base class shadows the builtin's name)."""
    return any(c.__module__.startswith("withruntime") and c.__name__ == "RuntimeError" for c in type(err).__mro__)


def not_found(err: BaseException) -> bool:
    return type(err).__name__ == "NotFoundError" or getattr(err, "status", 0) == 404


def describe(err: Any) -> str:
    return one_line(f"{getattr(err, 'code', type(err).__name__)}: {getattr(err, 'message', err)}")
