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
    monkeypatch.setattr(cli_cluster, "_warned", False)
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


LIVE_ONLY = [
    (["--tls"], "--tls: for a live cluster (-n); store files are read without it"),
    (["--timeout", "5"], "--timeout: for a live cluster (-n); store files are read without it"),
    (
        ["--access-key", "a", "--secret-key", "b", "--tls-insecure"],
        "--access-key, --secret-key, --tls-insecure: for a live cluster (-n); store files are read without them",
    ),
]


@pytest.mark.parametrize(("flags", "line"), LIVE_ONLY, ids=[f[0] for f, _ in LIVE_ONLY])
def test_live_flags_on_a_store_are_said_once(
    demo_store, flags: list[str], line: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Before: accepted in silence (and --tls-insecure warned of a TLS that never happens)."""
    from typer.testing import CliRunner

    from mqctl.cli.app import app

    monkeypatch.setattr(cli_cluster, "_warned", False)
    store = ["-S", f"broker-a={demo_store.root}"]
    r = CliRunner().invoke(app, ["consumerProgress", "-g", "order-analytics", *store, *flags, "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert r.stderr == f"mqctl: warning: {line}\n"


def test_keys_from_the_environment_are_not_said_on_a_store(
    demo_store, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from mqctl.cli.app import app

    monkeypatch.setattr(cli_cluster, "_warned", False)
    env = {"MQCTL_ACCESS_KEY": "a", "MQCTL_SECRET_KEY": "b"}
    args = ["consumerProgress", "-g", "order-analytics", "-S", f"broker-a={demo_store.root}", "-o", "json"]
    r = CliRunner().invoke(app, args, env=env)
    assert r.exit_code == 0 and r.stderr == ""
