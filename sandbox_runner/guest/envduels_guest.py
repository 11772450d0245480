"""EnvDuels guest: the program that runs INSIDE the sandbox (standard library only).

It applies resource limits to itself, moves the JSON-lines protocol off fds 0 and 1 so nothing
the environment prints can corrupt it, then loads the environment module and answers requests
(`load`, `reset`, `step`, `reference`, `close`) one line at a time. Every reply echoes the
request's `id` so the host can reject anything that does not answer what it asked.

Usage: python3 -S -I envduels_guest.py MEMORY_BYTES MAX_PROCESSES FILE_BYTES CPU_SECONDS
       MAX_OBSERVATION_BYTES SECCOMP [CHANNEL_DIR]   (a limit of 0 means "leave as is")

With SECCOMP 1 the guest installs a seccomp filter on itself before any environment code
exists (namespaces, mounts, ptrace, keyrings, bpf, modules... fail with EPERM; sockets other than
unix, IPv4 and IPv6 with EAFNOSUPPORT), makes itself non-dumpable (no process of the sandbox may
open its memory), and refuses to start on an architecture it has no syscall table for.

Started as pid 1 of its pid namespace, the guest forks once after that: pid 1 stays behind,
filtered, and only reaps orphans until the guest proper exits, then exits with a status below 128
that says how it ended (so the namespace ends; see become_reaper: a status of 128 and above then
means the sandbox was killed from outside). No process of the sandbox is ever unfiltered, pid 1
included.

With CHANNEL_DIR the protocol runs over the FIFOs CHANNEL_DIR/in and CHANNEL_DIR/out instead of
stdin/stdout (Docker: a direct channel that bypasses the engine's attach stream). The guest
opens both before any environment code exists and says "ready"; the host then deletes them, so
the environment can only reach the protocol through the guest's own (private) descriptors.

Paired seeds mean one puzzle, so the guest makes what it can deterministic by construction:
it runs in an interpreter whose string hashing is pinned (PYTHONHASHSEED=0: `hash()` of a str
and the iteration order of a set of strings are the same in every sandbox; the local launchers
set it, and where the guest starts under `-I`, which ignores it, the guest re-executes itself
once with it set), and before every reset it seeds the
module-level `random` from the episode's seed and makes a fresh instance of the environment
(nothing an earlier episode left on the instance survives a reset). The module-level `random`
is seeded before the module's own import runs, too, so draws made at import time are the same in
every sandbox.

A load request may carry `clock_offset` (seconds): the replay after play loads the environment
with every clock it can read (time, datetime, the monotonic and performance counters) moved by
that much, and with its heap laid out differently, so an observation that depends on the time
or on a memory address differs from the played one however soon the replay follows. A reset
request in such a sandbox may carry `clock_stride` (seconds): in that episode every step first
moves those clocks on by that much more, so the time between two steps is the stride, whatever
pace the host keeps (an answer that depends on elapsed time differs from a play at any pace
shorter than the stride per step).

Every sandbox starts a fresh interpreter, so the guest imports only what it must: JSON through
the C accelerator `_json` (the json package imports re, enum and functools, which cost more
than the interpreter itself), signals through `_signal` (signal builds enums), and linecache
(tokenize, re) only to show the environment's source in a traceback.
"""

import os
import sys
from _json import encode_basestring_ascii as encode_string
from _json import make_encoder, make_scanner

MAIN_PID = os.getpid()
ENV_FILENAME = "<environment>"
MAX_TRACEBACK_CHARS = 4000
INFINITY = float("inf")
JSON_BOOL = {True: "true", False: "false"}
STEP_REPLY = '{"ok":true,"id":%s,"observation":%s,"done":%s,"success":%s,"reward":%r}\n'
# The host's step request, exactly as it formats one (ASCII, no spaces):
# {"id":"HEX-DIGITS","op":"step","action":"PRINTABLE ASCII BUT QUOTE AND BACKSLASH"}\n
STEP_PREFIX, STEP_MIDDLE, STEP_SUFFIX = b'{"id":"', b'","op":"step","action":"', b'"}\n'
HEX_DIGITS = b"0123456789abcdef"
ACTION_BYTES = bytes(byte for byte in range(0x20, 0x7F) if byte not in b'"\\')
FORKED = []  # set in any child forked through os.fork (checked before every reply)
LOADED_SOURCE = []  # the environment's source, once loaded (for its tracebacks)


def apply_limits(memory_bytes, max_processes, file_bytes, cpu_seconds):
    """Lower soft and hard limits, so the environment cannot raise them again."""
    import _signal
    import resource

    # A write past RLIMIT_FSIZE should fail with EFBIG, not kill the guest.
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
    wanted = [
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, 256),
        (resource.RLIMIT_AS, memory_bytes),
        (resource.RLIMIT_NPROC, max_processes),
        (resource.RLIMIT_FSIZE, file_bytes),
        (resource.RLIMIT_CPU, cpu_seconds),
    ]
    for which, value in wanted:
        if value <= 0 and which != resource.RLIMIT_CORE:
            continue
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))


# Syscalls an environment never needs and a sandbox escape often does (Docker's default profile
# denies them too): namespaces, mounts, tracing, keyrings, bpf, perf, kernel modules, kexec,
# clocks, swap, io_uring. They fail with EPERM; clone3 with ENOSYS so libc falls back to clone,
# whose flags the filter can see.
# (name, x86_64 number, aarch64 number); the last two are handled apart from the rest.
SYSCALL_NUMBERS = (
    ("unshare", 272, 97), ("setns", 308, 268), ("mount", 165, 40), ("umount2", 166, 39),
    ("pivot_root", 155, 41), ("chroot", 161, 51), ("ptrace", 101, 117),
    ("process_vm_readv", 310, 270), ("process_vm_writev", 311, 271), ("kcmp", 312, 272),
    ("pidfd_getfd", 438, 438), ("keyctl", 250, 219), ("add_key", 248, 217),
    ("request_key", 249, 218), ("bpf", 321, 280), ("perf_event_open", 298, 241),
    ("userfaultfd", 323, 282), ("kexec_load", 246, 104), ("kexec_file_load", 320, 294),
    ("init_module", 175, 105), ("finit_module", 313, 273), ("delete_module", 176, 106),
    ("reboot", 169, 142), ("swapon", 167, 224), ("swapoff", 168, 225), ("acct", 163, 89),
    ("settimeofday", 164, 170), ("clock_settime", 227, 112), ("clock_adjtime", 305, 266),
    ("adjtimex", 159, 171), ("syslog", 103, 116), ("quotactl", 179, 60),
    ("lookup_dcookie", 212, 18), ("open_by_handle_at", 304, 265),
    ("name_to_handle_at", 303, 264), ("fanotify_init", 300, 262), ("personality", 135, 92),
    ("vhangup", 153, 58), ("open_tree", 428, 428), ("move_mount", 429, 429),
    ("fsopen", 430, 430), ("fsconfig", 431, 431), ("fsmount", 432, 432), ("fspick", 433, 433),
    ("mount_setattr", 442, 442), ("io_uring_setup", 425, 425), ("io_uring_enter", 426, 426),
    ("io_uring_register", 427, 427), ("socket", 41, 198), ("socketpair", 53, 199),
    ("clone", 56, 220), ("clone3", 435, 435),
)
# The last four are handled apart from the rest (their arguments matter).
SPECIAL_SYSCALLS = 4
ARCHITECTURES = {"x86_64": (0xC000003E, 1), "aarch64": (0xC00000B7, 2)}  # AUDIT_ARCH, column
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID and NEWNET.
CLONE_NAMESPACE_FLAGS = 0x7E020000
# The only socket families allowed: AF_UNIX, AF_INET, AF_INET6. The network namespace holds
# these; others (AF_VSOCK to the hypervisor, AF_NETLINK, AF_PACKET, AF_ALG, bluetooth...) reach
# past it or into more of the kernel than an environment needs.
SOCKET_FAMILIES = (1, 2, 10)


def seccomp_program(machine):
    """Return the classic BPF filter for `machine` as bytes (struct sock_filter entries)."""
    import struct

    if machine not in ARCHITECTURES:
        raise OSError("no seccomp syscall table for architecture %r; refusing to run "
                      "environment code unfiltered" % machine)
    arch, column = ARCHITECTURES[machine]
    numbers = {row[0]: row[column] for row in SYSCALL_NUMBERS}
    load, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, kill, eperm, enosys = 0x7FFF0000, 0x80000000, 0x00050001, 0x00050026
    eafnosupport = 0x00050061
    code = [(load, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, kill), (load, 0, 0, 0)]
    if machine == "x86_64":  # the x32 ABI: the same calls under other numbers
        code += [(jge, 0, 1, 0x40000000), (ret, 0, 0, eperm)]
    for name in list(numbers)[:-SPECIAL_SYSCALLS]:
        code += [(jeq, 0, 1, numbers[name]), (ret, 0, 0, eperm)]
    families = len(SOCKET_FAMILIES)
    # socket and socketpair: the family (first argument) must be one of SOCKET_FAMILIES.
    code += [(jeq, 1, 0, numbers["socket"]), (jeq, 0, families + 3, numbers["socketpair"]),
             (load, 0, 0, 16)]
    code += [(jeq, families - index, 0, family) for index, family in enumerate(SOCKET_FAMILIES)]
    code += [(ret, 0, 0, eafnosupport), (ret, 0, 0, allow)]
    code += [(jeq, 0, 1, numbers["clone3"]), (ret, 0, 0, enosys),
             (jeq, 0, 3, numbers["clone"]), (load, 0, 0, 16),  # low half of the flags
             (jset, 0, 1, CLONE_NAMESPACE_FLAGS), (ret, 0, 0, eperm), (ret, 0, 0, allow)]
    return b"".join(struct.pack("HBBI", *entry) for entry in code)


def install_seccomp_filter():
    """Set no-new-privs, make this process non-dumpable (without CAP_SYS_PTRACE, which nothing
    in a sandbox has, no other process may then open its memory or /proc/PID/syscall) and
    install the filter on it; children inherit all three."""
    import ctypes

    program = seccomp_program(os.uname().machine)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    fprog = SockFprog(len(program) // 8, program)
    # PR_SET_DUMPABLE = 4; PR_SET_NO_NEW_PRIVS = 38; PR_SET_SECCOMP = 22 with
    # SECCOMP_MODE_FILTER = 2.
    if libc.prctl(4, 0, 0, 0, 0) != 0 or libc.prctl(38, 1, 0, 0, 0) != 0 \
            or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "could not install the seccomp filter")


def become_reaper():
    """As pid 1 of a pid namespace: fork the guest proper and stay behind to reap orphans.

    Returns in the child, which leads a session of its own (nothing the environment signals
    by process group reaches a launcher outside). The parent never returns: it waits for every
    child that ends up with it and, when the guest proper ends, exits with `guest_end_status`
    (always below 128), which ends every process left in the namespace. It runs no environment
    code and carries the same filter, limits and non-dumpability as the guest.

    So the host can tell how a sandbox ended from its first process alone: an exit status
    below 128 is the guest proper ending (whatever the environment did to it: exited, killed
    itself, crashed); 128 and above is pid 1 killed by a signal, which only a sender outside
    the namespace can do (a pid 1 without a handler ignores signals from inside, and the
    SIGTERM it handles ends it only when sent from outside).
    """
    import _signal

    global MAIN_PID
    waited = {_signal.SIGCHLD, _signal.SIGTERM}
    # Handled (an init drops unhandled signals) and blocked before the fork, so none is lost;
    # the parent takes them one by one with sigtimedwait, which shows who sent each.
    for signum in waited:
        _signal.signal(signum, lambda signum, frame: None)
    _signal.pthread_sigmask(_signal.SIG_BLOCK, waited)
    guest_pid = os.fork()
    if guest_pid == 0:
        MAIN_PID = os.getpid()
        for signum in waited:
            _signal.signal(signum, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, waited)
        os.setsid()
        return
    # Only the guest speaks the protocol; pid 1 keeps nothing but the log.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.closerange(3, 4096)
    # Signals without a handler cannot reach pid 1 from inside the namespace.
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    while True:
        info = _signal.sigtimedwait(waited, 1.0)
        # An engine stopping the sandbox (Docker's stop, its own shutdown or restart) sends
        # SIGTERM from outside the namespace (no sender pid in it): end the sandbox as an init
        # forwarding it would. Sent from inside, it is the environment's and changes nothing.
        if info is not None and info.si_signo == _signal.SIGTERM and info.si_pid == 0:
            os._exit(128 + _signal.SIGTERM)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                os._exit(70)
            if pid == 0:
                break
            if pid == guest_pid:
                code = guest_end_status(status)
                sys.stderr.write("envduels guest: %s\n" % (describe_guest_end(status),))
                sys.stderr.flush()
                os._exit(code)


def guest_end_status(status):
    """The sandbox's exit status for a guest proper that ended with wait `status`: its exit
    code up to 63, or 64 + the signal that killed it (at most 127); never 128 or above."""
    if os.WIFSIGNALED(status):
        return min(64 + os.WTERMSIG(status), 127)
    return min(os.waitstatus_to_exitcode(status), 63)


def describe_guest_end(status):
    if os.WIFSIGNALED(status):
        return "the environment's process was killed by signal %d" % (os.WTERMSIG(status),)
    return "the environment's process exited with status %d" % (
        os.waitstatus_to_exitcode(status),)


def take_protocol_fds(channel_dir=None):
    """Take private protocol fds (copies of stdin/stdout, or the channel FIFOs, all above fd 2);
    then fd 0 -> /dev/null and fd 1 -> the log, so nothing printed can reach the protocol."""
    if channel_dir:
        # The host holds the other end of each FIFO open already: neither open blocks.
        protocol_in = os.open(channel_dir + "/in", os.O_RDONLY)
        protocol_out = os.open(channel_dir + "/out", os.O_WRONLY)
        write_all(protocol_out, b"ready\n")
    else:
        protocol_in = os.dup(0)
        protocol_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the guest
    sys.stdout = sys.stderr
    sys.__stdout__ = sys.stderr
    return protocol_in, protocol_out


class ContractError(Exception):
    """The environment answered, but not in the shape the contract requires."""


class ObservationTooLarge(Exception):
    """An observation is over the configured byte limit."""


class Guest:
    def __init__(self, max_observation_bytes):
        self.max_observation_bytes = max_observation_bytes
        self.env = None

    def handle(self, request):
        op = request.get("op")
        if self.env is None:
            if op == "load":
                return self.load(request["code"], int(request.get("clock_offset") or 0),
                                 request.get("adapter"))
            raise ContractError("the environment is not loaded")
        if op == "reset":
            seed = int(request["seed"])
            stride = int(request.get("clock_stride") or 0)
            if stride and not CLOCK_SHIFT:
                raise ContractError("clock_stride needs the clocks moved at load (clock_offset)")
            CLOCK_STRIDE[0] = stride
            self.start_episode(seed)
            return {"observation": self.checked_text(self.env.reset(seed))}
        if op == "reference":
            return {"actions": self.reference(int(request["seed"]))}
        raise ContractError("unknown op %r" % (op,))

    def step(self, action):
        if CLOCK_STRIDE[0]:
            CLOCK_SHIFT[0] += CLOCK_STRIDE[0]
        return self.env.step(action)

    def start_episode(self, seed):
        """Seed the module-level random from the episode's seed, then make a fresh instance:
        the same seed then gives the same episode however many came before it here."""
        if "random" in sys.modules:
            sys.modules["random"].seed(seed)
        self.env = self.env_class()

    def load(self, source, clock_offset=0, adapter=None):
        import types

        code = compile(source, ENV_FILENAME, "exec")
        LOADED_SOURCE.append(source)
        if clock_offset:
            shift_clocks(clock_offset)
        if "random" in source:
            # Imported before the module runs, so even an `import random` inside step() finds
            # the generator that start_episode seeds; seeded before the import, so draws the
            # module makes while it loads are the same in every sandbox.
            import random

            random.seed(0)
        module = types.ModuleType("environment")
        module.__file__ = ENV_FILENAME
        sys.modules["environment"] = module
        exec(code, module.__dict__)
        if "linecache" in sys.modules:  # imported by the module (traceback, warnings...)
            cache_environment_source(sys.modules["linecache"])
        if adapter is not None:
            env_class = envduels_v1_factory(module, adapter)
        else:
            env_class = module.__dict__.get("Environment")
            if not isinstance(env_class, type):
                raise ContractError("the module defines no class named Environment")
        self.env_class = env_class
        self.env = env_class()
        max_steps = getattr(self.env, "max_steps", None)
        if type(max_steps) is not int or not 1 <= max_steps <= 200:
            raise ContractError("max_steps must be an int from 1 to 200, got %r" % (max_steps,))
        has_reference = callable(getattr(self.env, "reference_solution", None))
        return {"max_steps": max_steps, "has_reference": has_reference}

    def checked_text(self, value, what="reset() must return a str"):
        if type(value) is not str:
            raise ContractError("%s, got %s" % (what, type(value).__name__))
        if len(value) * 4 <= self.max_observation_bytes and value.isascii():
            return value  # short ASCII text: valid and within the limit, no need to encode
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            raise ContractError("observation is not valid Unicode text") from None
        if size > self.max_observation_bytes:
            raise ObservationTooLarge(
                "observation is %d bytes; the limit is %d" % (size, self.max_observation_bytes)
            )
        return value

    def step_line(self, id_json, result):
        """The hot path: check what step() returned and format the reply line directly.

        `id_json` is the request id already written as JSON."""
        if not isinstance(result, dict):
            raise ContractError("step() must return a dict, got %s" % type(result).__name__)
        try:
            observation, done, success = result["observation"], result["done"], result["success"]
        except KeyError as missing:
            raise ContractError("step() result is missing %r" % (missing.args[0],)) from None
        if type(observation) is not str or len(observation) * 4 > self.max_observation_bytes \
                or not observation.isascii():
            observation = self.checked_text(observation, "observation must be a str")
        if type(done) is not bool or type(success) is not bool:
            raise ContractError("done and success must be bools")
        reward = result.get("reward", 0.0)
        if reward is None:
            reward = 0.0
        if type(reward) not in (int, float) or reward != reward or abs(reward) == INFINITY:
            raise ContractError("reward must be a finite number, got %r" % (reward,))
        return (STEP_REPLY % (id_json, encode_string(observation), JSON_BOOL[done],
                              JSON_BOOL[success], float(reward))).encode("ascii")

    def reference(self, seed):
        method = getattr(self.env, "reference_solution", None)
        if not callable(method):
            return None
        actions = method(seed)
        if not isinstance(actions, (list, tuple)) or not all(type(a) is str for a in actions):
            raise ContractError("reference_solution() must return a list of str")
        return list(actions)


HEAP_PADDING = []  # kept alive for the guest's life: it moves the environment's objects
CLOCK_SHIFT = []  # [seconds the clocks are moved by] once shift_clocks ran
CLOCK_STRIDE = [0]  # seconds every step of this episode moves the clocks on by first


def shift_clocks(offset):
    """Move every clock the environment can read by `offset` seconds, before its module runs
    (so `from time import time`, default arguments and dataclass factories see the moved ones
    too), and shift the heap, so default reprs (memory addresses) differ as well. The shift
    lives in CLOCK_SHIFT, which a reset's `clock_stride` moves on at every step."""
    import datetime as datetime_module
    import time

    CLOCK_SHIFT.append(offset)
    shift = CLOCK_SHIFT
    real = {name: getattr(time, name) for name in (
        "time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
        "clock_gettime", "clock_gettime_ns", "localtime", "gmtime", "ctime", "asctime",
        "strftime")}
    now = lambda: real["time"]() + shift[0]  # noqa: E731
    time.time = now
    time.time_ns = lambda: real["time_ns"]() + shift[0] * 1000000000
    time.monotonic = lambda: real["monotonic"]() + shift[0]
    time.monotonic_ns = lambda: real["monotonic_ns"]() + shift[0] * 1000000000
    time.perf_counter = lambda: real["perf_counter"]() + shift[0]
    time.perf_counter_ns = lambda: real["perf_counter_ns"]() + shift[0] * 1000000000
    time.clock_gettime = lambda clock: real["clock_gettime"](clock) + shift[0]
    time.clock_gettime_ns = lambda clock: real["clock_gettime_ns"](clock) + shift[0] * 1000000000
    time.localtime = lambda seconds=None: real["localtime"](now() if seconds is None else seconds)
    time.gmtime = lambda seconds=None: real["gmtime"](now() if seconds is None else seconds)
    time.ctime = lambda seconds=None: real["ctime"](now() if seconds is None else seconds)
    time.asctime = lambda moment=None: real["asctime"](
        time.localtime() if moment is None else moment)
    time.strftime = lambda form, moment=None: real["strftime"](
        form, time.localtime() if moment is None else moment)
    base_datetime, base_date = datetime_module.datetime, datetime_module.date

    class datetime(base_datetime):
        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(now(), tz)

        @classmethod
        def utcnow(cls):
            return cls.utcfromtimestamp(now())

        @classmethod
        def today(cls):
            return cls.fromtimestamp(now())

    class date(base_date):
        @classmethod
        def today(cls):
            return cls.fromtimestamp(now())

    for shifted, name in ((datetime, "datetime"), (date, "date")):
        # Reprs and names read as the originals' (datetime.datetime(2020, 1, 1, 0, 0)).
        shifted.__name__, shifted.__qualname__, shifted.__module__ = (
            "datetime." + name, name, "datetime")
        setattr(datetime_module, name, shifted)
    HEAP_PADDING.extend(object() for _ in range(offset % 4093 + 257))
    HEAP_PADDING.append(bytearray(offset % 65521 + 4096))


def envduels_v1_factory(module, adapter):
    """A maker of EnvDuels-contract instances for the module's envduels-v1 class."""
    if not isinstance(adapter, dict) or adapter.get("format") != "envduels-v1":
        raise ContractError("unknown adapter %r" % (adapter,))
    class_name, max_turns = adapter.get("class_name"), adapter.get("max_turns")
    v1_class = module.__dict__.get(class_name) if type(class_name) is str else None
    if not isinstance(v1_class, type):
        raise ContractError("the module defines no class named %r" % (class_name,))
    if type(max_turns) is not int:
        raise ContractError("max_turns must be an int, got %r" % (max_turns,))
    return lambda: EnvDuelsV1Episode(v1_class, max_turns)


class EnvDuelsV1Episode:
    """An envduels-v1 class (the original harness's) behind EnvDuels' contract.

    `Cls(max_turns=)` is made afresh at every reset; `reset(seed=)` returns (observation, info);
    `step` takes the action as `\\boxed{action}` (as the original's solvers send it; an action
    already boxed is sent as it is) and returns (observation, reward, terminated, truncated,
    info). The episode is done when terminated or truncated, and a success when it terminated
    with a positive reward, as the original scores it."""

    def __init__(self, v1_class, max_turns):
        self.v1_class = v1_class
        self.max_steps = max_turns
        self.instance = None

    def reset(self, seed):
        self.instance = self.v1_class(max_turns=self.max_steps)
        reply = self.instance.reset(seed=seed)
        if type(reply) is not tuple or len(reply) != 2:
            raise ContractError("reset(seed=) must return (observation, info), got %s"
                                % type(reply).__name__)
        return reply[0]

    def step(self, action):
        if self.instance is None:
            raise ContractError("step() before reset()")
        boxed = action if "\\boxed{" in action else "\\boxed{" + action + "}"
        reply = self.instance.step(boxed)
        if type(reply) is not tuple or len(reply) != 5:
            raise ContractError("step() must return (observation, reward, terminated, "
                                "truncated, info), got %s" % type(reply).__name__)
        observation, reward, terminated, truncated = reply[:4]
        if type(terminated) is not bool or type(truncated) is not bool:
            raise ContractError("terminated and truncated must be bools")
        if type(reward) not in (int, float, bool) or reward != reward \
                or abs(reward) == INFINITY:
            raise ContractError("reward must be a finite number, got %r" % (reward,))
        return {"observation": observation, "done": terminated or truncated,
                "success": terminated and reward > 0, "reward": float(reward)}


def cache_environment_source(linecache):
    """Give linecache the environment's source, so its tracebacks show the lines."""
    if LOADED_SOURCE:
        source = LOADED_SOURCE[0]
        linecache.cache[ENV_FILENAME] = (len(source), None, source.splitlines(True), ENV_FILENAME)


def describe_error(error):
    """Return the reply `error` object: type, message, kind and the environment's traceback."""
    import linecache
    import traceback

    cache_environment_source(linecache)

    if isinstance(error, MemoryError):
        kind = "memory"
    elif isinstance(error, ObservationTooLarge):
        kind = "output"
    elif isinstance(error, ContractError):
        kind = "contract"
    else:
        kind = "env"
    frames = traceback.extract_tb(error.__traceback__)
    env_frames = [i for i, frame in enumerate(frames) if frame.filename == ENV_FILENAME]
    frames = frames[env_frames[0]:] if env_frames else []
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(error), error)
    text = "".join(lines)
    if len(text) > MAX_TRACEBACK_CHARS:
        text = "..." + text[-MAX_TRACEBACK_CHARS:]
    message = str(error)[:MAX_TRACEBACK_CHARS]
    return {"type": type(error).__name__, "message": message, "kind": kind, "traceback": text}


def safe_describe_error(error):
    """describe_error, even when memory is short (a memory bomb's objects are freed first)."""
    if isinstance(error, MemoryError):
        error.__traceback__ = None
    try:
        return describe_error(error)
    except BaseException:
        kind = "memory" if isinstance(error, MemoryError) else "env"
        return {"type": type(error).__name__, "message": "", "kind": kind, "traceback": ""}


def flush_log():
    # The environment may have replaced or closed sys.stderr; never let that stop a reply.
    try:  # noqa: SIM105 - contextlib would cost an import at start-up
        sys.stderr.flush()
    except BaseException:
        pass


class JsonDecoding:
    """What `make_scanner` reads from its context: the settings of json.loads."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"-Infinity": -INFINITY, "Infinity": INFINITY, "NaN": float("nan")}.__getitem__


def not_serializable(value):
    raise TypeError("Object of type %s is not JSON serializable" % value.__class__.__name__)


def encode(value):
    """json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode(value), for a dict."""
    return "".join(make_encoder({}, not_serializable, encode_string, None, ":", ",", False, False,
                                False)(value, 0))


def step_request(line):
    """(id as JSON, action) when `line` is a step request exactly as the host formats one, else
    None: the general JSON path reads it."""
    if not line.startswith(STEP_PREFIX) or not line.endswith(STEP_SUFFIX):
        return None
    middle = line.find(STEP_MIDDLE, len(STEP_PREFIX))
    action_start = middle + len(STEP_MIDDLE)
    if middle < 0 or action_start > len(line) - len(STEP_SUFFIX):
        return None
    request_id, action = line[len(STEP_PREFIX):middle], line[action_start:-len(STEP_SUFFIX)]
    serial, _dash, number = request_id.partition(b"-")
    if not serial or serial.translate(None, HEX_DIGITS) or not number.isdigit() \
            or action.translate(None, ACTION_BYTES):
        return None
    return '"%s"' % request_id.decode("ascii"), action.decode("ascii")


def write_all(fd, data):
    written = os.write(fd, data)
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        written = os.write(fd, view)
        view = view[written:]


def serve(protocol_in, protocol_out, guest):
    reader = os.fdopen(protocol_in, "rb")
    scan = make_scanner(JsonDecoding)
    os.register_at_fork(after_in_child=lambda: FORKED.append(True))
    while True:
        line = reader.readline()
        if not line:
            return
        request_id = data = None
        try:
            step = step_request(line) if guest.env is not None else None
            if step is not None:  # the hot path: an action without escapes
                id_json, action = step
                request_id = id_json[1:-1]
                data = guest.step_line(id_json, guest.step(action))
            else:
                try:
                    request = scan(line.decode("utf-8"), 0)[0]
                except StopIteration:
                    import json

                    request = json.loads(line)  # raises a ValueError that says what is wrong
                request_id = request.get("id")
                op = request.get("op")
                if op == "step" and guest.env is not None:
                    data = guest.step_line(encode(request_id),
                                           guest.step(str(request["action"])))
                elif op == "close":
                    return
                else:
                    reply = guest.handle(request)
                    reply["ok"] = True
        except BaseException as error:  # the environment may raise anything, even SystemExit
            if FORKED or os.getpid() != MAIN_PID:
                os._exit(0)
            data = None
            reply = {"ok": False, "error": safe_describe_error(error)}
        if FORKED:
            # A child forked by the environment returned into the guest: it must never reply.
            os._exit(0)
        flush_log()
        if data is None:
            reply["id"] = request_id
            try:
                data = encode(reply).encode("ascii") + b"\n"
            except (ValueError, TypeError) as error:
                import json

                reply = {"ok": False, "id": request_id, "error": describe_error(error)}
                data = json.dumps(reply).encode("ascii") + b"\n"
        write_all(protocol_out, data)


def pin_hash_seed():
    """Re-execute this interpreter once with PYTHONHASHSEED=0 unless string hashing is pinned.

    Where the guest starts under `-I` (a Docker image's CMD, whose variables the guest cannot
    vouch for), which ignores every PYTHON* variable, the seed cannot come from the launcher's
    environment; the local launchers set it and start the guest as this re-exec would. The
    second interpreter gets exactly PATH, LANG and the seed, and the options of `-I` but `-E`
    (`-s -P`), plus `-S`. Returns when hashing is pinned, the environment then holding exactly
    PATH, LANG and the seed (bwrap adds PWD); exits when it cannot be pinned (the host then sees
    the sandbox end, never an unpinned guest)."""
    if not sys.flags.hash_randomization:
        for name in set(os.environ) - {"PATH", "LANG", "PYTHONHASHSEED"}:
            del os.environ[name]
        return
    if os.environ.get("PYTHONHASHSEED") == "0":
        sys.stderr.write("envduels guest: PYTHONHASHSEED=0 did not pin string hashing\n")
        os._exit(70)
    original = sys.orig_argv
    # The guest's own text: inline after -c (local backends) or a file (the image's CMD).
    program = ["-c", original[original.index("-c") + 1]] if "-c" in original else [sys.argv[0]]
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
               "PYTHONHASHSEED": "0"}
    os.execve(sys.executable, [sys.executable, "-S", "-s", "-P", *program, *sys.argv[1:]],
              environ)


def main(argv):
    pin_hash_seed()
    numbers = [int(value) for value in argv[1:7]]
    memory_bytes, max_processes, file_bytes, cpu_seconds, max_observation_bytes, seccomp = numbers
    apply_limits(memory_bytes, max_processes, file_bytes, cpu_seconds)
    if seccomp:
        try:
            install_seccomp_filter()
        except OSError as error:
            sys.stderr.write("envduels guest: %s\n" % (error,))
            os._exit(70)
    if os.getpid() == 1:
        become_reaper()
    protocol_in, protocol_out = take_protocol_fds(argv[7] if len(argv) > 7 else None)
    serve(protocol_in, protocol_out, Guest(max_observation_bytes))
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
