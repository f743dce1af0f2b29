"""Who is at this browser, and whether they may spend (core.privacy.access): a reader, a signed-in analyst, or the
browser on the server's own machine.

The session keeps only the signed-in analyst's name (ui.keys.ANALYST), never a key: the key is typed into a form that
clears itself, checked by the ledger (throttled, logged without it) and dropped. Every run asks the ledger again
whether that analyst may still spend, so a revocation ends an open session at once. With an identity provider
configured (`[auth]` in .streamlit/secrets.toml), Streamlit's `st.login` signs in instead, and the analyst is the
one the curator registered with that e-mail.
"""

from __future__ import annotations

import logging

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.errors import StreamlitSecretNotFoundError

from core.errors import PspError
from core.privacy.access import (
    LOCAL,
    AccessError,
    Spender,
    forwarded,
    loopback,
    refusal,
    source,
)
from ui import keys, params, release
from ui.labels import message

_LOG = logging.getLogger("psp.access")
KEY_FIELD = "access_key"  # the sign-in form's key field, emptied by its own callback
# Why a reload signs an analyst out: whatever a browser kept to sign in again (a cookie, a link, local storage) could be
# copied from it and spent with, and Streamlit cannot set a cookie that a page's scripts cannot read.
TAB_ONLY = ("Signed in for this tab only: a reload or a new tab asks for your key again, since nothing that could "
            "spend your share is kept in this browser.")


def identity_provider() -> bool:
    """Whether the deployment configured an identity provider for st.login (an [auth] section in its secrets)."""
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, StreamlitSecretNotFoundError):
        return False


def _headers() -> list[tuple[str, str]]:
    """This request's headers as (name, value) pairs, every value of a repeated header included."""
    headers = st.context.headers
    every = getattr(headers, "get_all", lambda name: [headers[name]])
    return [(name, value) for name in headers for value in every(name)]


def _source() -> str:
    """Where this browser connects from, for throttling failed sign-ins (core.privacy.access.source: an address,
    never a key), believing a forwarding header only from the proxies the deployment names (PSP_TRUSTED_PROXIES
    or the secret trusted_proxies)."""
    return source(st.context.ip_address, _headers(), params.trusted_proxies())


def _on_this_machine() -> bool:
    """Whether the browser is on the server's machine: a loopback peer (core.privacy.access.loopback) that no proxy
    relayed."""
    return loopback(st.context.ip_address) and not forwarded(_headers())


def spender() -> Spender | None:
    """Who may be charged from this browser now: the signed-in analyst (if the ledger still lets them spend), the
    analyst registered for the identity provider's e-mail, the server's own browser, or None (a reader)."""
    name = keys.ANALYST.get()
    if name is not None:
        try:
            return release.ledger().analyst_spender(name)
        except PspError as exc:  # revoked, expired or gone: signed out at once, the whole page redrawn
            keys.ANALYST.pop()
            keys.SIGNED_OUT.set(message(exc))
            st.rerun()  # from a fragment too: the sidebar must not still name the analyst
    if identity_provider() and st.user.is_logged_in and st.user.get("email"):
        found = release.ledger().by_email(str(st.user.get("email")))
        if found is not None:
            return found
    return LOCAL if _on_this_machine() else None


def decide() -> tuple[Spender | None, str | None]:
    """This browser's spender and why it may not spend (core.privacy.access.refusal), or None; LedgerUnavailable when
    it cannot tell."""
    who = spender()
    return who, refusal(who, params.locked(), release.ledger().has_analysts())


def spend_refusal() -> str | None:
    """Why this browser may not spend, or None."""
    return decide()[1]


def require() -> Spender:
    """The spender of this browser, or AccessError saying why it may not spend."""
    who, why = decide()
    if who is None or why is not None:
        raise AccessError(why or "You are reading: this browser may not spend.")
    return who


@st.cache_resource(show_spinner=False)
def announce() -> str:
    """Say once, in the server's log as it starts serving, who may spend from this app; the sidebar says it too."""
    try:
        analysts = release.ledger().has_analysts()
    except PspError as exc:
        said = f"the privacy ledger cannot be used, so nobody spends: {exc}"
    else:
        said = ("registered analysts spend within their shares" if analysts else
                "nobody spends from the app until the curator registers an analyst" if params.locked() else
                "no analysts are registered: only a browser on this machine spends")
    _LOG.warning("who may spend: %s", said)
    return said


def sign_in_box(sb: DeltaGenerator) -> None:
    """The sidebar's analyst section in publish mode: who spends from here, and a sign-in or sign-out."""
    notice = keys.SIGNED_OUT.pop()
    if notice:
        sb.warning(notice, icon=":material/logout:")
    try:
        who, analysts = spender(), release.ledger().has_analysts()
    except PspError:  # an unusable ledger: the ledger line says so
        return
    if who is not None and who.kind == "analyst":
        sb.markdown(f"**Analyst** · {who.name}, within the share the data's curator granted")
        try:
            left_e, left_d = release.remaining(who)
            sb.caption(f"What you may still spend on these people: ε = {left_e:g}, δ = {left_d:g}")
        except PspError:  # no data loaded, or no cap: the ledger line says so
            pass
        if keys.ANALYST.get() is not None:
            sb.caption(TAB_ONLY)
            sb.button("Sign out", key="sign_out", on_click=sign_out, icon=":material/logout:")
        return
    if not analysts:
        sb.caption("No analysts are registered: only the curator's command line publishes."
                   if params.locked() else "No analysts are registered: only a browser on the server's own machine "
                   "spends this budget.")
        return
    if identity_provider() and not st.user.is_logged_in:
        sb.button("Sign in with your organisation", key="login", on_click=st.login, icon=":material/login:")
    with sb.form("sign_in", border=False):
        st.text_input("Analyst access key", type="password", key=KEY_FIELD,
                      help="The key the data's curator gave you; asked once per browser session, never shown or kept")
        st.form_submit_button("Sign in", icon=":material/key:", on_click=_submitted)


def _submitted() -> None:
    """The form's callback, before the run: the key is taken out of the session at once, then checked."""
    key = st.session_state.get(KEY_FIELD) or ""
    st.session_state[KEY_FIELD] = ""
    sign_in(key)


def sign_in(key: str) -> None:
    """Check the key with the ledger (throttled, logged without it) and keep only the analyst's name."""
    try:
        who = release.ledger().sign_in(key, _source())
    except PspError as exc:
        keys.SIGNED_OUT.set(message(exc))
        return
    keys.ANALYST.set(who.name)
    keys.SIGNED_OUT.pop()


def sign_out() -> None:
    keys.ANALYST.pop()
