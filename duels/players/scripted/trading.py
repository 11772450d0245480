"""Resource trading: turn wool into enough gold within a few trades.

The real difficulty is that the listed offers are either a bad-rate trap or a chain too long for
the trades allowed; the hint reveals an unlisted offer that makes a short route.
"""

from __future__ import annotations

import random
import re

from duels.players.scripted.common import (
    GeneratedEnvironment,
    SolverView,
    clamp_difficulty,
    family_environment,
)

NAME = "trading"
LABEL = "Resource trading"
ITEMS = ("wool", "salt", "fish", "iron", "gem", "gold")

TEMPLATE = '''
"""Resource trading: reach the gold goal; each trade converts all you can of one good."""
import random
import re

PARAMS = __PARAMS__
ITEMS = ("wool", "salt", "fish", "iron", "gem", "gold")


def convert(inventory, offer):
    give, give_n, get, get_n = offer
    bundles = inventory[give] // give_n
    after = dict(inventory)
    after[give] -= bundles * give_n
    after[get] += bundles * get_n
    return after, bundles


class Environment:
    max_steps = PARAMS["max_steps"]

    def _start(self, seed):
        rng = random.Random("trading:%s:%s" % (PARAMS["salt"], seed))
        inventory = {item: 0 for item in ITEMS}
        inventory["wool"] = rng.randint(*PARAMS["wool"])
        return inventory

    def _show(self):
        return "Inventory: %s. Goal: %d gold." % (
            ", ".join("%s %d" % (item, self.inventory[item]) for item in ITEMS), PARAMS["goal"])

    def reset(self, seed):
        self.inventory = self._start(seed)
        offers = "; ".join("%s->%s at %d:%d" % (g, t, gn, tn) for g, gn, t, tn in PARAMS["listed"])
        return (
            "Resource trading.\\n"
            "Say `trade <good> for <good>`; a trade converts all of the first good you can at "
            "the offered rate (give:get). Reach the gold goal. You have %d trades.\\n"
            "Offers: %s.\\n%s" % (self.max_steps, offers, self._show())
        )

    def _offer(self, give, get):
        for offer in PARAMS["listed"] + PARAMS["secret"]:
            if offer[0] == give and offer[2] == get:
                return offer
        return None

    def step(self, action):
        match = re.search(r"trade\\s+([a-z]+)\\s+for\\s+([a-z]+)", str(action).lower())
        offer = self._offer(*match.groups()) if match else None
        if offer is None:
            return {"observation": "Nobody takes that trade. " + self._show(),
                    "done": False, "success": False, "reward": 0.0}
        self.inventory, bundles = convert(self.inventory, offer)
        verdict = "Traded %s for %s." % (offer[0], offer[2]) if bundles else "Not enough %s." % (
            offer[0])
        won = self.inventory["gold"] >= PARAMS["goal"]
        return {"observation": verdict + " " + self._show() + (" Goal reached!" if won else ""),
                "done": won, "success": won,
                "reward": min(1.0, self.inventory["gold"] / PARAMS["goal"])}

    def reference_solution(self, seed):
        frontier = [(self._start(seed), [])]
        for _ in range(self.max_steps):
            grown = []
            for inventory, route in frontier:
                for offer in PARAMS["listed"] + PARAMS["secret"]:
                    after, bundles = convert(inventory, offer)
                    if not bundles:
                        continue
                    path = route + ["trade %s for %s" % (offer[0], offer[2])]
                    if after["gold"] >= PARAMS["goal"]:
                        return path
                    grown.append((after, path))
            frontier = grown
        return []
'''

TRAP = ("wool", 3, "gold", 1)
CHAIN = [("wool", 1, "salt", 2), ("salt", 1, "fish", 1), ("fish", 1, "iron", 1),
         ("iron", 1, "gold", 1)]
# difficulty -> (listed offers, secret offers (the first one is hinted), wool range, goal, budget)
LEVELS = {
    1: ([TRAP, ("wool", 1, "salt", 2), ("salt", 2, "gold", 1)], [], (6, 9), 2, 4),
    2: ([TRAP, ("wool", 1, "salt", 2), ("salt", 2, "gold", 1), ("salt", 1, "fish", 1)], [],
        (7, 9), 6, 3),
    3: ([TRAP, *CHAIN], [("fish", 1, "gold", 2)], (6, 9), 11, 3),
    4: ([TRAP, *CHAIN], [("salt", 1, "gold", 1)], (6, 9), 11, 2),
    5: ([TRAP, *CHAIN], [("salt", 1, "gold", 1), ("wool", 1, "gem", 3), ("gem", 1, "gold", 1)],
        (6, 10), 16, 2),
}


def generate(*, difficulty: int, rng: random.Random) -> GeneratedEnvironment:
    level = clamp_difficulty(difficulty)
    listed, secret, wool, goal, budget = LEVELS[level]
    listed = list(listed)
    rng.shuffle(listed)
    params = {
        "listed": [list(o) for o in listed],
        "secret": [list(o) for o in secret],
        "wool": list(wool),
        "goal": goal,
        "max_steps": budget,
        "salt": rng.randrange(10**6),
    }
    if secret:
        give, give_n, get, get_n = secret[0]
        hint = (
            f"The merchant also secretly trades {give_n} {give} for {get_n} {get}, though it is "
            f"not on the list: say `trade {give} for {get}`."
        )
    else:
        hint = "Ignore the direct wool->gold offer: trade wool for salt, then salt for gold."
    return family_environment(
        label=LABEL, family=NAME, level=level, template=TEMPLATE, params=params,
        hint=hint,
    )


def recognises(task: str) -> bool:
    return task.startswith("Resource trading.")


Offer = tuple[str, int, str, int]
_OFFER = re.compile(r"([a-z]+)->([a-z]+) at (\d+):(\d+)")
_INVENTORY = re.compile(r"Inventory: ([a-z0-9, ]+)\. Goal: (\d+) gold")
_BUDGET = re.compile(r"You have (\d+) trades")
_SECRET = re.compile(r"secretly trades (\d+) ([a-z]+) for (\d+) ([a-z]+)")


def hinted_offers(hint: str | None) -> list[Offer]:
    """Return unlisted offers named in a hint like 'secretly trades 1 fish for 2 gold'."""
    return [(g, int(gn), t, int(tn)) for gn, g, tn, t in _SECRET.findall(hint or "")]


def _convert(inventory: dict[str, int], offer: Offer) -> tuple[dict[str, int], int]:
    give, give_n, get, get_n = offer
    bundles = inventory.get(give, 0) // give_n
    after = dict(inventory)
    after[give] = after.get(give, 0) - bundles * give_n
    after[get] = after.get(get, 0) + bundles * get_n
    return after, bundles


def act(view: SolverView) -> tuple[str, str]:
    """Return (reasoning, action) for this skill."""
    offers: list[Offer] = [(g, int(gn), t, int(tn)) for g, t, gn, tn in _OFFER.findall(view.task)]
    offers = offers or [("wool", 1, "gold", 1)]
    match = _INVENTORY.search(view.latest) or _INVENTORY.search(view.task)
    pairs = re.findall(r"([a-z]+) (\d+)", match.group(1)) if match else []
    inventory = {item: int(count) for item, count in pairs}
    goal = int(match.group(2)) if match else 1
    if view.skill == "random":
        give, _, get, _ = view.rng.choice(offers)
        return "Any trade.", f"trade {give} for {get}"
    if view.skill == "greedy":
        return _greedy(offers, inventory, view.hint)
    offers = offers + hinted_offers(view.hint)
    budget = _BUDGET.search(view.task)
    left = (int(budget.group(1)) if budget else 5) - len(view.actions)
    route = _best_route(inventory, offers, goal, max(1, left))
    give, _, get, _ = route[0] if route else offers[0]
    return "Planned the route with the most gold.", f"trade {give} for {get}"


def _best_route(inventory: dict[str, int], offers: list[Offer], goal: int, depth: int) -> list:
    """Breadth-first over trade sequences; the shortest reaching the goal, else the most gold."""
    frontier = [(inventory, [])]
    best: tuple[int, list] = (inventory.get("gold", 0), [])
    for _ in range(depth):
        grown = []
        for state, route in frontier:
            for offer in offers:
                after, bundles = _convert(state, offer)
                if not bundles:
                    continue
                path = [*route, offer]
                if after.get("gold", 0) >= goal:
                    return path
                best = max(best, (after.get("gold", 0), path), key=lambda item: item[0])
                grown.append((after, path))
        frontier = grown
    return best[1]


_HINTED_TRADE = re.compile(r"([a-z]+) for ([a-z]+)")


def _greedy(offers: list[Offer], inventory: dict[str, int], hint: str | None) -> tuple[str, str]:
    """Whatever gets gold soonest; with a hint, first the trades it names, one step ahead only."""
    named = [pair for pair in _HINTED_TRADE.findall(hint or "") if set(pair) <= set(ITEMS)]
    if named:
        known = {(o[0], o[2]) for o in offers}
        offers = offers + [(give, 1, get, 1) for give, get in named if (give, get) not in known]
        # Trades the hint names, and trades that get a good the hint wants given.
        wanted = [o for o in offers if (o[0], o[2]) in named]
        wanted += [o for o in offers if o[2] in {give for give, _ in named} and o not in wanted]
        usable = [o for o in wanted if _convert(inventory, o)[1]]
        if usable:
            return "Following the trade the hint names.", f"trade {usable[0][0]} for {usable[0][2]}"
    affordable = [o for o in offers if _convert(inventory, o)[1]]
    into_gold = [o for o in affordable if o[2] == "gold"]
    feeds_gold = {o[0] for o in offers if o[2] == "gold"}
    toward = [o for o in affordable if o[2] in feeds_gold]
    pick = (into_gold or toward or affordable or offers)[0]
    return "Whatever gets gold soonest.", f"trade {pick[0]} for {pick[2]}"
