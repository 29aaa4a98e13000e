"""A PostgreSQL server for the tests and the bench.

Where the server comes from, in order:
1. the URL in `WAYBOOK_TEST_POSTGRES` (any reachable server; CI services, a developer's database);
2. a server already answering on 127.0.0.1:5432 (with the libpq defaults: PGUSER, PGPASSWORD, ...);
3. a throwaway cluster made with the installed PostgreSQL's `initdb` and `pg_ctl` in a temporary
   directory, on a free port, run as the `postgres` user when the tests run as root, stopped at the end.
With none of these, PostgreSQL tests skip with a one-line reason, except under `CI=true`, where they
fail: CI must install PostgreSQL (`apt-get install -y postgresql`).

Tests that restart the server need a cluster they own (`Cluster`); `owned_cluster()` makes one even when
a server from 1. or 2. is used for everything else.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path

import attrs

ENV_URL = "WAYBOOK_TEST_POSTGRES"
LOCAL_URL = "postgresql://127.0.0.1:5432/postgres"
SETTINGS = (
    # A process crash (what the fault tests do) keeps the OS page cache, so committed WAL survives
    # without fsync; a test cluster need not pay for power-loss safety.
    "fsync=off",
    "listen_addresses=127.0.0.1",
    "max_connections=200",
    "log_min_messages=fatal",
)


class NoServerError(Exception):
    """No PostgreSQL server can be found or started here; the message says why, on one line."""


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def answers(url: str) -> bool:
    """Whether a server at `url` accepts a connection and a query."""
    try:
        import psycopg
    except ImportError:
        return False
    try:
        with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


def find_bindir() -> Path | None:
    """The newest installed PostgreSQL's bin directory holding initdb and pg_ctl, or None."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True
    )
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(str(Path(on_path).resolve().parent))
    for candidate in candidates:
        bindir = Path(candidate)
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@attrs.define
class Cluster:
    """A throwaway PostgreSQL cluster that these tests started and must stop."""

    bindir: Path
    root: Path
    port: int
    run_as: str | None  # the OS user that owns the cluster when the tests run as root
    settings: tuple[str, ...] = SETTINGS

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @classmethod
    def create(cls, settings: tuple[str, ...] = SETTINGS) -> Cluster:
        bindir = find_bindir()
        if bindir is None:
            msg = "PostgreSQL is not installed (no initdb/pg_ctl); apt-get install -y postgresql"
            raise NoServerError(msg)
        run_as = None
        root = Path(tempfile.mkdtemp(prefix="waybook-pg-"))
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(root)
                msg = "running as root and there is no `postgres` user to run initdb as"
                raise NoServerError(msg) from None
            os.chown(root, owner.pw_uid, owner.pw_gid)
            run_as = "postgres"
        cluster = cls(bindir=bindir, root=root, port=free_port(), run_as=run_as, settings=settings)
        cluster._run(
            "initdb",
            "-D",
            str(cluster.datadir),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        )
        try:
            cluster._start_on_a_free_port()
        except NoServerError:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return cluster

    def _start_on_a_free_port(self, attempts: int = 5) -> None:
        """Start; if another process took the port between `free_port()` and the server's bind (test
        processes run side by side under pytest-xdist, each starting its own cluster), take a new one."""
        for attempt in range(attempts):
            try:
                self.start()
            except NoServerError as exc:
                if "could not create any TCP/IP sockets" not in str(exc) or attempt == attempts - 1:
                    raise
                self.port = free_port()
            else:
                return

    def start(self) -> None:
        options = " ".join(
            f"-c {s}" for s in (*self.settings, f"port={self.port}", f"unix_socket_directories={self.root}")
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.datadir),
            "-l",
            str(self.root / "log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )

    def restart_immediate(self) -> None:
        """Crash the server (`pg_ctl restart -m immediate`: no checkpoint, recovery from WAL) and wait
        until it accepts connections again."""
        self._run("pg_ctl", "-D", str(self.datadir), "-m", "immediate", "-w", "-t", "60", "restart")

    def stop(self) -> None:
        with contextlib.suppress(NoServerError):
            self._run("pg_ctl", "-D", str(self.datadir), "-m", "fast", "-w", "-t", "60", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join((self.root / "log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _run(self, program: str, *args: str) -> None:
        # Output goes to a file, not a pipe: the server pg_ctl starts keeps the descriptors it inherits,
        # and a pipe held open by the server would never reach end-of-file.
        command = [str(self.bindir / program), *args]
        with tempfile.TemporaryFile() as output:
            result = subprocess.run(
                command,
                user=self.run_as,
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                check=False,
            )
            output.seek(0)
            text = output.read().decode(errors="replace").strip()
        if result.returncode != 0:
            msg = f"{program} failed ({result.returncode}): {text} {self.log_tail(5)}"
            raise NoServerError(" ".join(msg.split()))


@attrs.frozen
class Server:
    url: str
    cluster: Cluster | None  # set when these tests own the server (and may restart it)
    origin: str


@contextlib.contextmanager
def server() -> Iterator[Server]:
    """The server the tests use (see the module docstring); raises NoServerError with a one-line reason."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        msg = "psycopg is not installed; pip install -e '.[test]'"
        raise NoServerError(msg) from None
    url = os.environ.get(ENV_URL)
    if url:
        if not answers(url):
            msg = f"{ENV_URL} is set but no server answers there"
            raise NoServerError(msg)
        yield Server(url, None, ENV_URL)
        return
    if answers(LOCAL_URL):
        yield Server(LOCAL_URL, None, "127.0.0.1:5432")
        return
    with owned_cluster() as cluster:
        yield Server(cluster.url, cluster, "throwaway cluster")


@contextlib.contextmanager
def owned_cluster() -> Iterator[Cluster]:
    cluster = Cluster.create()
    try:
        yield cluster
    finally:
        cluster.stop()


@contextlib.contextmanager
def standby_of(primary: Cluster) -> Iterator[Cluster]:
    """A hot standby of `primary`, made as an operator makes one: `pg_basebackup -R` (which writes
    `standby.signal` and the primary's conninfo) into a directory of its own, started on a free port.
    Holds everything the primary committed before it was made; stopped and removed at the end."""
    root = Path(tempfile.mkdtemp(prefix="waybook-pg-standby-"))
    if primary.run_as is not None:
        shutil.chown(root, primary.run_as, primary.run_as)
    standby = Cluster(
        bindir=primary.bindir, root=root, port=free_port(), run_as=primary.run_as, settings=primary.settings
    )
    try:
        standby._run(
            "pg_basebackup",
            *("-D", str(standby.datadir), "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"),
            *("-R", "-X", "stream", "--no-sync", "--checkpoint=fast"),  # (spread: up to minutes of pacing)
        )
        if not (standby.datadir / "standby.signal").exists():
            msg = "pg_basebackup -R wrote no standby.signal"
            raise NoServerError(msg)
        standby.start()
        yield standby
    finally:
        standby.stop()


def with_schema(url: str, schema: str) -> str:
    """`url` with the libpq option that makes `schema` the connection's current schema."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query)
    query = [(k, v) for k, v in query if k != "options"]
    query.append(("options", f"-c search_path={schema}"))
    encoded = urllib.parse.urlencode(query, quote_via=urllib.parse.quote)  # libpq reads no "+" as space
    return urllib.parse.urlunsplit(parts._replace(query=encoded))


_shared: list[Server] = []
_schemas: list[str] = []
_failure: list[str] = []


def shared() -> Server:
    """The server of this test process, found or started on first use and stopped at exit."""
    if _failure:
        raise NoServerError(_failure[0])
    if not _shared:
        context = server()
        try:
            _shared.append(context.__enter__())
        except NoServerError as exc:
            _failure.append(str(exc))
            raise
        atexit.register(_finish, context)
    return _shared[0]


def _finish(context: contextlib.AbstractContextManager[Server]) -> None:
    found = _shared[0]
    if found.cluster is None:  # someone else's server: leave no schema behind
        with contextlib.suppress(Exception):
            for schema in _schemas:
                drop_schema(found.url, schema)
    context.__exit__(None, None, None)


def fresh_schema(url: str) -> str:
    import psycopg

    schema = f"waybook_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}".encode())
    _schemas.append(schema)
    return schema


def drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE".encode())


def store_url() -> str:
    """A `postgresql://` URL of an empty store (a fresh schema) on the shared server."""
    base = shared().url
    return with_schema(base, fresh_schema(base))


def find_pgbouncer() -> Path | None:
    """The installed PgBouncer (Debian's `pgbouncer` package puts it in /usr/sbin), or None."""
    found = shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.access(p, os.X_OK)), None
    )
    return Path(found) if found else None


@attrs.define
class Bouncer:
    """A throwaway PgBouncer in transaction mode in front of a server, started and stopped by the tests.

    Every database name is passed through to the server (`* = host=... port=...`); clients connect to
    127.0.0.1:`port` without a password (auth_type=any). Run as the `postgres` user when the tests run
    as root (PgBouncer refuses root)."""

    root: Path
    port: int
    process: subprocess.Popen[bytes]

    @classmethod
    def start(cls, server_url: str, attempts: int = 5) -> Bouncer:
        program = find_pgbouncer()
        if program is None:
            msg = "PgBouncer is not installed; apt-get install -y pgbouncer"
            raise NoServerError(msg)
        for attempt in range(attempts):
            try:
                return cls._start_on(program, server_url, free_port())
            except NoServerError as exc:
                # Another test process (pytest-xdist) took the port between free_port() and the bind.
                if "already in use" not in str(exc) or attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def _start_on(cls, program: Path, server_url: str, port: int) -> Bouncer:
        parts = urllib.parse.urlsplit(server_url)
        root = Path(tempfile.mkdtemp(prefix="waybook-pgbouncer-"))
        user = parts.username or "postgres"  # auth_type=any: the server is logged into as this user
        (root / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={parts.hostname or '127.0.0.1'} port={parts.port or 5432} user={user}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {port}\n"
            f"unix_socket_dir = {root}\n"
            "auth_type = any\n"
            "pool_mode = transaction\n"
            f"admin_users = {user}\n"
            "default_pool_size = 4\n"
            "max_client_conn = 200\n"
            "ignore_startup_parameters = extra_float_digits\n"
            f"logfile = {root}/log\n"
            f"pidfile = {root}/pid\n"
        )
        run_as = None
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            for path in (root, root / "pgbouncer.ini"):
                os.chown(path, owner.pw_uid, owner.pw_gid)
            run_as = "postgres"
        process = subprocess.Popen(
            [str(program), str(root / "pgbouncer.ini")],
            user=run_as,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        bouncer = cls(root=root, port=port, process=process)
        bouncer._await_listening()
        return bouncer

    def url(self, database: str, user: str = "postgres") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def _await_listening(self) -> None:
        """Wait until PgBouncer's log says it is up, then require that it listens on its TCP port: a
        PgBouncer that cannot bind the port stays up on its Unix socket alone (and a port that answers
        may be another process's)."""
        import time

        log_path = self.root / "log"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            log = log_path.read_text(errors="replace") if log_path.exists() else ""
            if self.process.poll() is not None:
                msg = f"pgbouncer exited with {self.process.returncode}: {' '.join(log.split()[-30:])}"
                raise NoServerError(msg)
            if "process up" in log:
                if f"listening on 127.0.0.1:{self.port}" in log:
                    return
                self.stop()
                refused = next((line for line in log.splitlines() if "cannot listen" in line), log)
                msg = f"pgbouncer did not listen on 127.0.0.1:{self.port}: {' '.join(refused.split())}"
                raise NoServerError(msg)
            time.sleep(0.05)  # polling a log that is not written yet; bounded by the deadline
        msg = "pgbouncer did not start within 30 s"
        raise NoServerError(msg)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)
