"""Who may spend: readers read, analysts spend their share, the curator decides.

Three roles, one rule (`refusal`), enforced where budget is spent:

- **reader**: anyone who reaches the app. Reads the Start page, published reports and, where the deployment
  allows it, teaching mode. Never spends.
- **analyst**: a name the data's curator registered in the ledger (`Analyst`), with a share (epsilon, delta) of
  each people's cap and a way to sign in: an access key (`new_key`, shown once and kept only as a salted scrypt
  hash) or an identity provider's e-mail (Streamlit's `st.login`). Every charge made for an analyst is checked,
  in the ledger's transaction, against the analyst's record (revoked or expired: refused at once) and share.
- **curator**: whoever holds the ledger file: sets caps and shares, adds and revokes analysts (`python -m core
  ledger ...`); the command line publishes as the curator unless it names an analyst.

A server outside publish-only mode with no analysts lets the browser on its own machine spend (`LOCAL`), so
one person working alone needs no key; a publish-only deployment never lets anyone spend without signing in.

Failed sign-ins are throttled per source (the browser's address): after `FREE_TRIES` failures in a row each
further attempt must wait 2^(failures - FREE_TRIES) seconds (at most `MAX_WAIT`) after the last, and an attempt
made sooner fails without its key being looked at. Every checked attempt is kept in the ledger (time, source, the
key's public id, whether it passed); every failure, throttled ones included, goes to the `psp.access` logger; the
key itself never does, nor does a throttled attempt grow the ledger.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import secrets
from dataclasses import dataclass

from core.errors import Refused

FREE_TRIES = 5  # failures in a row from one source before it must wait
MAX_WAIT = 600.0  # seconds: the longest wait between two attempts
_SCRYPT = dict(n=2**14, r=8, p=1, dklen=32)  # about 50 ms and 16 MB a try: slow to guess, quick to sign in
KEY_PREFIX = "psp"


class AccessError(Refused):
    """A sign-in or a spend that the roles do not allow (a wrong, revoked or expired key; a reader's click; an
    analyst past their share): one sentence, and nothing is spent."""


@dataclass(frozen=True)
class Spender:
    """For whom a charge is made: kind "curator", "analyst" or "local" (the browser on the server's machine), and
    the name the ledger records."""

    kind: str
    name: str

    def __post_init__(self) -> None:
        if self.kind not in ("curator", "analyst", "local"):
            raise ValueError(f"a spender is a curator, an analyst or local, got {self.kind!r}")


CURATOR = Spender("curator", "curator")
LOCAL = Spender("local", "this machine's browser")


@dataclass(frozen=True)
class Analyst:
    """The curator's record of an analyst: the share (epsilon, delta) of each people's cap they may spend, the
    identity provider's e-mail or the key's id and salted hash, when they expire (seconds since the epoch, inf:
    never) and whether they were revoked."""

    name: str
    share: tuple[float, float]
    key_id: str | None = None
    salt: bytes | None = None
    key_hash: bytes | None = None
    email: str | None = None
    expires: float = math.inf
    revoked: bool = False

    def why_not(self, now: float) -> str | None:
        """Why this analyst may not spend now (revoked, expired), or None."""
        if self.revoked:
            return f"the access of {self.name} was revoked by the data's curator"
        if now >= self.expires:
            return f"the access of {self.name} has expired; ask the data's curator to renew it"
        return None


NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-")


def check_name(name: str) -> None:
    """An analyst's name: 1 to 64 letters, digits and . _ @ -, never the curator's (AccessError otherwise)."""
    if not (0 < len(name) <= 64 and set(name) <= NAME_CHARACTERS) or name == CURATOR.name:
        raise AccessError(f"an analyst's name is 1 to 64 letters, digits and . _ @ -, and not {CURATOR.name!r}; "
                          f"got {name!r}")


def new_key() -> tuple[str, str, bytes, bytes]:
    """A new access key and what the ledger keeps of it: (key, its id, salt, scrypt hash). The key is shown once to
    the curator, who hands it to the analyst; it is never stored."""
    key_id, secret = secrets.token_hex(4), secrets.token_urlsafe(24)
    salt = secrets.token_bytes(16)
    return f"{KEY_PREFIX}-{key_id}-{secret}", key_id, salt, _hash(secret, salt)


def key_id(key: str) -> str | None:
    """The id a key claims (public: it only says which record to check), or None for text of another shape."""
    parts = key.strip().split("-", 2)
    return parts[1] if len(parts) == 3 and parts[0] == KEY_PREFIX and len(parts[1]) == 8 else None


def matches(key: str, analyst: Analyst) -> bool:
    """Whether key is this analyst's: its secret's scrypt hash under the kept salt, compared in constant time."""
    if analyst.salt is None or analyst.key_hash is None or key_id(key) != analyst.key_id:
        return False
    return hmac.compare_digest(_hash(key.strip().split("-", 2)[2], analyst.salt), analyst.key_hash)


def _hash(secret: str, salt: bytes) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, **_SCRYPT)


def wait(failures: int, last_failure: float | None, now: float) -> float:
    """Seconds a source must still wait before its next attempt, after `failures` failures in a row."""
    if failures < FREE_TRIES or last_failure is None:
        return 0.0
    return max(0.0, last_failure + min(2.0 ** (failures - FREE_TRIES), MAX_WAIT) - now)


def loopback(address: object) -> bool:
    """Whether a browser's address is the server's own machine: none (how Streamlit reports 127.0.0.1 and ::1), or a
    loopback address, IPv4-mapped ones included (a server listening on every interface sees ::ffff:127.0.0.1)."""
    if address is None:
        return True
    try:
        ip = ipaddress.ip_address(address) if isinstance(address, str) else None
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip is not None and (ip.is_loopback or (mapped is not None and mapped.is_loopback))


def refusal(spender: Spender | None, publish_only: bool, analysts: bool) -> str | None:
    """The one rule of who may spend in the app, or None when this spender may: an analyst always (within their
    share, which the ledger checks); the browser on the server's machine only outside publish-only mode on a server
    with no analysts; nobody else."""
    if spender is not None and spender.kind in ("analyst", "curator"):
        return None
    if spender is not None and spender.kind == "local" and not publish_only and not analysts:
        return None
    if analysts:
        return ("You are reading: spending this budget needs an analyst's access. Sign in with the key the data's "
                "curator gave you (in the sidebar), or ask the curator for one.")
    return ("You are reading: nobody may spend this budget from this app, since the data's curator has registered "
            "no analysts; the curator publishes with the command line (python -m core release … --ledger) or "
            "adds an analyst (python -m core ledger analyst add NAME).")
