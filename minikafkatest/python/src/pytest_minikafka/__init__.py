"""Start a minikafka broker from Python and drive its control API.

The pytest fixtures live in pytest_minikafka.plugin (registered through the
pytest11 entry point when the package is installed); this module is the part
that needs no pytest:

    from pytest_minikafka import start

    with start() as broker:
        print(broker.bootstrap_servers)
        broker.fault(api_keys=[0], error="NOT_LEADER_OR_FOLLOWER", times=2)

The binary is the one passed as `binary`, else $MINIKAFKA_BIN, else
`minikafka` on PATH. Every broker listens on free loopback ports and keeps its
data in a temporary directory removed when it stops. The control API is
documented in docs/control-api.md of the minikafka repository.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Broker", "MinikafkaError", "MinikafkaTimeout", "find_binary", "start"]

INSTALL_HINT = ("install it with `go install github.com/minikafka/minikafka/cmd/minikafka@latest`, "
                "or set MINIKAFKA_BIN to its path")

# The binary's startup lines on stdout; the bound ports are read from them.
_LISTEN_RE = re.compile(r"advertised as ([^;,\s]+)")
_ADMIN_RE = re.compile(r"control API at http://(\S+)/v1/")


class MinikafkaError(Exception):
    """A broker that would not start, or a control API call the broker refused.

    `status` is the HTTP status of a refused call (0 when there was none)."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status


class MinikafkaTimeout(MinikafkaError, TimeoutError):
    """A wait whose timeout passed first; the message says what was last seen."""


def find_binary(binary=None):
    """The minikafka binary to run: `binary`, $MINIKAFKA_BIN, or PATH."""
    where = "argument"
    if not binary:
        binary, where = os.environ.get("MINIKAFKA_BIN"), "MINIKAFKA_BIN"
    if not binary:
        found = shutil.which("minikafka")
        if not found:
            raise MinikafkaError("minikafka is not on PATH: " + INSTALL_HINT)
        return found
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        found = shutil.which(binary)
        if not found:
            raise MinikafkaError("minikafka binary %r (from %s) is not an executable file: %s"
                                 % (binary, where, INSTALL_HINT))
        return found
    return binary


class Broker:
    """One minikafka process.

    Attributes once started: `bootstrap_servers` ("127.0.0.1:PORT", what every
    Kafka client takes), `admin_url` (the control API's base URL) and
    `data_dir`. Control API calls raise MinikafkaError when the broker refuses
    them (MinikafkaTimeout for a wait that timed out).
    """

    def __init__(self, binary=None, args=(), data_dir=None, start_timeout=30.0, env=None):
        self.binary = find_binary(binary)
        self.args = list(args)
        self.start_timeout = start_timeout
        self.env = env
        self._own_dir = data_dir is None
        self.data_dir = data_dir
        self.bootstrap_servers = None
        self.admin_url = None
        self._proc = None
        self._output = collections.deque(maxlen=200)
        self._ready = threading.Event()
        self._reader = None

    # --- lifecycle -------------------------------------------------------

    def start(self):
        if self._proc is not None:
            raise MinikafkaError("broker already started")
        if self._own_dir:
            self.data_dir = tempfile.mkdtemp(prefix="minikafka-")
        cmd = [self.binary, "-listen", "127.0.0.1:0", "-data", self.data_dir, "-fsync", "never",
               "-admin-addr", "127.0.0.1:0"] + self.args
        # stderr joins stdout so one reader drains both: an undrained pipe
        # would block the broker once its log fills the pipe buffer.
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, errors="replace",
                                      env=self.env)
        self._reader = threading.Thread(target=self._read, name="minikafka-output", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + self.start_timeout
        while not self._ready.wait(0.05):
            if self._proc.poll() is not None:
                self._reader.join(2)
                self._fail("minikafka exited with status %d before it was ready" % self._proc.returncode)
            if time.monotonic() > deadline:
                self._fail("minikafka did not print its addresses within %.0fs" % self.start_timeout)
        # The addresses are printed once the listeners are bound; /healthz
        # answering proves the control API serves too.
        while True:
            try:
                with urllib.request.urlopen(self.admin_url + "/healthz", timeout=5) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                self._fail("minikafka's /healthz did not answer within %.0fs" % self.start_timeout)
            time.sleep(0.05)
        return self

    def stop(self):
        """Stops the broker (SIGTERM, then SIGKILL after 10 s) and removes its
        data directory if this Broker made it. Safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if self._reader is not None:
                self._reader.join(5)
        # Only after exit: a clean shutdown still writes to the data directory.
        if self._own_dir and self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self):
        if self._proc is None:
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def output(self):
        """The broker's last lines of output (stdout and log), for failure messages."""
        return "\n".join(self._output)

    def _read(self):
        for line in self._proc.stdout:
            line = line.rstrip("\n")
            self._output.append(line)
            if not self._ready.is_set():
                m = _LISTEN_RE.search(line)
                if m and self.bootstrap_servers is None:
                    self.bootstrap_servers = m.group(1)
                m = _ADMIN_RE.search(line)
                if m:
                    self.admin_url = "http://" + m.group(1)
                    if self.bootstrap_servers:
                        self._ready.set()

    def _fail(self, why):
        out = self.output()
        self.stop()
        raise MinikafkaError("%s: %s\n%s" % (why, self.binary, out))

    # --- the control API -------------------------------------------------

    def call(self, method, path, body=None, timeout=30.0):
        """One control API request; returns the decoded JSON answer (None for 204)."""
        if self.admin_url is None:
            raise MinikafkaError("broker not started")
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.admin_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                msg = json.loads(raw)["error"]
            except (ValueError, KeyError, TypeError):
                msg = raw.decode(errors="replace").strip()
            cls = MinikafkaTimeout if e.code == 408 else MinikafkaError
            raise cls("%s %s: %d %s" % (method, path, e.code, msg), e.code) from None
        return json.loads(raw) if raw else None

    # Faults.

    def fault(self, spec=None, **fields):
        """Adds a fault and returns it with its `id`. Fields as in the control
        API: match (api_keys, topic, partition, group, transactional_id,
        client_id, min_version, max_version, listener, connection), firing
        (times, probability, seed) and action (error, drop, delay_ms,
        delay_max_ms, hold, swallow, throttle_ms):

            broker.fault(api_keys=[0], topic="orders", error="NOT_LEADER_OR_FOLLOWER", times=2)
        """
        body = dict(spec or {})
        body.update(fields)
        return self.call("POST", "/v1/faults", body)

    def faults(self):
        """Every fault with `fired`, `done` and `held`."""
        return self.call("GET", "/v1/faults")["faults"]

    def get_fault(self, fault_id):
        return self.call("GET", "/v1/faults/%d" % fault_id)

    def remove_fault(self, fault_id):
        self.call("DELETE", "/v1/faults/%d" % fault_id)

    def clear_faults(self):
        """Removes every fault; held answers go out."""
        self.call("DELETE", "/v1/faults")

    def release(self, fault_id):
        """Sends the answers a `hold` fault is holding."""
        return self.call("POST", "/v1/faults/%d/release" % fault_id)

    def pause_partition(self, topic, partition=None):
        """The partition (every partition of topic when None) answers
        NOT_LEADER_OR_FOLLOWER until the returned fault is removed."""
        body = {"topic": topic}
        if partition is not None:
            body["partition"] = partition
        return self.call("POST", "/v1/faults/pause-partition", body)

    def coordinator_unavailable(self, group, loading=False):
        return self.call("POST", "/v1/faults/coordinator", {"group": group, "loading": loading})

    # The broker as a whole.

    def down(self):
        """Closes every client connection and unbinds the listeners: clients
        see a stopped broker until up()."""
        self.call("POST", "/v1/broker/down")

    def up(self):
        """Binds the same addresses again; the broker keeps all its state."""
        self.call("POST", "/v1/broker/up")

    def is_down(self):
        return self.call("GET", "/v1/broker")["down"]

    def requests(self, limit=None, api_key=None):
        """The request log, newest last."""
        q = {}
        if limit is not None:
            q["limit"] = limit
        if api_key is not None:
            q["api_key"] = api_key
        path = "/v1/requests" + ("?" + urllib.parse.urlencode(q) if q else "")
        return self.call("GET", path)["requests"]

    # Inspection.

    def partition(self, topic, partition=0):
        """{"log_start_offset", "high_watermark", "last_stable_offset", ...}"""
        return self.call("GET", "/v1/topics/%s/partitions/%d" % (_seg(topic), partition))

    def high_watermark(self, topic, partition=0):
        return self.partition(topic, partition)["high_watermark"]

    def group(self, group):
        return self.call("GET", "/v1/groups/" + _seg(group))

    def lag(self, group, topic):
        return self.call("GET", "/v1/groups/%s/lag/%s" % (_seg(group), _seg(topic)))

    # Seeding.

    def create_topic(self, topic, partitions=0, configs=None):
        """Creates a topic (partitions 0: the broker's default). A topic that
        exists raises MinikafkaError with status 409."""
        body = {"topic": topic, "partitions": partitions}
        if configs:
            body["configs"] = dict(configs)
        return self.call("POST", "/v1/topics", body)

    def seed(self, topic, records, transaction=None):
        """Writes records straight into the broker: each a dict with
        partition, key/value (text) or key_base64/value_base64, headers,
        timestamp_ms. `transaction` "commit" or "abort" writes them in one
        transaction. Returns [{"partition": P, "offset": O}, ...] in order."""
        body = {"records": list(records)}
        if transaction:
            body["transaction"] = transaction
        return self.call("POST", "/v1/topics/%s/records" % _seg(topic), body)["offsets"]

    # Waits: each returns when the condition holds and raises
    # MinikafkaTimeout (naming the last state seen) when timeout passes first.

    def _wait(self, what, body, timeout):
        body = dict(body, timeout_ms=int(timeout * 1000))
        self.call("POST", "/v1/wait/" + what, body, timeout=timeout + 10)

    def wait_high_watermark(self, topic, partition, offset, timeout=10.0):
        self._wait("high-watermark", {"topic": topic, "partition": partition, "offset": offset}, timeout)

    def wait_topic(self, topic, timeout=10.0):
        self._wait("topic", {"topic": topic}, timeout)

    def wait_group_stable(self, group, members, timeout=10.0):
        self._wait("group-stable", {"group": group, "members": members}, timeout)

    def wait_lag_zero(self, group, topic, timeout=10.0):
        self._wait("lag-zero", {"group": group, "topic": topic}, timeout)

    def wait_transaction(self, transactional_id, timeout=10.0):
        self._wait("transaction", {"transactional_id": transactional_id}, timeout)

    def reset(self):
        """Removes every fault and brings the broker up if it is down: what
        the `minikafka` fixture does after each test. Topics and records stay."""
        self.clear_faults()
        if self.is_down():
            self.up()


def _seg(s):
    return urllib.parse.quote(s, safe="")


def start(binary=None, args=(), data_dir=None, start_timeout=30.0, env=None):
    """Starts a broker and returns it once it answers; use it as a context
    manager or call stop(). `args` are extra flags for the binary
    (e.g. ["-default-partitions", "3"])."""
    return Broker(binary=binary, args=args, data_dir=data_dir, start_timeout=start_timeout, env=env).start()
