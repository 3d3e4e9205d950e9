"""PostgreSQL for the interop tests: Debian's server binaries, started in a temporary
directory on a free 127.0.0.1 port, gone when closed.

`PostgresServer` runs `initdb` (trust authentication, user `postgres`, UTF-8) into a fresh
directory and `pg_ctl start` with the Unix socket in that directory too (`-k`), so nothing
outside it is touched; `fsync` is off (a test database). Queries go through `psql`, which
ships with the server, so the tests need no Python driver. `jdbc_url` is what a JDBC client
(the Debezium JDBC sink) connects to.

| | |
| --- | --- |
| binaries | `initdb`, `pg_ctl`, `psql` on PATH, else the newest `/usr/lib/postgresql/<v>/bin` |
| as root | `initdb` refuses root: the server runs as the `postgres` user (Debian's |
|  | package creates it), which owns the directory |
| `query(sql)` | the rows of a SELECT as dicts, through `psql` and `json_agg` |
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ticdc_sink._local_broker import free_port

__all__ = ["PostgresError", "PostgresServer", "postgres_bin"]


class PostgresError(RuntimeError):
    """PostgreSQL could not start or a statement failed (the output is in the message)."""


def postgres_bin() -> Path | None:
    """The directory of PostgreSQL's server binaries, or None if there is none."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    return versions[0].parent if versions else None


class PostgresServer:
    """A PostgreSQL server of its own on loopback (see the module docstring)."""

    def __init__(self, *, database: str = "interop") -> None:
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise PostgresError("no PostgreSQL server binaries (pg_ctl) on this machine")
        self._bin = bin_dir
        self.port = free_port()
        self.database = database
        self.jdbc_url = f"jdbc:postgresql://127.0.0.1:{self.port}/{database}"
        self.user = "postgres"
        self._home = Path(tempfile.mkdtemp(prefix="postgres-"))
        self._data = self._home / "data"
        self._runner: dict[str, Any] = {}
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self._home, owner.pw_uid, owner.pw_gid)
            self._runner = {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}
        self._started = False
        try:
            self._run(
                "initdb",
                "-D",
                str(self._data),
                "-U",
                self.user,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            )
            self._run(
                "pg_ctl",
                "-D",
                str(self._data),
                "-l",
                str(self._home / "server.log"),
                "-w",
                "-t",
                "120",
                "-o",
                f"-h 127.0.0.1 -p {self.port} -k {self._home} -F",
                "start",
            )
            self._started = True
            self._psql("postgres", f"CREATE DATABASE {database}")
        except BaseException:
            self.close()
            raise

    def version(self) -> str:
        """The server's version, as `SHOW server_version` prints it."""
        return self._psql(self.database, "SHOW server_version").strip()

    def query(self, sql: str) -> list[dict[str, Any]]:
        """The rows of a SELECT, as dicts of JSON values (numerics as numbers)."""
        out = self._psql(self.database, f"SELECT coalesce(json_agg(q), '[]') FROM ({sql}) q")
        return list(json.loads(out))

    def log(self) -> str:
        path = self._home / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def close(self) -> None:
        """Stop the server (fast shutdown) and delete its directory."""
        if self._started:
            self._started = False
            self._run("pg_ctl", "-D", str(self._data), "-m", "fast", "-w", "stop", check=False)
        shutil.rmtree(self._home, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _psql(self, database: str, sql: str) -> str:
        done = subprocess.run(
            [
                str(self._bin / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                self.user,
                "-d",
                database,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise PostgresError(f"psql failed on {sql!r}: {done.stderr.strip()}")
        return done.stdout

    def _run(self, tool: str, *arguments: str, check: bool = True) -> None:
        done = subprocess.run(
            [str(self._bin / tool), *arguments],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            cwd=self._home,
            **self._runner,
        )
        if check and done.returncode != 0:
            raise PostgresError(
                f"{tool} failed (exit {done.returncode}): "
                f"{(done.stdout + done.stderr)[-2000:]}\n{self.log()}"
            )
