"""The task's own helper functions, taken from its prompt instead of the program.

A HumanEval check may call functions that the prompt gives whole, next to the stub
the model completes: `poly` in HumanEval/32, `encode_cyclic` in /38, `encode_shift`
in /50. The program's copy of such a name is the policy's to write: one that
redefines `poly` as `lambda xs, x: 0` makes any `find_zero` pass. So when the ground
truth carries the prompt, the test half runs the prompt's definitions itself, and
the tests see those, never the program's.

What is taken from the prompt: its top-level imports, plain assignments, and every
function or class defined with a body, except the entry point and except stubs (a
body of only a docstring, `pass`, `...` or `raise NotImplementedError`): a stub is
what the model is asked to write, so it comes from the program as before. Nothing
else of the prompt runs (no calls, no `if __name__` blocks).
"""

from __future__ import annotations

import ast
import re
import sys

from rlvr.sandboxes.runner import names
from rlvr.verifiers.code.extract import fenced_blocks
from rlvr.verifiers.turns import without_turn_tokens

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_KEPT = (*_DEFINITIONS, ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)
_PARSE_ERRORS = (SyntaxError, ValueError, MemoryError, RecursionError)


def prompt_module(prompt: str) -> ast.Module:
    """The prompt's Python: the prompt itself if it parses, else its fenced blocks
    that parse, in order (in a prompt rendered through a chat template, a fence the
    template closed with ```` ```<|im_end|> ```` closes there: `without_turn_tokens`),
    else the code it quotes without a fence (`_unfenced_code`). ValueError if it holds
    no Python at all."""
    try:
        return ast.parse(prompt)
    except _PARSE_ERRORS:
        pass
    text = without_turn_tokens(prompt)
    body: list[ast.stmt] = []
    for _tag, block in fenced_blocks(text):
        body.extend(_parsed_or_nothing(block))
    if not body:
        for run in _unfenced_code(text):
            body.extend(_parsed_or_nothing(run))
    if not body:
        raise ValueError("is neither Python nor text with Python in it")
    return ast.Module(body=body, type_ignores=[])


def _parsed_or_nothing(source: str) -> list[ast.stmt]:
    try:
        return ast.parse(source).body
    except _PARSE_ERRORS:
        return []


# The first line of a top-level statement of a prompt's code, quoted without a fence:
# a definition, an import or a name bound to something. Matched at a line's start
# only, in one pass (the prompt is text a reader wrote).
_CODE_LINE = re.compile(
    r"(?:(?:async\s+)?def\s|class\s|@|import\s|from\s+[\w.]+\s+import\s|[A-Za-z_]\w*\s*(?::[^=\n]*)?=[^=])"
)


def _unfenced_code(text: str) -> list[str]:
    """The code a prompt quotes without a fence (`Complete this:`, then HumanEval's
    prompt, then `Answer in one block.`): each stretch of top-level statements that
    look like code (`_CODE_LINE`), with the indented and blank lines under them, cut at
    the first line of prose. A stretch that does not parse as a whole comes statement
    by statement (a decorator with what it decorates), those that parse kept."""
    runs: list[list[str]] = []  # each: one source per statement
    run: list[str] | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip() or line[0] in " \t":
            if run is not None:
                run[-1] += "\n" + line
        elif _CODE_LINE.match(line):
            if run is None:
                run = []
                runs.append(run)
            if run and run[-1].startswith("@") and "\n" not in run[-1]:
                run[-1] += "\n" + line
            else:
                run.append(line)
        else:
            run = None
    pieces: list[str] = []
    for statements in runs:
        whole = "\n".join(statements) + "\n"
        pieces += [whole] if _parsed_or_nothing(whole) else [f"{one}\n" for one in statements]
    return pieces


def trusted_helpers(prompt: str, entry_point: str) -> str:
    """The source the test half runs before the tests (see the module's docstring);
    empty if the prompt defines nothing but the entry point and stubs."""
    kept = [node for node in prompt_module(prompt).body if _kept(node, entry_point)]
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) if kept else ""


def completion_head(prompt: str, entry_point: str) -> str | None:
    """The Python a completion continues (HumanEval's harness runs prompt + completion):
    the prompt itself where it parses, else its fenced Python; None unless it ends with
    the entry point's definition (a stub, or the start of a body: HumanEval/115 imports
    before its docstring), which a body written after it continues."""
    module = prompt_module(prompt)
    last = module.body[-1] if module.body else None
    if not isinstance(last, ast.FunctionDef | ast.AsyncFunctionDef) or last.name != entry_point:
        return None
    try:
        ast.parse(prompt)
    except _PARSE_ERRORS:
        return ast.unparse(module) + "\n"
    return prompt if prompt.endswith("\n") else prompt + "\n"


def task_prompt(prompt: str, entry_point: str, max_chars: int) -> str | None:
    """What of an item's prompt can stand in for a ground truth's missing one, as Python
    source; None unless it is the task's code: at most `max_chars` long, holding Python
    (itself, or in fenced blocks) that defines `entry_point` at its top level as a stub
    to complete (a prompt holding an implementation would make any completion pass).

    A prompt is the trainer's, not the policy's, but written for a reader: of its code
    only what defines the task is kept (definitions, imports of the standard library,
    names bound to literals), never an example of use (`result = f(3)`, `print(...)`,
    `from solution import f`), which would run before the program and fail it."""
    if len(prompt) > max_chars or entry_point not in prompt:
        return None
    try:
        module = prompt_module(prompt)
    except _PARSE_ERRORS:  # ValueError included: no Python at all
        return None
    kept = [node for node in module.body if _task_statement(node)]
    stubs = [node for node in kept if isinstance(node, _FUNCTIONS) and node.name == entry_point]
    if len(stubs) != 1 or not _open_stub(stubs[0]):
        return None
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n"


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _task_statement(node: ast.stmt) -> bool:
    """A statement of a prompt's code that defines the task (`task_prompt`)."""
    if isinstance(node, _DEFINITIONS):
        return True
    if isinstance(node, ast.Import):
        return all(alias.name.split(".")[0] in sys.stdlib_module_names for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and (node.module or "").split(".")[0] in sys.stdlib_module_names
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        try:
            ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return all(isinstance(target, ast.Name) for target in targets)
    return False


def _open_stub(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A definition the model is to complete: its body only a docstring, placeholders
    and imports (HumanEval/115 imports before its docstring)."""
    return all(_is_docstring(s) or _placeholder(s) or isinstance(s, ast.Import | ast.ImportFrom) for s in node.body)


def _kept(node: ast.stmt, entry_point: str) -> bool:
    if not isinstance(node, _KEPT):
        return False
    if isinstance(node, _DEFINITIONS):
        return node.name != entry_point and not _stub(node)
    if isinstance(node, ast.Import | ast.ImportFrom):
        return True
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return all(isinstance(target, ast.Name) and target.id != entry_point for target in targets)


def _stub(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    body = node.body
    if body and _is_docstring(body[0]):
        body = body[1:]
    return all(_placeholder(statement) for statement in body)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _placeholder(node: ast.stmt) -> bool:
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node.value.value is Ellipsis:
        return True
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def names_from_program(test: str, entry_point: str, given: str = "") -> list[str]:
    """The names a check reads that only the program can give it: neither the entry
    point nor anything a trusted source gives (`rlvr.sandboxes.runner.names`: builtins,
    modules, the tests' pre-imports, and what `given`, the helpers taken from the
    task's prompt, binds). Each is one the program could redefine, so a grade that rests
    on them is reported as such."""
    sources = [(given, "setup.py")] if given else []
    sources.append((f"{test}\n\ncheck({entry_point})\n", "test.py"))
    return names.untrusted_reads(sources, entry_point, is_module=_is_module)


def assert_names(sources: list[tuple[str, str]]) -> tuple[str | None, list[str]]:
    """An assert suite's entry point (`names.assert_entry`) and the other names its
    tests (and setup: `sources`) take from the program, as `names_from_program`."""
    entry = names.assert_entry(sources, _is_module)
    return entry, names.untrusted_reads(sources, entry, is_module=_is_module)


def _is_module(name: str) -> bool:
    """A module the test half has: one of the standard library's, or one this process
    finds (the jobs' path is the service's, checked)."""
    return name in sys.stdlib_module_names or names.has_module(name)
