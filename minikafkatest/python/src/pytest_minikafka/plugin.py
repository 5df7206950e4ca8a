"""pytest fixtures for minikafka.

minikafka           one broker for the whole test run (session scope); after
                    each test that used it, its faults are removed and it is
                    brought up if the test took it down. Topics and records
                    stay, so give each test its own topic names.
minikafka_per_test  a fresh broker for one test (function scope).
minikafka_factory   starts brokers with extra flags, stopped after the test:
                    minikafka_factory(args=["-default-partitions", "3"]).

The binary: --minikafka-bin, else the `minikafka_bin` ini option, else
$MINIKAFKA_BIN, else `minikafka` on PATH. `minikafka_args` (ini) adds flags to
every broker the fixtures start.
"""
import os

import pytest

from . import Broker, MinikafkaError


def pytest_addoption(parser):
    group = parser.getgroup("minikafka")
    group.addoption("--minikafka-bin", dest="minikafka_bin", default=None,
                    help="minikafka binary for the minikafka fixtures (default: $MINIKAFKA_BIN, then PATH)")
    parser.addini("minikafka_bin", "minikafka binary for the minikafka fixtures "
                  "(default: $MINIKAFKA_BIN, then minikafka on PATH)", default="")
    parser.addini("minikafka_args", "extra flags for every broker the minikafka fixtures start",
                  type="args", default=[])


def _start(config, args=(), **kw):
    binary = config.getoption("minikafka_bin")
    if not binary:
        binary = config.getini("minikafka_bin") or None
        # A relative path in the ini file is relative to that file; a bare
        # name is looked up on PATH.
        if binary and os.sep in binary and not os.path.isabs(binary) and config.inipath is not None:
            binary = os.path.join(os.path.dirname(str(config.inipath)), binary)
    try:
        return Broker(binary=binary, args=list(config.getini("minikafka_args")) + list(args), **kw).start()
    except MinikafkaError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def minikafka(pytestconfig):
    """One minikafka broker for the test run: `.bootstrap_servers` and the
    control API as methods (fault, down, up, wait_high_watermark, create_topic, ...)."""
    broker = _start(pytestconfig)
    yield broker
    broker.stop()


@pytest.fixture(autouse=True)
def _minikafka_reset(request):
    # Only tests that asked for the shared broker pay for the reset; the
    # others must not start one.
    if "minikafka" not in request.fixturenames:
        yield
        return
    broker = request.getfixturevalue("minikafka")
    yield
    if broker.admin_url is not None:
        broker.reset()


@pytest.fixture
def minikafka_per_test(pytestconfig):
    """A fresh minikafka broker for this test alone."""
    broker = _start(pytestconfig)
    yield broker
    broker.stop()


@pytest.fixture
def minikafka_factory(pytestconfig):
    """start(args=(), **kw) -> Broker: brokers with extra flags, stopped after the test."""
    started = []

    def start(args=(), **kw):
        broker = _start(pytestconfig, args, **kw)
        started.append(broker)
        return broker

    yield start
    for broker in started:
        broker.stop()
