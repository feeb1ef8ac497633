"""Run the fenced blocks of a Markdown page the way docs/snippets.md says.

A page's blocks run in order in one scratch directory, which links to every
top-level entry of the repository (so `make demo` and `python
fuzz/atheris_server.py` work as in a checkout) and collects the page's
`file=` blocks (so `python -m mcp_adapters run server.py` finds server.py).
`python` is this interpreter. Servers a page starts are stopped with Ctrl-C
when the page ends, and must exit cleanly.

The ports the pages use (8000, 8765, 9000) are replaced with free ones, the
same on the whole page, so pages can run side by side.
"""

from __future__ import annotations

import os
import re
import select
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The ports written in the pages; each gets a free port of its own per page.
DOCUMENTED_PORTS = (8000, 8765, 9000)
#: Hang guards, not measurements.
COMMAND_TIMEOUT = 300.0
START_TIMEOUT = 60.0

RUNNABLE = {"python": "python", "py": "python", "sh": "sh", "bash": "sh", "shell": "sh"}
ATTRIBUTES = {"file", "fragment", "norun", "output"}
NETWORK_TRANSPORTS = {"http", "streamable-http", "ws", "websocket", "tcp"}
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)\s*(.*)$")
_SERVING = re.compile(r"serving .+ on (\S+)$")
_CLIENT = re.compile(r"""Client\((["'])(.+?)\1\)""")


class SnippetError(AssertionError):
    """A block broke the convention or failed; the message names page and line."""


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    attrs: dict[str, str]
    text: str

    @property
    def kind(self) -> str | None:
        return RUNNABLE.get(self.lang)

    def where(self) -> str:
        return f"{self.page.name}:{self.line}"


def parse(page: Path) -> list[Block]:
    """Every fenced block of `page`, with the attributes of its info string."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if opened is None:
            index += 1
            continue
        fence, lang, rest = opened.groups()
        end = index + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        if end == len(lines):
            raise SnippetError(f"{page.name}:{index + 1}: the block is never closed")
        attrs: dict[str, str] = {}
        for token in shlex.split(rest):
            key, _, value = token.partition("=")
            if key not in ATTRIBUTES:
                raise SnippetError(f"{page.name}:{index + 1}: unknown block attribute {key!r}")
            attrs[key] = value
        body = "\n".join(lines[index + 1 : end])
        blocks.append(Block(page, index + 1, lang.lower(), attrs, body + "\n" if body else ""))
        index = end + 1
    return blocks


def check(blocks: list[Block], root: Path = ROOT) -> None:
    """The convention, before anything runs: every block is run, compared, or excused."""
    for position, block in enumerate(blocks):
        later = "".join(b.text for b in blocks[position + 1 :])
        if "output" in block.attrs:
            previous = _previous_runnable(blocks, position)
            if previous is None or "norun" in previous.attrs or "file" in previous.attrs:
                raise SnippetError(f"{block.where()}: an output block follows no block that runs")
        if block.kind is None:
            if set(block.attrs) - {"output"}:
                raise SnippetError(f"{block.where()}: only python and sh blocks take attributes")
            continue
        if "norun" in block.attrs and not block.attrs["norun"].strip():
            raise SnippetError(f'{block.where()}: norun needs its reason: norun="..."')
        if "file" in block.attrs:
            name = block.attrs["file"]
            module = name.removesuffix(".py").replace("/", ".")
            if not name or not (name in later or re.search(rf"\b{re.escape(module)}\b", later)):
                raise SnippetError(
                    f"{block.where()}: file={name} is used by no later block of the page"
                )
        if "fragment" in block.attrs:
            _check_fragment(blocks, position, root)


def _previous_runnable(blocks: list[Block], position: int) -> Block | None:
    for block in reversed(blocks[:position]):
        if block.kind is not None:
            return block
    return None


def _check_fragment(blocks: list[Block], position: int, root: Path) -> None:
    """Every non-blank line of a fragment appears, in order, in its complete example."""
    block = blocks[position]
    name = block.attrs["fragment"]
    files = {b.attrs["file"]: b.text for b in blocks if "file" in b.attrs}
    if name in files:
        whole = files[name]
    elif (root / name).is_file():
        whole = (root / name).read_text(encoding="utf-8")
    else:
        raise SnippetError(f"{block.where()}: fragment={name}: no such example")
    remaining = iter(line.rstrip() for line in whole.splitlines())
    for line in block.text.splitlines():
        if line.strip() and not any(line.rstrip() == candidate for candidate in remaining):
            raise SnippetError(f"{block.where()}: fragment line not in {name} (in order): {line}")


# ------------------------------------------------------------------- running


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    """A command a page starts that keeps running: stopped when the page ends."""

    command: str
    process: subprocess.Popen[str]
    where: str
    stderr: list[str] = field(default_factory=list)
    url: str | None = None
    #: How its reader stops it: Ctrl-C for a server in the foreground, `kill %1`
    #: (SIGTERM) for a job in the background, which may die of it.
    background: bool = False
    _reader: threading.Thread | None = None

    def wait_serving(self) -> str:
        assert self.process.stderr is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stderr], [], [], 0.5)
            if ready:
                line = self.process.stderr.readline()
                if not line:
                    break
                self.stderr.append(line)
                found = _SERVING.search(line.rstrip())
                if found:
                    self.url = found.group(1)
                    self._drain()
                    return self.url
            elif self.process.poll() is not None:
                break
        raise SnippetError(
            f"{self.where}: `{self.command}` never said where it serves:\n" + "".join(self.stderr)
        )

    def _drain(self) -> None:
        """Keep reading stderr, so a chatty server never blocks on a full pipe."""
        stream = self.process.stderr
        assert stream is not None

        def read() -> None:
            for line in stream:
                self.stderr.append(line)

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()

    def stop(self) -> None:
        """Stop it as its reader would; a server must then exit with status 0."""
        stop_with = signal.SIGTERM if self.background else signal.SIGINT
        if self.process.poll() is None:
            self.process.send_signal(stop_with)
        try:
            self.process.wait(COMMAND_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise SnippetError(f"{self.where}: `{self.command}` did not stop on Ctrl-C") from None
        if self._reader is not None:
            self._reader.join(COMMAND_TIMEOUT)
        else:
            assert self.process.stderr is not None
            self.stderr.append(self.process.stderr.read())
        errors = "".join(self.stderr)
        accepted = (0, -stop_with) if self.background else (0,)
        if self.process.returncode not in accepted or "Traceback" in errors:
            raise SnippetError(
                f"{self.where}: `{self.command}` ended with {self.process.returncode}:\n{errors}"
            )


class PageRun:
    """Runs one page's blocks in order (see the module docstring)."""

    def __init__(self, page: Path, scratch: Path, root: Path = ROOT) -> None:
        self.page = page
        self.scratch = scratch
        self.root = root
        self.ports = {port: free_port() for port in DOCUMENTED_PORTS}
        self.servers: list[Server] = []
        self.env = dict(os.environ)
        self.env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), self.env["PATH"]])
        self.env.pop("PYTHONPATH", None)
        for entry in root.iterdir():
            if entry.name not in (".git",) and not (scratch / entry.name).exists():
                (scratch / entry.name).symlink_to(entry)

    def localize(self, text: str) -> str:
        """The documented ports replaced with this page's free ones."""
        return re.sub(
            r"(?<![\d.])(" + "|".join(map(str, self.ports)) + r")(?!\d)",
            lambda m: str(self.ports[int(m.group(1))]),
            text,
        )

    def run(self) -> int:
        """Run every block; the number of blocks run or checked."""
        blocks = parse(self.page)
        check(blocks, self.root)
        done = 0
        try:
            for position, block in enumerate(blocks):
                if block.kind is None or "norun" in block.attrs or "fragment" in block.attrs:
                    if block.kind == "sh" and "norun" in block.attrs:
                        self._syntax(block)
                    continue
                if "file" in block.attrs:
                    (self.scratch / block.attrs["file"]).write_text(self.localize(block.text))
                    continue
                output = self._python(block) if block.kind == "python" else self._sh(block)
                following = blocks[position + 1] if position + 1 < len(blocks) else None
                if following is not None and "output" in following.attrs:
                    expected = self.localize(following.text)
                    if output.rstrip() != expected.rstrip():
                        raise SnippetError(
                            f"{following.where()}: the output block does not match what "
                            f"{block.where()} prints:\n--- printed\n{output}--- documented\n"
                            f"{expected}"
                        )
                done += 1
        finally:
            servers, self.servers = self.servers, []
            errors = []
            for server in servers:
                try:
                    server.stop()
                except SnippetError as exc:
                    errors.append(str(exc))
            if errors:
                raise SnippetError("\n".join(errors))
        return done

    def _completed(self, block: Block, argv: list[str], what: str) -> str:
        done = subprocess.run(
            argv,
            cwd=self.scratch,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
        if done.returncode != 0:
            raise SnippetError(
                f"{block.where()}: {what} exited with {done.returncode}\n--- stdout\n"
                f"{done.stdout}--- stderr\n{done.stderr}"
            )
        return done.stdout

    def _python(self, block: Block) -> str:
        script = self.scratch / f"snippet_{block.page.stem}_{block.line}.py"
        script.write_text(self.localize(block.text))
        return self._completed(block, ["python", script.name], "the program")

    def _syntax(self, block: Block) -> None:
        self._completed(block, ["bash", "-n", "-c", block.text], "bash -n")

    def _sh(self, block: Block) -> str:
        output = []
        for written, comment in _commands(block.text):
            server = _serve_command(written)
            command = self.localize(written)
            if server is not None:
                self._serve(block, self.localize(server), self.localize(comment))
            elif command.endswith("&"):
                self._background(block, command.rstrip("& "))
            else:
                output.append(
                    self._completed(
                        block, ["bash", "-e", "-o", "pipefail", "-c", command], f"`{command}`"
                    )
                )
        return "".join(output)

    def _start(self, block: Block, command: str) -> Server:
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=self.scratch,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        server = Server(command, process, block.where())
        self.servers.append(server)
        return server

    def _serve(self, block: Block, command: str, comment: str) -> None:
        """A `python -m mcp_adapters run` on a network transport: it serves until the
        page ends; the `Client("...")` of its comment must reach it."""
        server = self._start(block, command)
        url = server.wait_serving()
        target = _CLIENT.search(comment)
        if target is not None:
            try:
                tools = _list_tools(target.group(2))
            except Exception as exc:
                raise SnippetError(
                    f"{block.where()}: {target.group(0)} cannot reach `{command}` "
                    f"(serving on {url}): {exc}"
                ) from exc
            if not tools:
                raise SnippetError(f"{block.where()}: {target.group(0)} found no tools at {url}")

    def _background(self, block: Block, command: str) -> None:
        """`command &`: it runs until the page ends; the ports it names must open."""
        server = self._start(block, command)
        server.background = True
        ports = [int(p) for p in re.findall(r"(?<!\d)(\d{4,5})(?!\d)", command)]
        deadline = time.monotonic() + START_TIMEOUT
        for port in ports:
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    if server.process.poll() is not None or time.monotonic() > deadline:
                        server._drain()
                        raise SnippetError(
                            f"{block.where()}: `{command}` never opened {port}"
                        ) from None
                    time.sleep(0.05)
        server._drain()


def _commands(text: str) -> list[tuple[str, str]]:
    """A sh block's commands (continuations joined), each with its trailing comment."""
    commands: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = pending + raw
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command, comment = _split_comment(line)
        commands.append((command.strip(), comment))
    return commands


def _split_comment(line: str) -> tuple[str, str]:
    """Split off a trailing `# comment` (outside quotes), as bash would."""
    quote: str | None = None
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index], line[index + 1 :]
    return line, ""


def _serve_command(command: str) -> str | None:
    """The command, if it serves MCP on a network; with the default port (8000) written
    out when it has none, so that the page's free port replaces it."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[:4] != ["python", "-m", "mcp_adapters", "run"]:
        return None
    transport = "stdio"
    for flag in ("--transport", "-t"):
        if flag in words[:-1]:
            transport = words[words.index(flag) + 1]
    if transport not in NETWORK_TRANSPORTS:
        return None
    if "--port" not in words and "-p" not in words:
        return f"{command} --port 8000"
    return command


def _list_tools(target: str) -> list[str]:
    import anyio

    from mcp_adapters import Client

    async def names() -> list[str]:
        with anyio.fail_after(START_TIMEOUT):
            async with Client(target) as client:
                return [tool.name for tool in (await client.list_tools()).tools]

    return anyio.run(names)


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


__all__ = ["Block", "PageRun", "SnippetError", "check", "pages", "parse"]
