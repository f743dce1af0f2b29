"""The Dockerfile, read as text (no Docker daemon here): the essentials of a deployment are in it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined and comments dropped."""
    lines = [line for line in ROOT.joinpath("Dockerfile").read_text().splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [(word.upper(), rest.strip()) for word, _, rest in
            (line.strip().partition(" ") for line in joined.splitlines() if line.strip())]


def args(name: str) -> list[str]:
    return [rest for word, rest in instructions() if word == name]


def env() -> dict[str, str]:
    return dict(pair.split("=", 1) for rest in args("ENV") for pair in shlex.split(rest))


def requirements() -> list[str]:
    lines = ROOT.joinpath("requirements.txt").read_text().splitlines()
    return [re.split(r"[=<>~!\[; ]", line.strip())[0] for line in lines if line.strip() and not line.startswith("#")]


def test_the_base_image_is_python_3_11_slim():
    assert instructions()[0] == ("FROM", "python:3.11-slim")


def test_requirements_txt_and_only_it_is_installed():
    copied = [rest for rest in args("COPY") if "requirements.txt" in rest.split()]
    assert copied, "requirements.txt is not copied before the install"
    runs = " ".join(args("RUN"))
    assert re.search(r"pip install (.* )?-r requirements\.txt", runs)
    assert "requirements-dev" not in runs
    assert len(requirements()) >= 5 and "streamlit" in requirements()


def test_the_server_runs_as_a_user_without_root():
    users = args("USER")
    assert users and users[-1] not in ("root", "0")
    cmd_at = max(i for i, (word, _) in enumerate(instructions()) if word == "CMD")
    user_at = max(i for i, (word, _) in enumerate(instructions()) if word == "USER")
    assert user_at < cmd_at


def test_port_health_check_and_command():
    assert args("EXPOSE") == ["8501"]
    (health,) = args("HEALTHCHECK")
    assert "http://localhost:8501/_stcore/health" in health and "urllib" in health and "curl" not in health
    (cmd,) = args("CMD")
    assert json.loads(cmd) == ["streamlit", "run", "serve.py", "--server.port=8501", "--server.address=0.0.0.0"]


@pytest.mark.parametrize("variable", ["PSP_LEDGER", "NUMBA_CACHE_DIR"])
def test_the_ledger_and_the_numba_cache_live_on_volumes(variable):
    path = Path(env()[variable])
    volumes = [Path(v) for rest in args("VOLUME") for v in json.loads(rest)]
    assert any(path.is_relative_to(v) for v in volumes), (variable, path, volumes)


def test_the_image_leaves_out_tests_and_secrets():
    ignored = ROOT.joinpath(".dockerignore").read_text().splitlines()
    for entry in (".git", "tests", ".streamlit/secrets.toml"):
        assert entry in ignored
    assert ".streamlit/config.toml" not in ignored and "docs" not in ignored
