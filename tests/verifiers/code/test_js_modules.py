"""A JavaScript call-based program may be written as a CommonJS module.

The class: the harness loads the program into node's global scope, where `module`,
`exports` and `require` did not exist. A correct program that exported its function
(`module.exports = f`), required a module at its top level, or kept a demo behind
`require.main === module` failed to load, and the reason said only that the run ended
early. Now the program runs with a module of its own (not the main one), the function
is found as a global or among its exports, and a load failure says what failed.
"""

from __future__ import annotations

import pytest

from rlvr.sandboxes.runner.native import without_exports
from tests.verifiers.code.conftest import grade
from tests.verifiers.code.test_formats import needs_node

pytestmark = [pytest.mark.usefixtures("isolated"), needs_node]

CALLS = {"fn_name": "f", "inputs": [[2], [5]], "outputs": [4, 10], "language": "javascript"}
DOUBLE = "function f(x) { return x * 2; }\n"

PROGRAMS = {
    "module_exports_function": DOUBLE + "module.exports = f;\n",
    "module_exports_object": DOUBLE + "module.exports = { f };\n",
    "exports_property": DOUBLE + "exports.f = f;\n",
    "exported_arrow_only": "module.exports = { f: (x) => x * 2 };\n",
    "exported_anonymous_only": "module.exports = function (x) { return x * 2; };\n",
    "require_at_top": "const assert = require('assert');\nconst util = require('util');\n" + DOUBLE,
    "require_main_guard": DOUBLE + "if (require.main === module) {\n  console.log(f(21));\n}\n",
    "filename_and_dirname": "const here = __dirname + '/' + require('path').basename(__filename);\n" + DOUBLE,
    "strict_mode": "'use strict';\n" + DOUBLE + "module.exports = { f };\n",
    "const_arrow": "const f = (x) => x * 2;\nmodule.exports = f;\n",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_module_passes(name: str) -> None:
    out = grade(f"```javascript\n{PROGRAMS[name]}```", CALLS, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_wrong_module_fails(name: str) -> None:
    wrong = PROGRAMS[name].replace("x * 2", "x * 3")
    out = grade(f"```javascript\n{wrong}```", CALLS, timeout_s=10)
    assert out.score == 0.0 and not out.mask, out.reason


@pytest.mark.parametrize(
    ("program", "said"),
    [
        ("throw new Error('boom at load');\n" + DOUBLE, "boom at load"),
        ("function g(x) { return x * 2; }\n", "f is not defined"),
        ("const f = 42;\n", "f is not defined"),
        ("module.exports = { g: (x) => x };\n", "f is not defined"),
        ("require('no-such-module');\n" + DOUBLE, "no-such-module"),
    ],
    ids=["throws", "no_f", "f_not_a_function", "exports_other", "missing_module"],
)
def test_a_load_failure_says_what_failed(program: str, said: str) -> None:
    out = grade(f"```javascript\n{program}```", CALLS, timeout_s=10)
    assert out.score == 0.0 and not out.mask and said in out.reason, out.reason


def test_the_main_guard_does_not_run() -> None:
    """The guarded demo would print; a program that is not the main module never
    reaches it (here it would throw)."""
    program = DOUBLE + "if (require.main === module) {\n  throw new Error('ran as main');\n}\n"
    assert grade(f"```javascript\n{program}```", CALLS, timeout_s=10).score == 1.0


# ES module exports, which node cannot run in a `.js` file: they go, what they export stays.
ESM = {
    "export_function": "export function f(x) { return x * 2; }\n",
    "export_default_function": "export default function f(x) { return x * 2; }\n",
    "export_const_arrow": "export const f = (x) => x * 2;\n",
    "export_list": DOUBLE + "export { f };\n",
    "export_default_name": DOUBLE + "export default f;\n",
    "export_class_and_function": "export class Helper {}\nexport function f(x) { return x * 2; }\n",
}


@pytest.mark.parametrize("name", sorted(ESM))
def test_an_es_module_passes(name: str) -> None:
    out = grade(f"```javascript\n{ESM[name]}```", CALLS, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)
    wrong = grade(f"```javascript\n{ESM[name].replace('x * 2', 'x * 3')}```", CALLS, timeout_s=10)
    assert wrong.score == 0.0 and not wrong.mask, wrong.reason


def test_an_es_module_script_passes() -> None:
    program = "const fs = require('fs');\nexport function main() {\n"
    program += "  console.log(2 * Number(fs.readFileSync(0, 'utf8').trim()));\n}\nmain();\n"
    gt = {"inputs": ["21\n"], "outputs": ["42\n"], "language": "javascript"}
    out = grade(f"```javascript\n{program}```", gt, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


# ES module imports, which node 18 (Debian's, in the image and in CI) runs only from a
# `.mjs` file, and no node runs in the call harness's script: they become requires.
ESM_IMPORTS = {
    "default": "import fs from 'fs';\nconst read = () => fs.readFileSync(0, 'utf8');\n",
    "named": "import { readFileSync } from 'fs';\nconst read = () => readFileSync(0, 'utf8');\n",
    "renamed": "import { readFileSync as rf } from 'fs';\nconst read = () => rf(0, 'utf8');\n",
    "namespace": "import * as fs from 'fs';\nconst read = () => fs.readFileSync(0, 'utf8');\n",
    "node_prefix": "import { readFileSync } from 'node:fs';\nconst read = () => readFileSync(0, 'utf8');\n",
    "multi_line": "import {\n  readFileSync,\n} from 'fs';\nconst read = () => readFileSync(0, 'utf8');\n",
    "default_and_named": "import fs, { readFileSync } from 'fs';\nconst read = () => readFileSync(0, 'utf8');\n",
    "bare_and_named": "import 'util';\nimport { readFileSync as r } from \"fs\";\nconst read = () => `${r(0)}`;\n",
}
ESM_MAIN = "export function main() {\n  console.log(2 * Number(read().trim()));\n}\nmain();\n"


@pytest.mark.usefixtures("code_backend")
@pytest.mark.parametrize("name", sorted(ESM_IMPORTS))
def test_an_es_module_with_imports_passes(name: str) -> None:
    """On both backends: the Docker image's node is Debian's 18, as CI's host's is."""
    gt = {"inputs": ["21\n"], "outputs": ["42\n"], "language": "javascript"}
    out = grade(f"```javascript\n{ESM_IMPORTS[name]}{ESM_MAIN}```", gt, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)
    wrong = grade(f"```javascript\n{ESM_IMPORTS[name]}{ESM_MAIN.replace('2 *', '3 *')}```", gt, timeout_s=10)
    assert wrong.score == 0.0 and not wrong.mask, wrong.reason


@pytest.mark.usefixtures("code_backend")
def test_an_es_module_function_with_an_import_passes() -> None:
    program = (
        "import { strict as assert } from 'assert';\nexport function f(x) {\n  assert.ok(x > 0);\n  return x * 2;\n}\n"
    )
    out = grade(f"```javascript\n{program}```", CALLS, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize(
    ("code", "kept"),
    [
        ("import fs from 'fs';\n", "const fs = require('fs');\n"),
        ('import * as _ from "lodash"\n', 'const _ = require("lodash");\n'),
        ("import { a, b as c } from 'm';\n", "const { a, b: c } = require('m');\n"),
        ("import X, { a } from 'm';\n", "const X = require('m'), { a } = X;\n"),
        ("import X, * as Y from 'm';\n", "const X = require('m'), Y = X;\n"),
        ("import 'm';\n", "require('m');\n"),
        ("import {\n a,\n b\n} from 'm';\nx();\n", "const {\n a,\n b\n} = require('m');\nx();\n"),
        ("import{readFileSync}from'fs'\n", "const {readFileSync} = require('fs');\n"),
        ("  import fs from 'fs';\n", "  import fs from 'fs';\n"),  # not at a line's start: not ours to touch
        ("const s = 'import fs from \"fs\"';\n", "const s = 'import fs from \"fs\"';\n"),
        ("const m = import('m');\n", "const m = import('m');\n"),
        ("importer();\n", "importer();\n"),
        ("import {" + " " * 50_000 + "\n", "import {" + " " * 50_000 + "\n"),
        ("export function f() {}\n", "function f() {}\n"),
        ("  export function f() {}\n", "  export function f() {}\n"),  # not at a line's start: not ours to touch
        ("const s = 'export { f }';\n", "const s = 'export { f }';\n"),
        ("export { f, g as h };\nx();\n", "\nx();\n"),
        ("exports.f = f;\n", "exports.f = f;\n"),
        ("export" + " " * 50_000 + "x\n", "export" + " " * 50_000 + "x\n"),
    ],
)
def test_without_exports(code: str, kept: str) -> None:
    assert without_exports(code) == kept
