"""Harbor agents for the task-folder test, loaded by Harbor's runner in its own virtualenv
(`-a harbor_agents:WrongAgent`): each runs commands in the task's container as the task's agent
user, as a terminal agent would, and writes what they gave to its logs folder."""

import json
import shlex

from harbor.agents.base import BaseAgent


class _Recording(BaseAgent):
    commands: tuple[str, ...] = ()

    @staticmethod
    def name() -> str:
        return "envduels-test"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment) -> None:
        return

    async def run(self, instruction, environment, context) -> None:
        results = []
        for command in self.commands:
            result = await environment.exec(command=command, timeout_sec=120)
            results.append({"command": command, "return_code": result.return_code,
                            "stdout": result.stdout or "", "stderr": result.stderr or ""})
        (self.logs_dir / "commands.json").write_text(json.dumps(results, indent=1))


class WrongAgent(_Recording):
    """Reads the statement, then says a wrong number until the attempt is over."""

    commands = ("play --reset", *(["play 'not the number'"] * 5))


# Python that tries every process's memory and environment; prints the owners of the processes
# it saw and of those it could open.
PEEK = (
    "import json, os\n"
    "seen, opened = set(), set()\n"
    "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
    "    try:\n"
    "        owner = os.stat(f'/proc/{pid}').st_uid\n"
    "    except OSError:\n"
    "        continue\n"
    "    seen.add(owner)\n"
    "    for part in ('mem', 'environ'):\n"
    "        try:\n"
    "            with open(f'/proc/{pid}/{part}', 'rb') as f:\n"
    "                f.read(1)\n"
    "            opened.add(owner)\n"
    "        except OSError:\n"
    "            pass\n"
    "print(json.dumps({'seen': sorted(seen), 'opened': sorted(opened)}))\n"
)


class SnoopAgent(_Recording):
    """Tries to read the design's source, its hints and the record of its own actions."""

    commands = (
        "id -un",
        "cat /opt/envduels/private/design.json",
        "cat /opt/envduels/private/privileged.json",
        "ls /opt/envduels/private",
        "cat /var/lib/envduels/actions.jsonl",
        # Every file it can read that names the marker, or the runtime's own verifier (found).
        "grep -rl -e SECRET-MARKER -e 'def verify' /opt /var /run /home /tmp /etc /root "
        "2>/dev/null; true",
        f"python3 -c {shlex.quote(PEEK)}",
        "play --reset",
    )
