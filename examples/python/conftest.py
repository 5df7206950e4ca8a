"""pytest fixture: a minikafka broker with its control API, for tests of
Kafka code written in Python.

    MINIKAFKA_BIN=/path/to/minikafka /usr/bin/python3 -m pytest examples/python

The fixture starts the binary on free ports (-listen 127.0.0.1:0,
-admin-addr 127.0.0.1:0), reads both addresses from its startup lines and
stops it after the test. `broker.fault({...})` posts a fault to
/v1/faults (docs/control-api.md) and returns it with its id.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.request

import pytest

LISTEN_RE = re.compile(r"advertised as (\S+);")
ADMIN_RE = re.compile(r"control API at http://(\S+)/v1/")


class Broker:
    def __init__(self, bootstrap, admin):
        self.bootstrap = bootstrap
        self.admin = admin

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request("http://" + self.admin + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
            return json.loads(raw) if raw else None

    def fault(self, spec):
        return self.call("POST", "/v1/faults", spec)

    def get_fault(self, fault_id):
        return self.call("GET", "/v1/faults/%d" % fault_id)

    def remove_fault(self, fault_id):
        self.call("DELETE", "/v1/faults/%d" % fault_id)

    def requests(self, api_key=None):
        path = "/v1/requests" + ("" if api_key is None else "?api_key=%d" % api_key)
        return self.call("GET", path)["requests"]


@pytest.fixture
def broker():
    binary = os.environ.get("MINIKAFKA_BIN") or shutil.which("minikafka")
    if not binary:
        pytest.fail("set MINIKAFKA_BIN to a minikafka binary (go build ./cmd/minikafka)")
    data = tempfile.mkdtemp(prefix="minikafka-")
    proc = subprocess.Popen([binary, "-listen", "127.0.0.1:0", "-data", data, "-fsync", "never",
                             "-admin-addr", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    bootstrap = admin = None
    try:
        for line in proc.stdout:
            m = LISTEN_RE.search(line)
            if m:
                bootstrap = m.group(1)
            m = ADMIN_RE.search(line)
            if m:
                admin = m.group(1)
                break
        if not bootstrap or not admin:
            pytest.fail("minikafka did not print its addresses (exit %s)" % proc.poll())
        yield Broker(bootstrap, admin)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data, ignore_errors=True)
