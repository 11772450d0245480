"""The setter's seat over OpenEnv (`manage.py serve_envs --role setter`): the solver seat's
server (openenv_server.py), whose episode is one setter answer.

`reset` (`data`: optional `digests`, a list of earlier environments by uuid or design-hash
prefix, for an observe-mode prompt) answers the observation `{"prompt": [messages], "text"
(the user turn), "solvers", "seeds", "digests"}`; `step` takes `{"action": "<the whole setter
answer>"}` and answers with `reward` = the answer's setter score, `done` true, and the
measurement in the observation and in `metadata` (`valid`, `reason`, `setter_score`,
`p_unhinted`, `p_hinted`, `design`, `solvers` with each solver's figures and plays,
`solver_calls`). An answer that cannot be read or is invalid scores 0 with the reason; a fault
of the infrastructure (a solver's provider down, no sandbox, the cost cap spent) is an error
frame (`EXECUTION_ERROR`), never a reward. A stateless `POST /step` with `{"action",
"digests"?}` scores an answer in one request (what the verifiers taskset sends).

The seat itself (prompt, validation, the solvers' plays, the score) is the object passed in:
`duels.engine.setter_seat.SetterSeat`. Anything it raises is reported as an error.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from duels.trainers.openenv_server import (
    EnvServer,
    EnvSession,
    ServedDesign,
    SessionError,
)

logger = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 128 * 1024  # a setter's whole answer: code, hint and prose
SEAT = ServedDesign(id="setter", source="", max_steps=1, title="the setter's seat")
OBSERVATION_SCHEMA = {"type": "object", "properties": {
    "prompt": {"type": "array"}, "text": {"type": "string"}, "valid": {"type": "boolean"},
    "reason": {"type": "string"}, "setter_score": {"type": ["number", "null"]}}}


class SetterServer(EnvServer):
    """OpenEnv sessions whose one action is a setter answer and whose reward is its score."""

    def __init__(self, *, seat: Any, max_sessions: int = 8, idle_timeout: float = 300.0,
                 backend: str = "auto") -> None:
        super().__init__(designs=[SEAT], max_sessions=max_sessions, idle_timeout=idle_timeout,
                         backend=backend)
        self.seat = seat

    def _digests(self, data: dict[str, Any]) -> list[str]:
        digests = data.get("digests") or []
        if not isinstance(digests, list) or not all(isinstance(d, str) for d in digests):
            raise SessionError("digests is a list of environment uuids or design-hash prefixes")
        return digests

    async def _call(self, function, **options: Any) -> Any:
        try:
            return await self.blocking(lambda: function(**options))
        except LookupError as error:  # the request named something that is not there
            raise SessionError(str(error)[:2000]) from error
        except Exception as error:  # a fault of the infrastructure: never a reward
            logger.warning("setter seat: %s failed: %s", function.__name__, error)
            raise SessionError(f"{type(error).__name__}: {error}"[:2000],
                               "EXECUTION_ERROR") from error

    async def session_reset(self, session: EnvSession, data: dict[str, Any]) -> dict[str, Any]:
        digests = self._digests(data)
        self.count_reset(session)  # each reset leads to a scored answer: solver plays
        messages = await self._call(self.seat.prompt, digests=digests)
        session.design, session.seed, session.steps = SEAT, None, 0
        session.done, session.success = False, False
        session.episode_id = str(data.get("episode_id") or uuid.uuid4())[:200]
        return {"observation": {"prompt": messages, "text": messages[-1]["content"],
                                "solvers": [solver.name for solver in self.seat.solvers],
                                "seeds": self.seat.seeds, "digests": len(digests)},
                "reward": 0.0, "done": False, "metadata": {"episode_id": session.episode_id}}

    async def session_step(self, session: EnvSession, data: dict[str, Any]) -> dict[str, Any]:
        if session.design is not SEAT or session.done:
            raise SessionError("no episode is running: send reset first", "SESSION_ERROR")
        measured = await self._score(data)
        session.steps, session.done = 1, True
        session.success = bool(measured["observation"]["valid"])
        return {**measured, "metadata": {**measured["metadata"],
                                         "episode_id": session.episode_id}}

    async def _score(self, data: dict[str, Any]) -> dict[str, Any]:
        answer = data.get("action")
        if not isinstance(answer, str) or len(answer) > MAX_ANSWER_CHARS:
            raise SessionError(f'the action is {{"action": "<the whole setter answer>"}}, at '
                               f"most {MAX_ANSWER_CHARS} characters")
        info = await self._call(self.seat.score, answer=answer)
        reward = float(info.pop("reward"))
        return {"observation": info, "reward": reward, "done": True, "metadata": dict(info)}

    async def http_route(self, method: str, path: str, body: bytes, send, client: str) -> bool:
        if not (method == "POST" and path == "/step"):
            return False
        # A stateless /step is a reset and a step in one request: the same per-client limits
        # as a websocket session (a slot of the address's share, one reset counted).
        refused = self.refusal(client)
        if refused:
            await self.reply(send, 503, {"detail": refused, "code": "CAPACITY_REACHED"})
            return True
        try:
            self.count_reset(EnvSession(number=0, client=client))
        except SessionError as error:
            await self.reply(send, 429, {"detail": str(error), "code": error.code},
                             headers=[(b"retry-after", str(error.retry_after).encode())])
            return True
        self.stateless_resets += 1
        self.clients.take(client)
        try:
            data = json.loads(body or b"{}")
            if not isinstance(data, dict):
                raise SessionError("the body is a JSON object")
            result = await self._score(data)
        except ValueError:
            await self.reply(send, 422, {"detail": "the body is not JSON"})
        except SessionError as error:
            status = 503 if error.code == "EXECUTION_ERROR" else 422
            await self.reply(send, status, {"detail": str(error), "code": error.code})
        else:
            await self.reply(send, 200, result)
        finally:
            self.stateless_resets -= 1
            self.clients.give_back(client)
        return True

    def schema(self) -> dict[str, Any]:
        return {**super().schema(), "observation": OBSERVATION_SCHEMA}

    def metadata(self) -> dict[str, Any]:
        return {"name": "envduels-setter", "description": "The setter's seat: the action is a "
                "whole setter answer, the reward its setter score measured by the solvers",
                "role": "setter", "solvers": [solver.name for solver in self.seat.solvers],
                "seeds": self.seat.seeds, "max_solver_calls_per_reward": self.max_calls()}

    def max_calls(self) -> int:
        """The most solver calls one reward can make: solvers × 2 × seeds × 200 steps."""
        return len(self.seat.solvers) * 2 * self.seat.seeds * 200
