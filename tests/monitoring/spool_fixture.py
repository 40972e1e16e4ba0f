"""Real processes for the monitoring tests: a spool-broker on 127.0.0.1 and kcat as its client.

Every helper is bounded in time; failures raise with the process's log tail so a CTest log says
why. Used by metrics_doc_check.py and live_prometheus.py.
"""
import os
import shutil
import socket
import subprocess
import time
import urllib.request


def need(tool):
    path = shutil.which(tool)
    if not path:
        raise SystemExit(f"FAIL: {tool} missing (scripts/setup.sh --with-tests installs it)")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


class Broker:
    """One spool-broker with its data in `workdir`; start() retries on fresh ports when another
    test took a port between choosing and binding it (ctest -j)."""

    def __init__(self, binary, workdir, overrides=()):
        self.binary = binary
        self.workdir = workdir
        self.overrides = list(overrides)
        self.proc = None

    def start(self, attempts=3):
        for _ in range(attempts):
            self.kafka_port, self.http_port = free_port(), free_port()
            self.log_path = os.path.join(self.workdir, "broker.log")
            self._spawn("w")
            if self.wait_ready(60):
                return self
        raise SystemExit(f"FAIL: broker did not start\n{self.log_tail()}")

    def restart(self):
        """Starts the stopped broker again on its ports and data: the same broker coming back
        (a scraper's target and the clients' bootstrap list stay valid)."""
        self._spawn("a")
        if not self.wait_ready(60):
            raise SystemExit(f"FAIL: broker did not start again\n{self.log_tail()}")
        return self

    def _spawn(self, log_mode):
        args = [self.binary,
                "--override", f"listeners=PLAINTEXT://127.0.0.1:{self.kafka_port}",
                "--override", f"http.listener=127.0.0.1:{self.http_port}",
                "--override", f"log.dirs={os.path.join(self.workdir, 'data')}"]
        for o in self.overrides:
            args += ["--override", o]
        self.proc = subprocess.Popen(args, stdout=open(self.log_path, log_mode),
                                     stderr=subprocess.STDOUT)

    def wait_ready(self, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if http_get(self.metrics_url.replace("/metrics", "/readyz"), 2)[0] == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.1)
        return False

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.kafka_port}"

    @property
    def metrics_url(self):
        return f"http://127.0.0.1:{self.http_port}/metrics"

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_tail(self, lines=30):
        try:
            return "".join(open(self.log_path).readlines()[-lines:])
        except OSError:
            return "(no log)"


def kcat(*args, stdin=None, timeout=60):
    r = subprocess.run([need("kcat"), *args], input=stdin, capture_output=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: kcat {' '.join(args)}: {r.stderr.decode()[-2000:]}")
    return r.stdout


def produce(bootstrap, topic, count, partition=None, prefix="m"):
    body = "".join(f"{prefix}-{i}\n" for i in range(count)).encode()
    args = ["-P", "-b", bootstrap, "-t", topic, "-X", "linger.ms=5"]
    if partition is not None:
        args += ["-p", str(partition)]
    kcat(*args, stdin=body)


def consume_group(bootstrap, group, topic, count):
    """Joins `group`, reads `count` records from the beginning and commits on the way out."""
    kcat("-b", bootstrap, "-G", group, topic, "-o", "beginning", "-c", str(count), "-e", "-q",
         timeout=120)


def metric_types(text):
    """{family name: type} from the # TYPE lines of a Prometheus text scrape."""
    out = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            out[name] = kind
    return out
