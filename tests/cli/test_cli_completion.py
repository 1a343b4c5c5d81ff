"""Shell completion (issue 31: ``--install-completion`` was refused): installed for bash, zsh
and fish, and the completions name whichgpu's own commands and flags."""

from __future__ import annotations

from pathlib import Path

import pytest

FILES = {"bash": ".bash_completions/whichgpu.sh", "zsh": ".zfunc/_whichgpu",
         "fish": ".config/fish/completions/whichgpu.fish"}


@pytest.mark.parametrize("shell", sorted(FILES))
def test_install_completion_writes_the_shells_script(cli, monkeypatch, tmp_path, shell):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")  # name the shell
    r = cli("--install-completion", shell)
    assert r.code == 0, r.err
    script = Path(tmp_path, FILES[shell]).read_text()
    assert "_WHICHGPU_COMPLETE" in script


def _complete(cli, monkeypatch, words: str) -> list[str]:
    monkeypatch.setenv("_WHICHGPU_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(len(words.split()) - 1))
    r = cli()
    return r.out.split()


def test_completion_names_commands_and_flags(cli, monkeypatch):
    assert "memory" in _complete(cli, monkeypatch, "whichgpu mem")
    assert "--gpu-layers" in _complete(cli, monkeypatch, "whichgpu memory --gpu-l")
    assert "list" in _complete(cli, monkeypatch, "whichgpu prices l")
