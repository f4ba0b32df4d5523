"""The TLS settings of the cluster flags (cli/cluster.py): flags, a profile's keys, which wins,
what turns TLS on, and the one warning --tls-insecure prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from mqctl.cli import cluster as cli_cluster
from mqctl.cli.cluster import Cluster
from mqctl.errors import UsageError


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[profiles.sec]\nnamesrv = "rmq.example:9876"\naccess_key = "ops"\nsecret_key = "from-profile"\n'
        'tls_ca = "~/ca.pem"\ntls_cert = "/etc/mqctl/client.pem"\ntls_key = "/etc/mqctl/client.key"\n'
        '[profiles.lab]\nnamesrv = "lab:9876"\ntls_insecure = true\n'
    )
    monkeypatch.setenv("MQCTL_CONFIG", str(cfg))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(cli_cluster, "_warned_insecure", False)
    return tmp_path


def test_a_profile_carries_tls_files_even_with_keys_on_the_command_line(config: Path) -> None:
    opts = Cluster(profile="sec", access_key="cli", secret_key="cli-secret").options()
    assert (opts.access_key, opts.secret_key) == ("cli", "cli-secret")
    assert opts.tls and not opts.tls_insecure
    assert (opts.tls_ca, opts.tls_cert, opts.tls_key) == (
        str(config / "ca.pem"), "/etc/mqctl/client.pem", "/etc/mqctl/client.key",
    )  # fmt: skip


def test_flags_win_over_the_profile(config: Path) -> None:
    opts = Cluster(profile="sec", tls_ca="/other/ca.pem").options()
    assert opts.tls_ca == "/other/ca.pem" and opts.tls_cert == "/etc/mqctl/client.pem"
    assert (opts.access_key, opts.secret_key) == ("ops", "from-profile")


@pytest.mark.parametrize("flag", ["tls_ca", "tls_cert"])
def test_a_tls_file_turns_tls_on(flag: str) -> None:
    assert Cluster(namesrv="h:1", **{flag: "/x.pem"}).options().tls
    assert not Cluster(namesrv="h:1").options().tls


def test_insecure_says_so_once(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(3):  # an undo opens the cluster again, --watch keeps it: one line per command
        opts = Cluster(profile="lab").options()
    assert opts.tls and opts.tls_insecure
    err = capsys.readouterr().err
    assert (
        err
        == "mqctl: warning: TLS without verification (--tls-insecure): any server certificate is accepted\n"
    )


@pytest.mark.parametrize("key", ["tls", "tls_insecure"])
def test_a_profile_with_a_bad_tls_value(config: Path, key: str) -> None:
    # The whole file is checked: a bad value fails whichever profile is asked for.
    (config / "config.toml").write_text(f'[profiles.bad]\nnamesrv = "x:1"\n{key} = "yes"\n')
    with pytest.raises(UsageError) as caught:
        Cluster(namesrv=None, profile="bad").options()
    assert f"profiles.bad.{key}: expected true or false, got 'yes'" in caught.value.message
