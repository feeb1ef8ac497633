"""How long a test waits for something that must happen: a hang guard, not a speed limit.

The tests run on machines shared with other work, where a step can take tens of
times longer than on an idle one. A wait for an event that will come is therefore
bounded by `HANG`: the bound only turns a hang into a failure, and a passing test
never comes near it (it waits for the event itself, not for the bound). No test
asserts how long something took; where it means something, one asserts that a timer
did not fire early, which no load can break.
"""

from __future__ import annotations

#: Seconds to wait for what must happen (an event, a process's end, a thread's exit).
HANG = 60.0
#: Seconds to wait for a server process to start (interpreter, imports, listen or
#: answer its first message): the heaviest step a loaded machine stretches. An SDK
#: server takes about 1.2 s of CPU to start; several start at once, and at a load
#: average near 27 on two cores two of them did not listen within 60 s.
START = 300.0
