"""Every session key the app's code uses is listed once, typed, in ui.keys (or is a setting of ui.params)."""

from __future__ import annotations

import re
from pathlib import Path

from ui.keys import ENTRIES, WIDGETS, Entry
from ui.params import PARAMS

ROOT = Path(__file__).resolve().parents[1]
# A widget's key=, or a session_state subscript, get, pop or setdefault, with a literal or an f-string.
USES = re.compile(r"""(?:\bkey=|session_state(?:\[|\.(?:get|pop|setdefault)\())f?(["'])(.+?)\1""")


def used_keys() -> dict[str, set[str]]:
    """Every literal session key in the app's code, by file; an f-string's fields stand as <…>."""
    found: dict[str, set[str]] = {}
    for path in [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")]:
        for _, key in USES.findall(path.read_text(encoding="utf-8")):
            found.setdefault(re.sub(r"\{[^}]*\}", "<>", key), set()).add(path.name)
    return found


def listed(key: str) -> bool:
    """A setting, an entry, or a widget key (a <placeholder> in WIDGETS stands for any text)."""
    patterns = ["".join(".+" if part.startswith("<") else re.escape(part) for part in re.split(r"(<[^>]*>)", name))
                for name in WIDGETS]
    settings = re.escape(key).replace("<>", ".+")  # an f-string key may name settings (split_a, split_b, ...)
    return (key in PARAMS or key in {e.key for e in ENTRIES} or any(re.fullmatch(p, key) for p in patterns)
            or any(re.fullmatch(settings, name) for name in PARAMS))


def test_every_key_the_code_uses_is_listed():
    unlisted = {key: files for key, files in used_keys().items() if not listed(key)}
    assert not unlisted, unlisted


def test_the_lists_name_each_key_once_and_every_entry_is_typed():
    keys = [e.key for e in ENTRIES]
    assert len(set(keys)) == len(keys) and not set(keys) & (set(PARAMS) | set(WIDGETS))
    assert not set(WIDGETS) & set(PARAMS)
    assert all(isinstance(e, Entry) and e.holds for e in ENTRIES)
    import ui.keys

    typed = ui.keys.__annotations__  # each entry's type, as the module declares it
    assert {name for name, value in vars(ui.keys).items() if isinstance(value, Entry)} <= set(typed)


def test_the_check_sees_an_unlisted_key():
    """The pattern finds keys as the code writes them, so a new key left out of the lists fails the test above."""
    code = 'st.button("x", key=f"close_{c.uid}")\nst.session_state.get("secret_thing")\nst.session_state["n"] = 1'
    assert [key for _, key in USES.findall(code)] == ["close_{c.uid}", "secret_thing", "n"]
    assert not listed("secret_thing") and listed("n") and listed("close_<>")
