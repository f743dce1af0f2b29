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

Failed sign-ins are counted twice (`throttle`), and an attempt waits when either count says so:

- per key id (`key_id`, the public part of the key an attempt claims): its failures since the last success with
  that key id, from any source. Only that key's own success resets it, so changing address gains a guesser nothing.
- per source (`source`, the browser's address): its failures in the last `WINDOW` seconds, whatever key each
  claimed. No success clears them, so signing in with one's own key between guesses at another's gains nothing;
  an analyst who mistypes a few times still signs in, and an hour later the slate is clean.

After `FREE_TRIES` failures a count makes each further attempt wait 2^(failures - FREE_TRIES) seconds (at most
`MAX_WAIT`) after its last failure; an attempt made sooner fails without its key being looked at and without
growing the ledger. Every checked attempt is kept in the ledger (time, source, the key's public id, whether it
passed); every failure, throttled ones included, goes to the `psp.access` logger; the key itself never does.

A source is the address the server reports, unless the request carries a forwarding header (`FORWARDED`). The
server (uvicorn) may already have put that header's word in place of the peer's address, so a header is believed
only when the deployment names its proxies (`trusted_proxies`: PSP_TRUSTED_PROXIES or the secret
trusted_proxies); otherwise every relayed request counts under the one source `RELAYED`, whatever its header says,
so that rotating the header gains nothing and a forged one cannot choose whose address is locked out.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import math
import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from core.errors import Refused

FREE_TRIES = 5  # failures a source or a key id may make before it must wait
MAX_WAIT = 600.0  # seconds: the longest wait between two attempts
WINDOW = 6 * MAX_WAIT  # seconds a source's failures count, whatever signs in from it meanwhile
FORWARDED = ("x-forwarded-for", "forwarded", "x-real-ip")  # headers by which a proxy says whom it relays
RELAYED = "relayed: untrusted forwarding header"  # the one source of every request relayed by no named proxy
THIS_MACHINE = "this machine"  # the source of the server's own browser (Streamlit reports no address for it)
_LOOPBACKS = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))  # what Streamlit reports as None
_LOG = logging.getLogger("psp.access")
_SCRYPT = dict(n=2**14, r=8, p=1, dklen=32)  # about 50 ms and 16 MB a try: slow to guess, quick to sign in
KEY_PREFIX = "psp"


class AccessError(Refused):
    """A sign-in or a spend that the roles do not allow (a wrong, revoked or expired key; a reader's click; an
    analyst past their share): one sentence, and nothing is spent."""


def name_taken(name: str) -> AccessError:
    """Every store's refusal to add an analyst under a name the ledger holds already."""
    return AccessError(f"an analyst named {name} exists already; change their record with `ledger analyst change`")


def email_taken(email: str, holder: str) -> AccessError:
    """Every store's refusal to add an analyst signing in with an e-mail that another analyst signs in with: one
    e-mail is one analyst, with one share."""
    return AccessError(f"the e-mail {email} signs in as the analyst {holder} already; change their record with "
                       "`ledger analyst change`, or give the new analyst another e-mail")


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
    """Seconds a source or a key id must still wait before its next attempt, after `failures` counted failures."""
    if failures < FREE_TRIES or last_failure is None:
        return 0.0
    return max(0.0, last_failure + min(2.0 ** (failures - FREE_TRIES), MAX_WAIT) - now)


Count = tuple[int, float | None]  # (failures counted, the time of the last of them)


def throttle(by_source: Count, by_key: Count, now: float) -> tuple[float, str]:
    """(seconds an attempt must still wait, "key" or "source": the count that makes it wait longer) from its
    source's failures in the last WINDOW seconds and its key id's since that key id's last success (module
    docstring); 0 seconds: it may be checked now."""
    from_source, with_key = wait(*by_source, now), wait(*by_key, now)
    return (with_key, "key") if with_key > from_source else (from_source, "source")


def too_many(left: float, binding: str, source: str) -> str:
    """The one sentence that refuses a throttled attempt: how long to wait, and what else helps."""
    seconds = math.ceil(left)
    if binding == "key":
        return (f"Too many failed sign-ins with this key: wait {seconds} s and try again, or ask the data's curator "
                "for a new key.")
    if source == RELAYED:
        return (f"Too many failed sign-ins through this site's proxy: wait {seconds} s and try again; whoever "
                "deploys the app names its proxies in PSP_TRUSTED_PROXIES so that each browser counts on its own.")
    return f"Too many failed sign-ins from this browser: wait {seconds} s and try again."


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def trusted_proxies(read: Callable[[str], object | None] = lambda name: os.environ.get(f"PSP_{name.upper()}")
                    ) -> tuple[Network, ...]:
    """The proxies whose forwarding headers the deployment trusts: read("trusted_proxies") (by default the
    environment variable PSP_TRUSTED_PROXIES), addresses or CIDRs, comma-separated or a list. Empty when unset, and
    when any entry is not an address (a mistyped setting trusts no header rather than a wrong one)."""
    raw = read("trusted_proxies")
    entries = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list | tuple) else []
    try:
        return tuple(ipaddress.ip_network(str(e).strip(), strict=False) for e in entries if str(e).strip())
    except ValueError:
        _LOG.warning("trusted_proxies (PSP_TRUSTED_PROXIES) is not a list of addresses or CIDRs: no forwarding "
                     "header is trusted")
        return ()


def _address(text: object) -> Address | None:
    """An IP address (an IPv4-mapped IPv6 one as IPv4), or None for anything else."""
    try:
        ip = ipaddress.ip_address(text.strip()) if isinstance(text, str) else None
    except ValueError:
        return None
    return getattr(ip, "ipv4_mapped", None) or ip


def _within(ip: Address, trusted: Sequence[Network]) -> bool:
    return any(ip in net for net in trusted)


def forwarded(headers: Iterable[tuple[str, str]]) -> bool:
    """Whether a request carries a forwarding header (`FORWARDED`): some proxy relayed it."""
    return any(name.lower() in FORWARDED for name, _ in headers)


def source(peer: object, headers: Iterable[tuple[str, str]], trusted: Sequence[Network]) -> str:
    """Where a sign-in comes from, for throttling (public: an address, never a key), from the peer's address as
    the server reports it (None: its own machine), the request's (name, value) headers and the trusted proxies.

    Without a forwarding header: the peer ("this machine" for none, "unknown" for anything but text). With one:
    RELAYED when no proxy is trusted; else the rightmost X-Forwarded-For address that is not a trusted proxy,
    provided the peer is a trusted proxy or that very address (the server may have put it there), and RELAYED when
    there is none, an entry is not an address, or the peer is some other machine that wrote the header itself.
    """
    pairs = [(name.lower(), value) for name, value in headers]
    if not forwarded(pairs):
        return THIS_MACHINE if peer is None else peer if isinstance(peer, str) else "unknown"
    hops = [_address(hop) for name, value in pairs if name == "x-forwarded-for" for hop in value.split(",")]
    if not trusted or not hops or None in hops:
        return RELAYED
    client = next((hop for hop in reversed(hops) if not _within(hop, trusted)), None)
    relays = _LOOPBACKS if peer is None else (_address(peer),)
    if client is None or not any(r is not None and (r == client or _within(r, trusted)) for r in relays):
        return RELAYED
    return str(client)


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
