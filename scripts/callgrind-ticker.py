#!/usr/bin/env python3
"""What a live price ticker costs the server per notification, by callgrind (BENCHMARKS.md, issue 16, round 23).

    scripts/callgrind-ticker.py SERVER_BINARY [RATE] [SECONDS]

Seeds a one-product catalog, runs SERVER_BINARY under valgrind --tool=callgrind with `--simulate-market RATE`
(default 50 changes a second, few enough for a server under valgrind to keep up) and opens a `priceTicker` on the
product. After 5 s, it counts the `viewModel/changed` notifications of SECONDS seconds (default 20) between two
dumps, and prints the main thread's instructions per notification and per second, and every thread's per second
(the simulation's writes included). Instruction counts repeat on a busy machine; compare binaries at one RATE.
Needs valgrind (apt-get install -y valgrind).
"""
import glob, json, os, select, shutil, subprocess, sys, tempfile, time


def main() -> None:
    binary = os.path.realpath(sys.argv[1])
    rate = sys.argv[2] if len(sys.argv) > 2 else "50"
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    work = tempfile.mkdtemp(prefix="storefront-ticker-cg-")
    try:
        # valgrind 3.19 cannot read the DWARF of Swift 6.3; symbols stay.
        server = os.path.join(work, "server")
        subprocess.run(["strip", "--strip-debug", "-o", server, binary], check=True)
        database = os.path.join(work, "ticker.sqlite")
        subprocess.run([server, "seed", "--products", "1", "--database", database], check=True, capture_output=True)
        profile = os.path.join(work, "cg")
        process = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={profile}.%p", server, "serve",
             "--database", database, "--simulate-market", rate, "--simulate-seed", "1", "--framing", "ndjson"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        reader = Reader(process)
        reader.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        reader.until_answer(1)
        reader.send({"jsonrpc": "2.0", "id": 2, "method": "viewModel/open",
                     "params": {"type": "priceTicker", "args": {"productId": "p-0001"}}})
        reader.until_answer(2)
        reader.count_for(5)
        subprocess.run(["callgrind_control", "--dump", str(process.pid)], capture_output=True, check=True)
        notifications = reader.count_for(seconds)
        subprocess.run(["callgrind_control", "--dump", str(process.pid)], capture_output=True, check=True)
        process.stdin.close()
        process.wait(timeout=300)
        main_thread = count(glob.glob(f"{profile}.{process.pid}.2-01"))
        every_thread = count(glob.glob(f"{profile}.{process.pid}.2-*"))
        print(f"{binary}: {notifications} notifications in {seconds:.0f} s at {rate} changes/s; main thread "
              f"{main_thread / max(notifications, 1):,.0f} instructions per notification, {main_thread / seconds / 1e6:.1f}M "
              f"per second; every thread {every_thread / seconds / 1e6:.1f}M per second")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def count(files: list[str]) -> int:
    """The instructions of the profiles `files` (one per thread)."""
    total = 0
    for path in files:
        with open(path) as file:
            total += next(int(line.split()[1]) for line in file if line.startswith("summary:"))
    return total


class Reader:
    """The server's output, a line at a time."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self.buffer = b""

    def send(self, message: dict) -> None:
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def lines(self, timeout: float):
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if ready:
            chunk = os.read(self.process.stdout.fileno(), 1 << 16)
            if not chunk:
                raise SystemExit("the server ended")
            self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            yield line

    def until_answer(self, request_id: int, timeout: float = 300) -> None:
        end = time.time() + timeout
        while time.time() < end:
            for line in self.lines(0.5):
                if json.loads(line).get("id") == request_id:
                    return
        raise SystemExit(f"no answer to request {request_id}")

    def count_for(self, seconds: float) -> int:
        notifications = 0
        end = time.time() + seconds
        while time.time() < end:
            notifications += sum(1 for line in self.lines(0.2) if b'"viewModel/changed"' in line)
        return notifications


if __name__ == "__main__":
    main()
