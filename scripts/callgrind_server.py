"""A storefront server under valgrind --tool=callgrind, driven over its pipes (for the callgrind-*.py scripts).

    server = CallgrindServer(binary, database, folder)
    server.call("initialize", {})          # one request, waits for its answer (exits on an error)
    server.dump("window")                  # callgrind_control --dump: the counts since the last dump
    server.finish()
    total, main_thread = server.instructions(2)   # of the second dump

Counts repeat within ~2 % on a busy machine; times under valgrind mean nothing. `PipeServer(command)` is the
same client for a server run as it is (`[binary, "serve", "--database", path]`).
"""
import json, os, re, shutil, sqlite3, subprocess, sys, tempfile, time


def sign_up_with_cart(call, email):
    """Signs up an account through the registration form (a checkout needs one), then opens a cart and
    returns its handle. `call(method, params)` sends one request and returns its result."""
    form = call("viewModel/open", {"type": "registration", "args": {}})["viewModel"]
    for field, value in [("email", email), ("password", "Bench-password-1"), ("confirmPassword", "Bench-password-1")]:
        call("registration/setField", {"viewModel": form, "field": field, "value": value})
    call("registration/setAcceptedTerms", {"viewModel": form, "accepted": True})
    call("registration/register", {"viewModel": form})
    call("viewModel/close", {"viewModel": form})
    return call("viewModel/open", {"type": "cart", "args": {}})["viewModel"]


def adding(call, cart, products, pause=0.0):
    """A function that adds `n` units one at a time to the cart `cart`, a unit of each of `products` in turn,
    clearing the cart after each round of them (so each add puts a new line in); with `times`, it appends each
    add's round trip to it, in seconds. With `pause` (seconds), it waits that long before each add, as a person
    tapping does. `call(method, params)` sends one request and returns its result."""
    def adds(n, times=None):
        for index in range(n):
            if pause:
                time.sleep(pause)
            start = time.perf_counter()
            call("cart/add", {"viewModel": cart, "productId": products[index % len(products)], "quantity": 1})
            if times is not None:
                times.append(time.perf_counter() - start)
            if index % len(products) == len(products) - 1:
                call("cart/clear", {"viewModel": cart})
    return adds


def products_in_stock(database, count, more_than):
    """The ids of `count` products of the catalog at `database` with more than `more_than` units in stock; exits
    when it has fewer."""
    connection = sqlite3.connect(database)
    products = [row[0] for row in connection.execute("SELECT id FROM product WHERE stock > ? LIMIT ?", (more_than, count))]
    connection.close()
    if len(products) < count:
        sys.exit("the catalog has fewer than %d products with more than %d in stock" % (count, more_than))
    return products


def copy_of(catalog, prefix):
    """A copy of the catalog file in a new temporary folder: (folder, path of the copy)."""
    folder = tempfile.mkdtemp(prefix=prefix)
    database = os.path.join(folder, "catalog.sqlite")
    shutil.copyfile(catalog, database)
    return folder, database


def cpu_seconds(process):
    """The user and system CPU `process` has used so far, in seconds (from /proc)."""
    fields = open("/proc/%d/stat" % process.pid).read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def measure_per_call(process, count, work, traced, what, least=0.01):
    """Runs `work()` (`count` calls of one kind to the server `process`) and prints, per call, the wall time and
    the server's CPU (user and system, from /proc), or with `traced` the system calls the server made meanwhile
    (strace -c attached for `work` only: its counts, not its times; those under `least` per call left out).
    `what` names the call and what else `work` includes: ("add", "a clear every 50 included")."""
    tracer, log = None, None
    if traced:
        log = tempfile.mktemp(prefix="storefront-strace-")
        tracer = subprocess.Popen(["strace", "-f", "-c", "-o", log, "-p", str(process.pid)], stderr=subprocess.DEVNULL)
        time.sleep(1)
    user, system = cpu_seconds(process)
    start = time.perf_counter()
    work()
    wall = time.perf_counter() - start
    user_after, system_after = cpu_seconds(process)
    name, included = what
    if tracer:
        tracer.send_signal(2)
        tracer.wait()
        print("system calls per %s (%s; those under %g left out):" % (name, included, least))
        for line in open(log):
            match = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", line)
            if match and match.group(2) != "total" and int(match.group(1)) >= count * least:
                print("  %-16s %6.2f" % (match.group(2), int(match.group(1)) / count))
        os.remove(log)
    else:
        print("per %s: wall %.0f µs, server CPU user %.0f µs, system %.0f µs"
              % (name, wall / count * 1e6, (user_after - user) / count * 1e6, (system_after - system) / count * 1e6))


class PipeServer:
    """A server started as `command`, driven over its stdin and stdout (its stderr goes to `stderr`)."""

    def __init__(self, command, stderr=None):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.next_id = 0

    def request(self, method, params):
        """The bytes of the next request (its id taken)."""
        self.next_id += 1
        return (json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n").encode()

    def write(self, data):
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def read(self):
        """The next message the server wrote."""
        return json.loads(self.process.stdout.readline())

    def call(self, method, params):
        """Sends one request and returns its whole answer, skipping notifications; exits on an error."""
        self.write(self.request(method, params))
        while True:
            message = self.read()
            if message.get("id") == self.next_id:
                if "error" in message:
                    sys.exit("%s answered %s" % (method, message))
                return message

    def finish(self):
        self.process.stdin.close()
        self.process.wait()


class CallgrindServer(PipeServer):
    def __init__(self, binary, database, folder):
        # valgrind 3.19 cannot read the DWARF of Swift 6.3; symbols stay.
        self.stripped = os.path.join(folder, "server")
        subprocess.run(["strip", "--strip-debug", "-o", self.stripped, os.path.realpath(binary)], check=True)
        self.profile = os.path.join(folder, "cg.%p")
        super().__init__(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + self.profile, self.stripped, "serve", "--database", database],
                         stderr=open(os.path.join(folder, "valgrind.log"), "w"))

    def dump(self, name):
        subprocess.run(["callgrind_control", "--dump=" + name, str(self.process.pid)], check=True, capture_output=True)

    def dump_file(self, number):
        return "%s.%d" % (self.profile.replace("%p", str(self.process.pid)), number)

    def instructions(self, number):
        """The instructions of dump `number`: the whole process's, and the main thread's part (what is below
        StorefrontCLI_main; the rest is the analytics recorder's writer and the change feed's poll)."""
        path = self.dump_file(number)
        total = next(int(line.split()[1]) for line in open(path) if line.startswith("summary:"))
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                                   capture_output=True, text=True).stdout
        main_thread = next((int(line.split()[0].replace(",", "")) for line in annotated.splitlines()
                            if line.rstrip().endswith("StorefrontCLI_main [%s]" % self.stripped)), 0)
        return total, main_thread

    def ran(self, number, symbol):
        """Whether a function whose name contains `symbol` ran in dump `number`."""
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", self.dump_file(number)],
                                   capture_output=True, text=True).stdout
        return symbol in annotated
