"""rlvr.trainer.verl_tools.RlvrPythonTool driven by verl's (0.9.1) own multi-turn machinery,
against a real `rlvr serve`: the tool config loaded by verl's tool registry from
examples/verl/python_tool.yaml; canned assistant turns whose tool calls verl's hermes
parser reads, run through the tool's lifecycle (one instance per trajectory); and verl's
`ToolAgentLoop` itself (one instance per call, the session kept per trajectory) with a
canned engine.

verl's agent loop package needs `cachetools` (verl's `verl-core` extra, not in our
`compat` extra): without it the `ToolAgentLoop` tests skip, and the hermes parser is
loaded from its own file, which does not need it.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import json
import string
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.compat.needs import need

need("verl", "omegaconf", "torch")

import verl  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402
from verl.tools.tool_registry import initialize_tools_from_config  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from rlvr.client import AsyncRewardClient, SessionNotFound  # noqa: E402
from rlvr.trainer.verl_tools import DEFAULT_TOOL_SCHEMA, RlvrPythonTool, cap, render  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "verl" / "python_tool.yaml"
CALL_TIMEOUT_S = 2.0
# Each message as `<|role|>content`: plain characters, so that token-level prefix diffs
# (verl's Continuous Token builder) line up.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def char_tokenizer() -> PreTrainedTokenizerFast:
    """One token per printable character: code and JSON survive encode and decode."""
    vocab = {tok: i for i, tok in enumerate(["<pad>", "<eos>", "<unk>", *sorted(set(string.printable))])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


TOKENIZER = char_tokenizer()
HAS_AGENT_LOOP = importlib.util.find_spec("cachetools") is not None
needs_agent_loop = pytest.mark.skipif(
    not HAS_AGENT_LOOP, reason="verl's agent loop needs cachetools (verl[verl-core]), not in the compat extra"
)


def hermes_parser() -> Any:
    """verl's hermes ToolParser; from its own file where its package (the whole agent
    loop) cannot be imported."""
    if HAS_AGENT_LOOP:
        from verl.experimental.agent_loop.tool_parser import ToolParser
    else:
        path = Path(verl.__file__).parent / "experimental" / "agent_loop" / "tool_parser.py"
        spec = importlib.util.spec_from_file_location("verl_tool_parser", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        ToolParser = module.ToolParser
    return ToolParser.get_tool_parser("hermes", TOKENIZER)


def call(*codes: str, say: str = "Let me run that.") -> str:
    """An assistant turn with one hermes tool call per code."""
    calls = "".join(
        f"<tool_call>{json.dumps({'name': 'code_interpreter', 'arguments': {'code': c}})}</tool_call>" for c in codes
    )
    return say + "\n" + calls


class CannedEngine:
    """verl's server manager, answering each generate with the next canned turn; it keeps
    the prompts it saw (the tool's text, as the model reads it). `before` may await
    something before a turn is answered (to interleave trajectories)."""

    def __init__(self, turns: list[str], before: dict[int, Callable[[], Awaitable[None]]] | None = None) -> None:
        self.turns = list(turns)
        self.before = before or {}
        self.prompts: list[str] = []

    async def generate(self, *, prompt_ids: list[int], **kwargs: Any) -> TokenOutput:
        turn = len(self.prompts)
        self.prompts.append(TOKENIZER.decode(prompt_ids))
        if turn in self.before:
            await self.before[turn]()
        return TokenOutput(token_ids=TOKENIZER.encode(self.turns[turn], add_special_tokens=False))

    def tool_text(self, turn: int) -> str:
        """What the tools answered to assistant turn `turn` (0-based): the prompt's tail
        after that turn, up to the next generation prompt."""
        after = self.prompts[turn + 1][len(self.prompts[turn]) :]
        return after.split("<|tool|>", 1)[1].rsplit("<|assistant|>", 1)[0]


class Rollout:
    """A trajectory as a rollout worker runs a tool: an instance created at its start and
    released at its end, each canned assistant turn's tool calls read by verl's hermes
    parser and executed in order. `turn` returns the texts the model would read."""

    parser = hermes_parser()

    def __init__(self, tools: list[Any]) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.instances: dict[str, str] = {}

    async def __aenter__(self) -> Rollout:
        for name, tool in self.tools.items():
            self.instances[name], _ = await tool.create()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for name, instance in self.instances.items():
            await self.tools[name].release(instance)

    async def turn(self, text: str) -> list[str]:
        ids = TOKENIZER.encode(text, add_special_tokens=False)
        schemas = [tool.tool_schema for tool in self.tools.values()]
        _, calls = await self.parser.extract_tool_calls(ids, schemas)
        texts = []
        for function_call in calls:
            tool = self.tools[function_call.name]
            response, reward, _ = await tool.execute(self.instances[tool.name], json.loads(function_call.arguments))
            assert reward == 0.0
            texts.append(response.text)
        return texts

    def session_id(self) -> str:
        [tool] = self.tools.values()
        session_id = tool._instances[self.instances[tool.name]].id
        assert session_id is not None
        return str(session_id)


def agent_loop(tools: list[Any], engine: CannedEngine, parallel_calls: int = 1) -> Any:
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop

    config = OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {
                    "prompt_length": 4096,
                    "response_length": 65536,
                    "full_determinism": False,
                    "multi_turn": {
                        "max_user_turns": None,
                        "max_assistant_turns": 20,
                        "max_parallel_calls": parallel_calls,
                        "max_tool_response_length": 100000,
                        "tool_response_truncate_side": "middle",
                        "format": "hermes",
                    },
                }
            },
            "data": {"apply_chat_template_kwargs": {}, "mm_processor_kwargs": {}},
        }
    )
    return ToolAgentLoop(
        trainer_config=DictConfigWrap(config),
        server_manager=engine,
        tokenizer=TOKENIZER,
        processor=None,
        dataset_cls=None,
        data_config=DictConfigWrap(config.data),
        tools=ToolListWrap(tools),
    )


async def trajectory(tools: list[Any], engine: CannedEngine, parallel_calls: int = 1) -> None:
    prompt = [{"role": "user", "content": "Compute something with Python."}]
    await agent_loop(tools, engine, parallel_calls).run({}, raw_prompt=prompt)
    assert len(engine.prompts) == len(engine.turns), "the loop ended early"


@pytest.fixture
def prefix() -> str:
    return f"test-{uuid.uuid4().hex[:8]}-"


@pytest.fixture
def tool_config(tmp_path: Path, live_server: str, prefix: str) -> Path:
    """The example config, pointed at the test's server, with a short call timeout."""
    config = OmegaConf.load(EXAMPLE)
    config.tools[0].config.url = live_server
    config.tools[0].config.timeout_s = CALL_TIMEOUT_S
    config.tools[0].config.tag_prefix = prefix
    path = tmp_path / "tools.yaml"
    OmegaConf.save(config, path)
    return path


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """(tag, id) of every session the client opens."""
    seen: list[tuple[str, str]] = []
    original = AsyncRewardClient.open_session

    async def open_session(self: AsyncRewardClient, tag: str = "", **limits: Any) -> str:
        session_id = await original(self, tag, **limits)
        seen.append((tag, session_id))
        return session_id

    monkeypatch.setattr(AsyncRewardClient, "open_session", open_session)
    yield seen


async def gone(client: AsyncRewardClient, session_id: str, within_s: float = 10.0) -> bool:
    """Whether the session ends within `within_s`, probed without ending it."""
    deadline = asyncio.get_running_loop().time() + within_s
    while asyncio.get_running_loop().time() < deadline:
        try:
            await client.run_in_session(session_id, "None")
        except SessionNotFound:
            return True
        await asyncio.sleep(0.1)
    return False


def test_verl_loads_the_example_config_as_it_is(live_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLVR_URL", live_server)
    [tool] = initialize_tools_from_config(str(EXAMPLE))
    assert isinstance(tool, RlvrPythonTool)
    assert tool.url == live_server and tool.name == "code_interpreter" and tool.timeout_s == 30
    assert tool.tool_schema.model_dump(exclude_none=True) == {
        **DEFAULT_TOOL_SCHEMA,
        "function": {**DEFAULT_TOOL_SCHEMA["function"], "strict": False},
    }
    # Without a tool_schema, the same default.
    assert RlvrPythonTool({"type": "native"}, None).tool_schema == tool.tool_schema


def test_a_trajectory_keeps_its_state_between_calls(tool_config: Path, live_server: str, prefix: str) -> None:
    [tool] = initialize_tools_from_config(str(tool_config))

    async def run() -> list[list[str]]:
        client = AsyncRewardClient(live_server)
        async with Rollout([tool]) as rollout:
            texts = [await rollout.turn(call("import os\nx = 6 * 7\nprint('x is set')\nx"))]
            texts.append(await rollout.turn(call("open('/tmp/notes.txt', 'w').write(f'x={x}')")))
            texts.append(await rollout.turn(call("print(x + 1)\nopen('/tmp/notes.txt').read()")))
            texts.append(await rollout.turn(call("undefined_name + 1", say="")))
            texts.append(await rollout.turn(call("import sys, time\nprint('sleeping')\ntime.sleep(60)")))
            texts.append(
                await rollout.turn(call("print('warned', file=sys.stderr)\nx, os.path.exists('/tmp/notes.txt')"))
            )
            texts.append(await rollout.turn("The answer is 42."))  # no tool call
            session_id = rollout.session_id()
        # Released: the session is gone.
        with pytest.raises(SessionNotFound) as err:
            await client.end_session(session_id)
        assert err.value.status == 404 and err.value.code == "session_not_found"
        assert await client.end_sessions(prefix) == 0
        await client.aclose()
        return texts

    texts = asyncio.run(run())
    assert texts[:3] == [["x is set\nOut: 42"], ["Out: 4"], ["43\nOut: 'x=42'"]]
    [error] = texts[3]
    assert error.startswith("Traceback") and error.endswith("NameError: name 'undefined_name' is not defined")
    [timeout] = texts[4]
    assert timeout.startswith("sleeping\nTimeoutError: the call ran past 2 s and was interrupted")
    assert "session goes on" in timeout
    assert texts[5:] == [["warned\nOut: (42, True)"], []]


def test_trajectories_do_not_see_each_others_state(tool_config: Path) -> None:
    [tool] = initialize_tools_from_config(str(tool_config))
    look = "import os\nprint(globals().get('secret'), os.listdir('/tmp'))"

    async def run() -> list[list[str]]:
        async with Rollout([tool]) as a, Rollout([tool]) as b:
            return [
                await a.turn(call("secret = 'alpha'\nopen('/tmp/alpha.txt', 'w').write(secret)")),
                await b.turn(call(look)),
                await b.turn(call("secret = 'beta'\nopen('/tmp/beta.txt', 'w').write(secret)")),
                await a.turn(call(look)),
                await b.turn(call(look)),
            ]

    texts = asyncio.run(run())
    assert texts[1:] == [["None []"], ["Out: 4"], ["alpha ['alpha.txt']"], ["beta ['beta.txt']"]]


@needs_agent_loop
def test_verls_tool_agent_loop_keeps_a_session_per_trajectory(
    tool_config: Path, live_server: str, opened: list[tuple[str, str]], prefix: str
) -> None:
    """verl 0.9.1's loop creates and releases an instance around every call; the session
    is the trajectory's, and ends once the trajectory is done."""
    tools = initialize_tools_from_config(str(tool_config))
    engine = CannedEngine(
        [
            call("import os\nx = 6 * 7\nprint('x is set')\nx"),
            call("open('/tmp/notes.txt', 'w').write(f'x={x}')"),
            call("1/0"),
            call("import time\ntime.sleep(60)"),
            call("print(x + 1)\nopen('/tmp/notes.txt').read()"),
            # Two calls in one turn (verl runs them at once) take turns in the one session.
            call("import time\ntime.sleep(0.3)\na = 1", "b = 2"),
            call("print(a + b)"),
            "The answer is 42.",
        ]
    )

    async def run() -> None:
        await trajectory(tools, engine, parallel_calls=2)
        gc.collect()  # the trajectory's AgentData is gone: its session ends
        assert len(opened) == 1
        tag, session_id = opened[0]
        assert tag.startswith(prefix)
        client = AsyncRewardClient(live_server)
        assert await gone(client, session_id)
        with pytest.raises(SessionNotFound):
            await client.end_session(session_id)
        await client.aclose()

    asyncio.run(run())
    assert engine.tool_text(0) == "x is set\nOut: 42\n"
    assert engine.tool_text(1) == "Out: 4\n"
    assert "ZeroDivisionError: division by zero" in engine.tool_text(2)
    assert engine.tool_text(3).startswith("TimeoutError: the call ran past 2 s")
    assert engine.tool_text(4) == "43\nOut: 'x=42'\n"
    assert engine.tool_text(5) == "(no output)\n<|tool|>(no output)\n"
    assert engine.tool_text(6) == "3\n"


@needs_agent_loop
def test_verls_concurrent_trajectories_do_not_see_each_others_state(
    tool_config: Path, opened: list[tuple[str, str]]
) -> None:
    tools = initialize_tools_from_config(str(tool_config))

    def turns(name: str) -> list[str]:
        return [
            call(f"secret = {name!r}\nopen('/tmp/mine.txt', 'w').write(secret)"),
            call("print(secret, open('/tmp/mine.txt').read())"),
            "done",
        ]

    async def run() -> tuple[CannedEngine, CannedEngine]:
        both_wrote = asyncio.Barrier(2)
        # Each reads only once both have written.
        a = CannedEngine(turns("alpha"), before={1: both_wrote.wait})
        b = CannedEngine(turns("beta"), before={1: both_wrote.wait})
        await asyncio.gather(trajectory(tools, a), trajectory(tools, b))
        return a, b

    a, b = asyncio.run(run())
    assert a.tool_text(1) == "alpha alpha\n"
    assert b.tool_text(1) == "beta beta\n"
    assert len({session_id for _, session_id in opened}) == 2


def test_a_lost_session_is_replaced_with_a_note(tool_config: Path, live_server: str, prefix: str) -> None:
    [tool] = initialize_tools_from_config(str(tool_config))

    async def run() -> None:
        instance, _ = await tool.create()
        await tool.execute(instance, {"code": "z = 1"})
        client = AsyncRewardClient(live_server)
        assert await client.end_sessions(prefix) == 1  # ended behind the tool's back
        response, _, metrics = await tool.execute(instance, {"code": "z"})
        assert response.text.startswith("[Note: the earlier Python session is gone (it ended or expired)")
        assert "NameError" in response.text and metrics["new_session"] is True
        response, _, metrics = await tool.execute(instance, {"code": "import os\nos._exit(3)"})
        assert "The Python session was killed: its code ended the interpreter" in response.text
        assert metrics["status"] == "killed"
        response, _, metrics = await tool.execute(instance, {"code": "'back'"})
        assert response.text.startswith("[Note: the earlier Python session is gone (its code ended the interpreter)")
        assert response.text.endswith("Out: 'back'") and metrics["new_session"] is True
        response, _, metrics = await tool.execute(instance, {"code": "'still'"})
        assert response.text == "Out: 'still'" and metrics["new_session"] is False
        await tool.release(instance)
        assert await client.end_sessions(prefix) == 0
        await client.aclose()

    asyncio.run(run())


def test_the_model_gets_text_never_an_exception(tool_config: Path) -> None:
    [tool] = initialize_tools_from_config(str(tool_config))
    down = RlvrPythonTool({"type": "native", "url": "http://127.0.0.1:9", "retry_budget_s": 0}, None)

    async def run() -> None:
        instance, _ = await tool.create()
        response, reward, metrics = await tool.execute(instance, {"cmd": "print(1)"})
        assert response.text.startswith("Error: call code_interpreter with `code`") and reward == 0.0
        response, _, _ = await tool.execute(instance, {"code": "print('a' * 100_000)"})
        assert len(response.text) <= tool.max_output_chars and "characters cut" in response.text
        assert response.text.endswith("[... stdout cut: the call wrote 100001 bytes]")
        await tool.release(instance)
        instance, _ = await down.create()
        response, _, metrics = await down.execute(instance, {"code": "1"})
        assert response.text.startswith("Error: the Python sandbox failed this call (ConnectError")
        assert metrics == {"status": "unavailable"}
        await down.release(instance)

    asyncio.run(run())


def test_a_config_with_a_typo_or_no_url_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RLVR_URL", raising=False)
    with pytest.raises(ValueError, match="needs the rlvr service's address"):
        RlvrPythonTool({"type": "native"}, None)
    with pytest.raises(ValueError, match=r"unknown config keys \['timeout'\]"):
        RlvrPythonTool({"type": "native", "url": "http://x", "timeout": 5}, None)
    with pytest.raises(ValueError, match="timeout_s must be in"):
        RlvrPythonTool({"type": "native", "url": "http://x", "timeout_s": 301}, None)


def result(**fields: Any) -> Any:
    base = {
        "status": "ok",
        "stdout": "",
        "stderr": "",
        "value": None,
        "error": None,
        "traceback": None,
        "limit": None,
        "execution_time": 0.0,
        "stdout_bytes": 0,
        "stderr_bytes": 0,
    }
    return {**base, **fields}


def test_results_read_like_a_notebook_cell() -> None:
    assert render(result(), 30, 4000) == "(no output)"
    assert render(result(stdout="a\n", stdout_bytes=2, stderr="w\n", stderr_bytes=2, value="3"), 30, 4000) == (
        "a\nw\nOut: 3"
    )
    assert render(result(status="error", error="E: x", traceback="Traceback...\nE: x\n"), 30, 4000) == (
        "Traceback...\nE: x"
    )
    assert "ran past 1.5 s" in render(result(status="timeout"), 1.5, 4000)
    assert "ran out of memory" in render(result(status="killed", limit="memory"), 30, 4000)
    text = cap("x" * 10_000, 1000)
    assert len(text) <= 1000 and text.startswith("x" * 600) and "characters cut" in text
