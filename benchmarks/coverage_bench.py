"""Coverage benchmark for issue 30 (run by hand; prints measured numbers, not part of make test).

    .venv/bin/python benchmarks/coverage_bench.py [--datasets 40] [--irt-datasets 60]

Simulates tournaments with planted truths (tests/helpers/planted.py) at several sizes and runs
the project's own analytics functions on them. For every 95% interval the project shows it prints
the share of intervals that contain the truth (coverage) and their mean width; intervals a page
would not show (too little data) are counted apart. Then, for each of the five findings, data
where the claim is true and data where it is false: how often the verdict is `supported`,
`contradicted` or `not enough data`. A false verdict is `supported` on false data or
`contradicted` on true data.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from duels.analytics.convergence import convergence_fit  # noqa: E402
from duels.analytics.data import EnvironmentRecord  # noqa: E402
from duels.analytics.divergence import divergence_fit, kendall_tau_rows  # noqa: E402
from duels.analytics.environments import environment_gains  # noqa: E402
from duels.analytics.findings import (  # noqa: E402
    CONTRADICTED,
    SUPPORTED,
    finding_designs_converge,
    finding_gain_predicts_transfer,
    finding_small_models_set_harder,
    finding_solver_not_setter,
    finding_transitive,
)
from duels.analytics.irt_report import irt_compute  # noqa: E402
from duels.analytics.proportions import wilson_interval  # noqa: E402
from duels.analytics.ratings import SCALE, ratings_fit  # noqa: E402
from duels.analytics.scale import scale_fit  # noqa: E402
from duels.analytics.sides import duel_sides  # noqa: E402
from duels.analytics.strength import strength_fit  # noqa: E402
from duels.analytics.transfer import transfer_fit  # noqa: E402
from duels.analytics.transitivity import transitivity_fit  # noqa: E402
from tests.helpers.planted import (  # noqa: E402
    expected_rates,
    planted_cross_play,
    planted_duels,
    player_name,
    true_author_ratings,
)

RESAMPLES = 200


class Tally:
    """Coverage, width and 'no interval' counts per (interval, size)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], list] = defaultdict(lambda: [0, 0, 0.0, 0])

    def add(self, name: str, size: str, low, high, truth: float) -> None:
        row = self.rows[(name, size)]
        if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
            row[3] += 1
            return
        row[0] += low - 1e-9 <= truth <= high + 1e-9
        row[1] += 1
        row[2] += high - low

    def print(self) -> None:
        print(f"{'interval':<44} {'size':<24} {'n':>6} {'coverage':>9} {'width':>9} "
              f"{'no interval':>11}")
        for (name, size), (hits, count, width, missing) in self.rows.items():
            coverage = f"{hits / count:.3f}" if count else "—"
            mean_width = f"{width / count:.3f}" if count else "—"
            print(f"{name:<44} {size:<24} {count:>6} {coverage:>9} {mean_width:>9} "
                  f"{missing:>11}")


class Verdicts:
    """How often each finding says what, by whether its claim holds in the simulated truth."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])

    def add(self, finding: str, case: str, verdict: str) -> None:
        row = self.rows[(finding, case)]
        row[0 if verdict == SUPPORTED else 1 if verdict == CONTRADICTED else 2] += 1

    def print(self) -> None:
        print(f"{'finding':<26} {'case':<36} {'n':>5} {'supported':>10} {'contradicted':>13} "
              f"{'not enough':>11} {'false verdict':>14}")
        for (finding, case), (supported, contradicted, undecided) in self.rows.items():
            total = supported + contradicted + undecided
            wrong = contradicted if case.startswith("claim true") else supported
            print(f"{finding:<26} {case:<36} {total:>5} {supported / total:>10.3f} "
                  f"{contradicted / total:>13.3f} {undecided / total:>11.3f} "
                  f"{wrong / total:>14.3f}")


def bradley_terry(tally: Tally, verdicts: Verdicts, datasets: int) -> None:
    """Duel ratings against planted strengths; transitivity verdicts on ordered and on
    order-free tournaments (independent random win probabilities for every pair)."""
    for players, rounds in ((4, 3), (6, 2), (8, 2), (20, 1)):
        size = f"{players} players, {rounds} RR"
        for dataset in range(datasets):
            rng = np.random.default_rng([1, players, dataset])
            theta = rng.normal(0, 1, players)
            random_p = rng.uniform(0, 1, (players, players))
            for ordered in (True, False):
                games = []
                for _ in range(rounds):
                    for i in range(players):
                        for j in range(i + 1, players):
                            p = expit(theta[i] - theta[j]) if ordered else random_p[i, j]
                            games.append((player_name(i), player_name(j),
                                          float(rng.random() < p)))
                fit = ratings_fit(players=[player_name(i) for i in range(players)], games=games,
                                  resamples=RESAMPLES, seed=dataset)
                if ordered:
                    truth = 1000 + SCALE * (theta - theta.mean())
                    for k, name in enumerate(fit.players):
                        tally.add("duel rating (Bradley–Terry bootstrap)", size, fit.low[k],
                                  fit.high[k], truth[int(name[1:])])
                transitivity = transitivity_fit(fit.points, fit.boot_points)
                verdict = finding_transitive({"transitivity": transitivity})["verdict"]
                case = "claim true: planted order" if ordered else "claim false: no order"
                verdicts.add("transitive", f"{case}, {players} players", verdict)


def duels(tally: Tally, datasets: int) -> list[tuple[float, bool]]:
    """Wilson, Newcombe, setter/solver strength and their divergence on duel tournaments.

    Returns (P(top solver ≠ top setter), whether it is so in truth) per dataset.
    """
    calibration = []
    for players, rounds, attempts in ((4, 3, 2), (8, 5, 4), (20, 10, 8)):
        size = f"{players}p, {rounds} envs/author, k={attempts}"
        for dataset in range(datasets):
            rng = np.random.default_rng([2, players, dataset])
            planted = planted_duels(rng, players=players, rounds=rounds, attempts=attempts)
            index = {env.uuid: j for j, env in enumerate(planted.environments)}
            sides, _ = duel_sides(planted.duels, planted.episodes)
            for side in sides:
                j = index[side.environment]
                solver = int(side.solver[1:])
                p_u = expit(planted.theta[solver] - planted.difficulty[j])
                p_h = expit(planted.theta[solver] - planted.difficulty[j]
                            + planted.hint_effect[j])
                tally.add("pass rate (Wilson), one side", size,
                          *wilson_interval(side.p_unhinted * attempts, attempts), p_u)
                tally.add("pass rate (Wilson), one side", size,
                          *wilson_interval(side.p_hinted * attempts, attempts), p_h)
            for row in environment_gains(environments=planted.environments,
                                         episodes=planted.episodes):
                j = index[row["uuid"]]
                solver = next(int(s.solver[1:]) for s in sides if s.environment == row["uuid"])
                eta = planted.theta[solver] - planted.difficulty[j]
                tally.add("hint gain (Newcombe), one environment", size, row["low"],
                          row["high"], expit(eta + planted.hint_effect[j]) - expit(eta))
            strength = strength_fit(players=planted.names, sides=sides,
                                    episodes=planted.episodes,
                                    environments=planted.environments, resamples=RESAMPLES,
                                    seed=dataset)
            true_setter, true_solver = expected_rates(planted)
            for i in range(players):
                if strength.setter_sides[i]:
                    tally.add("setter strength (bootstrap over duels)", size,
                              strength.setter_low[i], strength.setter_high[i], true_setter[i])
                if strength.solver_episodes[i]:
                    tally.add("solver strength (bootstrap over duels)", size,
                              strength.pass_low[i], strength.pass_high[i], true_solver[i])
            divergence = divergence_fit(setter_score=strength.setter_score,
                                        pass_rate=strength.pass_rate,
                                        setter_boot=strength.setter_boot,
                                        solver_boot=strength.solver_boot)
            if divergence:
                tau = float(kendall_tau_rows(true_setter, true_solver)[0])
                tally.add("Kendall τ setter vs solver (bootstrap)", size, divergence["low"],
                          divergence["high"], tau)
                calibration.append((divergence["p_top_differs"],
                                    bool(np.argmax(true_setter) != np.argmax(true_solver))))
    return calibration


def solver_not_setter(verdicts: Verdicts, datasets: int) -> None:
    """The first finding on tournaments drawn until the truth is the wanted case: the player
    with the highest θ is (or is not) the one with the highest true Author rating (propensity:
    the skills of the players, not the luck of the environments drawn)."""
    players, per_author, attempts = 8, 5, 4
    for case in ("claim true: tops differ", "claim false: same top"):
        found, draw = 0, 0
        while found < datasets:
            draw += 1
            rng = np.random.default_rng([7, draw])
            planted = planted_cross_play(rng, players=players, per_author=per_author,
                                         attempts=attempts)
            truth = true_author_ratings(planted, field=list(range(players)), rated=planted.names)
            top_author = max(truth, key=truth.get)
            differs = planted.names[int(np.argmax(planted.theta))] != top_author
            if differs != case.startswith("claim true"):
                continue
            found += 1
            irt = irt_compute(episodes=planted.episodes, environments=planted.environments,
                              resamples=RESAMPLES, seed=draw)
            verdict = finding_solver_not_setter({"irt": irt})["verdict"]
            verdicts.add("solver_not_setter", f"{case}, {players}p, {per_author} envs, "
                                              f"k={attempts}", verdict)


def joint_model(tally: Tally, verdicts: Verdicts, datasets: int) -> None:
    """θ, b, γ and Author rating intervals of the joint model; the first finding's verdicts.

    The Author rating's truth is the author's propensity, the rating of the environments it
    would write (tests/helpers/planted.py), as θ's is the planted ability; it is also measured
    against the rating of the very environments written, which the interval is not about."""
    for players, per_author, attempts, per_environment in ((4, 3, 2, None), (8, 5, 4, None),
                                                           (20, 6, 8, 6)):
        size = f"{players}p, {per_author} envs/author, k={attempts}"
        for dataset in range(datasets):
            rng = np.random.default_rng([3, players, dataset])
            planted = planted_cross_play(rng, players=players, per_author=per_author,
                                         attempts=attempts,
                                         solvers_per_environment=per_environment)
            irt = irt_compute(episodes=planted.episodes, environments=planted.environments,
                              resamples=RESAMPLES, seed=dataset)
            centre = planted.theta.mean()
            for row in irt["solvers"]:
                tally.add("Solve rating θ (basic bootstrap, Rao–Wu)", size, row["low"], row["high"],
                          planted.theta[int(row["player"][1:])] - centre)
            for row in irt["environments"]:
                _, a, k = row["uuid"].split("-")
                j = int(a) * per_author + int(k)
                tally.add("difficulty b (Laplace)", size, row["d_low"], row["d_high"],
                          planted.difficulty[j] - centre)
                tally.add("hint effect γ (Laplace)", size, row["h_low"], row["h_high"],
                          planted.hint_effect[j])
            who = {"field": [int(row["player"][1:]) for row in irt["solvers"]],
                   "rated": [row["player"] for row in irt["authors"] + irt["authors_too_few"]]}
            truth = true_author_ratings(planted, **who)
            written = true_author_ratings(planted, **who, written=True)
            for row in irt["authors"]:
                tally.add("Author rating (bootstrap, Rao–Wu)", size, row["low"], row["high"],
                          truth[row["player"]])
                tally.add("  the same, of the environments written", size, row["low"],
                          row["high"], written[row["player"]])
            divergence = irt["divergence"]
            if divergence:
                names = [row["player"] for row in irt["solvers"]
                         if row["player"] in {r["player"] for r in irt["authors"]}]
                true_theta = np.array([planted.theta[int(n[1:])] for n in names])
                true_author = np.array([truth[n] for n in names])
                tally.add("Kendall τ Solve vs Author rating", size, divergence["low"],
                          divergence["high"], float(kendall_tau_rows(true_theta,
                                                                     true_author)[0]))
                differs = names[int(np.argmax(true_theta))] != names[int(np.argmax(true_author))]
                case = "claim true: tops differ" if differs else "claim false: same top"
                verdict = finding_solver_not_setter({"irt": irt})["verdict"]
                verdicts.add("solver_not_setter", f"{case}, {players} players", verdict)


def _population_spearman(draw, rng: np.random.Generator) -> float:
    x, y = draw(rng, 200_000)
    return float(stats.spearmanr(x, y)[0])


def correlations(tally: Tally, verdicts: Verdicts, datasets: int) -> None:
    """Spearman intervals of transfer and scale, and the findings resting on them."""
    def transfer_rows(slope: float, attempts: int):
        def draw(rng, n):
            p_u = rng.uniform(0.05, 0.6, n)
            p_h = np.clip(p_u + rng.uniform(-0.1, 0.4, n), 0, 1)
            gain = (rng.binomial(attempts, p_h) - rng.binomial(attempts, p_u)) / attempts
            return gain, slope * (p_h - p_u) + rng.normal(0, 0.1, n)
        return draw

    def scale_rows(slope: float):
        def draw(rng, n):
            log_size = rng.uniform(0, 6, n)
            return np.exp(log_size), slope * (log_size - 3) / 1.7 + rng.normal(0, 1, n)
        return draw

    for slope, case in ((1.0, "claim true: ρ > 0"), (0.0, "claim false: ρ = 0"),
                        (-1.0, "claim false: ρ < 0")):
        draw = transfer_rows(slope, 8)
        truth = _population_spearman(draw, np.random.default_rng(9))
        for rows in (5, 10, 20):
            for dataset in range(datasets):
                rng = np.random.default_rng([4, rows, dataset, int(slope * 10) + 10])
                gain, improvement = draw(rng, rows)
                fit = transfer_fit(rows=[{"hint_gain": g, "improvement": v, "baseline": 0.0}
                                         for g, v in zip(gain, improvement, strict=True)],
                                   resamples=RESAMPLES, seed=dataset)
                if fit is not None:
                    tally.add(f"transfer Spearman ρ (bootstrap), ρ={truth:+.2f}",
                              f"{rows} rows", fit["low"], fit["high"], truth)
                verdict = finding_gain_predicts_transfer({"transfer": fit})["verdict"]
                verdicts.add("gain_predicts_transfer", f"{case}, {rows} rows", verdict)
    for slope, case in ((-1.0, "claim true: smaller set harder"), (0.0, "claim false: ρ = 0"),
                        (1.0, "claim false: larger set harder")):
        draw = scale_rows(slope)
        truth = _population_spearman(draw, np.random.default_rng(10))
        for players in (4, 5, 8, 20):
            for dataset in range(datasets):
                rng = np.random.default_rng([5, players, dataset, int(slope * 10) + 10])
                size, strength = draw(rng, players)
                names = [player_name(i) for i in range(players)]
                fit = scale_fit(sizes=dict(zip(names, size, strict=True)),
                                setter_strength=dict(zip(names, strength, strict=True)),
                                uplift={}, resamples=1000, seed=dataset)
                if fit is not None:
                    tally.add(f"scale Spearman ρ (bootstrap), ρ={truth:+.2f}",
                              f"{players} players", fit["low"], fit["high"], truth)
                verdict = finding_small_models_set_harder({"scale": fit})["verdict"]
                verdicts.add("small_models_set_harder", f"{case}, {players} players", verdict)


_SHAPES = ["x = y + {n}", "if x > {n}:\n    y = x", "for i in range({n}):\n    x += i",
           "self.s = [{n}] * y", "return {{'done': x, 'n': {n}}}", "y = str(x).split()",
           "while x < {n}:\n    x *= 2", "z = sorted(y)[:{n}]", "self.t = (x, y, {n})",
           "x = max(y, {n}) - min(x, 1)", "assert y != {n}", "y = [a for a in x if a]"]


def _design(rng: np.random.Generator) -> list[str]:
    return [_SHAPES[k] for k in rng.integers(0, len(_SHAPES), 14)]


def _variant(rng: np.random.Generator, design: list[str]) -> str:
    lines = list(design)
    lines[int(rng.integers(len(lines)))] = _SHAPES[int(rng.integers(len(_SHAPES)))]
    return "\n".join(line.format(n=int(rng.integers(100))) for line in lines)


def convergence(verdicts: Verdicts, datasets: int) -> None:
    """Authors writing variants of shared designs (claim true), of their own private designs
    or all-different sources (claim false)."""
    for authors, per_author in ((4, 5), (8, 3)):
        for case in ("claim true: shared designs", "claim false: private designs",
                     "claim false: all different"):
            for dataset in range(datasets):
                rng = np.random.default_rng([6, authors, per_author, dataset, len(case)])
                shared = [_design(rng) for _ in range(per_author)]
                environments = []
                for a in range(authors):
                    own = _design(rng)
                    for k in range(per_author):
                        design = (shared[k] if case.endswith("shared designs") else own
                                  if case.endswith("private designs") else _design(rng))
                        uuid = f"env-{a}-{k}"
                        environments.append(EnvironmentRecord(uuid, uuid, player_name(a), True,
                                                              _variant(rng, design)))
                result = convergence_fit(environments=environments, seed=dataset)
                verdict = finding_designs_converge({"convergence": result})["verdict"]
                verdicts.add("designs_converge", f"{case}, {authors}×{per_author}", verdict)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=40, help="simulated datasets per size")
    parser.add_argument("--irt-datasets", type=int, default=60,
                        help="simulated datasets per size for the joint model (each refits it "
                             f"{RESAMPLES} times)")
    parser.add_argument("--only", nargs="*", default=None,
                        help="run only these sections (e.g. 'first finding')")
    args = parser.parse_args()
    started = time.perf_counter()
    tally, verdicts = Tally(), Verdicts()
    timings, calibration = {}, []
    for name, run in (("Bradley–Terry", lambda: bradley_terry(tally, verdicts, args.datasets)),
                      ("duels", lambda: duels(tally, args.datasets)),
                      ("correlations", lambda: correlations(tally, verdicts, args.datasets)),
                      ("convergence", lambda: convergence(verdicts, args.datasets // 2)),
                      ("joint model", lambda: joint_model(tally, verdicts, args.irt_datasets)),
                      ("first finding", lambda: solver_not_setter(verdicts,
                                                                  args.irt_datasets))):
        if args.only is not None and name not in args.only:
            continue
        section = time.perf_counter()
        outcome = run()
        if name == "duels":
            calibration = outcome
        timings[name] = time.perf_counter() - section
    print("95% intervals: coverage of the planted truth and mean width")
    tally.print()
    print("\nP(top solver ≠ top setter) from the duel bootstrap, by its value:")
    for low, high in ((0, 0.05), (0.05, 0.5), (0.5, 0.95), (0.95, 1.01)):
        chosen = [truth for p, truth in calibration if low <= p < high]
        if chosen:
            print(f"  p in [{low:.2f}, {min(high, 1):.2f}): {len(chosen):>4} datasets, "
                  f"tops truly differ in {np.mean(chosen):.3f}")
    print("\nverdicts of the findings on simulated data")
    verdicts.print()
    print("\n" + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in timings.items())
          + f"; {time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
