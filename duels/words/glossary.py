"""Every number EnvDuels shows, defined once: key, label, one-sentence meaning, formula.

The /glossary/ page renders this list and metric labels link to `/glossary/#<key>`; the README
section "Reading the results" carries the same definitions (a test keeps the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One defined metric or verdict."""

    key: str
    label: str
    meaning: str
    formula: str


GLOSSARY: tuple[Term, ...] = (
    # Per duel side: the setter's environment played by the other player as solver, k seeds.
    Term("p_unhinted", "unhinted pass rate",
         "Share of the k seeds the solver passed without the hint.",
         "p_u = passed unhinted seeds / k"),
    Term("p_hinted", "hinted pass rate",
         "Share of the same k seeds the solver passed with the setter's hint.",
         "p_h = passed hinted seeds / k"),
    Term("hint_gain", "hint gain",
         "How much the hint helped: positive when the setter located the real difficulty. "
         "Written in percentage points everywhere (+12 pp: the hinted pass rate is 12 points "
         "above the unhinted one); JSON and CSV outputs keep the fraction (0.12).",
         "g = p_h − p_u"),
    Term("setter_score", "setter score",
         "1 when the environment is failed without the hint and passed with it; 0 when it is "
         "trivial, impossible or forfeited.",
         "s = p_h · (1 − p_u); a forfeited side scores 0"),
    Term("flips", "flips",
         "Seeds the solver failed unhinted and passed hinted.",
         "flips = #{seed : failed unhinted and passed hinted}"),
    Term("forfeit", "played / forfeited",
         "A side is played when the duel recorded no forfeit for it and its episodes exist; an "
         "invalid environment or a failed authoring forfeits the side.",
         "played ⇔ no forfeit recorded ∧ ≥ 1 episode per condition"),
    Term("voided", "voided after play",
         "A side whose environment, checked on the path a solver played, replayed differently, "
         "disagreed with its paired episode or showed the hint to an unhinted solver. It scores 0 "
         "for its setter, like a forfeit, and none of its episodes counts anywhere; the solver is "
         "not blamed.",
         "voided ⇒ s = 0, no p_u, p_h, g or flips; its episodes leave every figure"),
    Term("outcome", "outcome",
         "The side with the higher setter score wins the duel; equal scores are a draw.",
         "a if s_A > s_B, b if s_B > s_A, else draw (compared exactly as fractions)"),
    # Players.
    Term("rating", "rating",
         "Bradley–Terry duel rating on the Elo scale: 400 points apart means 10:1 odds.",
         "P(i beats j) = 1 / (1 + 10^((R_j − R_i)/400)); draws count half; mean rating 1000"),
    Term("interval", "95% interval",
         "The range that holds the figure in 95% of resamples; each interval names its method.",
         "bootstrap percentile: 2.5th–97.5th percentile of the figure over 1,000 resamples"),
    Term("wilson", "Wilson interval",
         "Score interval of a pass rate, used for single proportions.",
         "(p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n), z = 1.96"),
    Term("newcombe", "Newcombe interval",
         "Interval of a difference of two pass rates, such as an environment's hint gain.",
         "low = g − √((p_h − l_h)² + (u_u − p_u)²), high = g + √((u_h − p_h)² + (p_u − l_u)²), "
         "l and u the Wilson limits"),
    Term("setter_strength", "setter strength",
         "A player's mean setter score over all its duel sides as setter.",
         "mean of s over the player's sides (forfeits count 0)"),
    Term("solver_strength", "solver strength",
         "A player's unhinted pass rate on other players' valid environments.",
         "passed unhinted episodes / unhinted episodes"),
    Term("solve_rating", "Solve rating",
         "A solver's ability θ in the joint item-response model, on the duel-rating scale: it "
         "accounts for how hard the environments it met were. Ranked only from three "
         "environments met; below that the solver is listed apart (too few episodes).",
         "P(pass | solver i, environment j, hinted h) = σ(θ_i − b_j + h·γ_j); "
         "Solve rating = 1000 + 173.7·θ, mean θ = 0"),
    Term("author_rating", "Author rating",
         "How well a player's environments separate the field: the expected setter score of its "
         "environments against every other ranked solver under the joint model, on the same "
         "scale. Only environments played both with and without the hint count; ranked from "
         "three such environments.",
         "S_j = mean over ranked solvers i ≠ author of σ(θ_i − b_j + γ_j)·(1 − σ(θ_i − b_j)); "
         "Author rating = 1000 + 173.7·(logit mean S_j − mean over authors)"),
    Term("difficulty", "difficulty b",
         "How hard an environment is without the hint, in log-odds above an average solver.",
         "b_j in σ(θ_i − b_j + h·γ_j); interval: normal approximation"),
    Term("hint_effect", "hint effect γ",
         "How much the hint raises the log-odds of passing the environment; negative when it "
         "misleads.",
         "γ_j in σ(θ_i − b_j + h·γ_j); interval: normal approximation"),
    Term("training_value", "training value",
         "How much an RL learner can expect to gain from a design: hard enough to fail "
         "sometimes, with a hint that credibly helps; counted only for valid, deterministic "
         "designs that a reference solution or a hinted run solved.",
         "mean of 4·p_u·(1 − p_u), 4·q·(1 − q), max(0, low of g's Newcombe interval) and "
         "max(0, σ(−b + γ) − q), where q = σ(−b)"),
    Term("irt_accuracy", "joint-model accuracy",
         "Share of held-out episodes whose pass or fail the joint model predicted.",
         "5-fold cross-validation over episodes; predicted pass when σ(θ − b + h·γ) > ½"),
    Term("observe_uplift", "observe-mode uplift",
         "How much a setter's score rises when it may read earlier duels.",
         "mean s in observe duels − mean s in other duels"),
    # Rankings and structure.
    Term("cyclic_triads", "cyclic triads",
         "Decided triples of players that beat each other in a circle (A > B > C > A).",
         "c = #{decided triples with one win each}"),
    Term("zeta", "Kendall's ζ",
         "Kendall's coefficient of consistence over decided triples: 1 means no cycles.",
         "ζ = 1 − c / (c_max(n) · T / C(n,3)), T = decided triples, floored at 0"),
    Term("transitive_share", "transitive share",
         "Share of decided triples that are ordered (A > B > C and A > C); chance is 0.75.",
         "(T − c) / T"),
    Term("bt_accuracy", "rating accuracy",
         "Share of held-out decided duels whose winner the ratings predicted.",
         "5-fold cross-validated share of correct predictions; 0.5 is chance"),
    Term("kendall_tau", "Kendall τ",
         "Agreement between the setter and the solver rankings: 1 same order, −1 reversed.",
         "τ_b = (concordant − discordant) / √(pairs untied in x · pairs untied in y)"),
    Term("p_top_differs", "P(top solver ≠ top setter)",
         "Share of bootstrap resamples in which the best solver is not the best setter (by "
         "Solve and Author rating once the joint model has data).",
         "#{resamples: argmax Solve rating ≠ argmax Author rating} / resamples"),
    Term("convergence_p", "convergence p",
         "Chance of cross-author source similarity this high if authors were assigned at random.",
         "(1 + #{permutations with similarity ≥ observed}) / (1 + 200)"),
    Term("transfer_rho", "transfer ρ",
         "Rank correlation between a learner's hint gain on an environment and its improvement "
         "after training on it.",
         "Spearman ρ(g, after − before)"),
    Term("scale_rho", "scale ρ",
         "Rank correlation of model size (billions of parameters) with setter strength and with "
         "observe-mode uplift.",
         "Spearman ρ(parameters_b, setter strength); Spearman ρ(parameters_b, uplift)"),
    # A study's field: every player plays every version on its benchmark seeds.
    Term("benchmark_seeds", "benchmark seeds",
         "The k seeds drawn once for a study's environment and stored with it: every solver plays"
         " them in both conditions, and the environment's revisions keep them.",
         "k distinct seeds from 0 … 999,999, drawn once per slot"),
    Term("final_version", "final version",
         "A slot's last valid version (env_NNN, env_NNN/harden_01, …); the per-model figures and "
         "ranks count final versions only, and a revision that fails validation leaves the "
         "previous version final.",
         "final(slot) = the valid version of the slot with the highest revision"),
    Term("canonical_autonomous_solve", "canonical solve",
         "A model's unhinted accuracy on the other models' final versions, balanced over domains:"
         " its own environments are left out.",
         "mean over domains d of (mean over others' final versions v in d of successes_u(v) / "
         "attempted_u(v))"),
    Term("direct_common_panel_solve", "direct common-panel solve",
         "The same over the common panel, the final versions every model played, its own "
         "included: the only figure that counts an author's plays of its own environments.",
         "mean over domains d of (mean over common-panel versions v in d of successes_u(v) / "
         "attempted_u(v))"),
    Term("hint_rescue", "hint rescue",
         "Of a model's unhinted failures on others' versions, the share the hint turned into a "
         "pass (matched seed by seed).",
         "#{(v, seed): failed unhinted, passed hinted} / #{(v, seed): failed unhinted}"),
    Term("hint_harm", "hint harm",
         "Of a model's unhinted passes on others' versions, the share it failed with the hint.",
         "#{(v, seed): passed unhinted, failed hinted} / #{(v, seed): passed unhinted}"),
    Term("peer_discrimination", "peer discrimination",
         "How far apart a version puts the solvers other than its author, seed by seed: 1 when "
         "half pass and half fail.",
         "mean over seeds of Σ over pairs a < b of non-author solvers |rate_a − rate_b| / ⌊n²/4⌋"),
    Term("peer_hint_effect", "peer hint effect",
         "How much the hint raised the pass rate of the solvers other than the version's author, "
         "over their matched seeds.",
         "mean over every peer's matched pairs, pooled, of (passed hinted − passed unhinted)"),
    Term("hint_mattered", "where the hint mattered",
         "Where a version's hint changed what solvers did: the step at which a peer's hinted and "
         "unhinted plays of the same seed part ways, most often over the field, with how many of "
         "the matched pairs parted there.",
         "step = the most common (earliest of equals) first step whose action differs between a "
         "pair's plays, or where only one went on; pairs = matched peer pairs; parted = pairs "
         "that part at that step"),
    Term("study_design", "design",
         "How well a model's own final versions separate the field: their peer discrimination, "
         "balanced over domains.",
         "mean over domains d of (mean peer discrimination of the model's final versions in d)"),
    Term("hint_authoring", "hint authoring",
         "How much a model's hints help the field on its own final versions: their peer hint "
         "effect, balanced over domains.",
         "mean over domains d of (mean peer hint effect of the model's final versions in d)"),
    Term("study_rank", "study rank",
         "A model's place by canonical solve, direct common-panel solve or design: 1 for the "
         "highest value, ties by name; no rank where the figure is undefined.",
         "rank = 1 + #{models with a higher value} (ties ordered by name)"),
    Term("shared_rank", "shared rank",
         "A model's place by a figure on the pages and in the headline: equal figures share a "
         "rank and the next rank skips (1, 1, 3).",
         "rank = 1 + #{models with a strictly higher value} (values compared at 12 significant "
         "digits)"),
    Term("rank_range", "rank range",
         "The places a model could hold given the figures' 95% intervals: from one below the "
         "models significantly ahead of it to one above those significantly behind; equal "
         "figures have equal ranges.",
         "[1 + #{j : low_j > high_i}, n − #{j : high_j < low_i}], widened to the shared rank "
         "and to the widest range among equal figures"),
    Term("different_share", "best solver ≠ best setter",
         "The share of resamples in which no model leads both canonical solve and design: how "
         "sure the study is that its best solver and its best setter are different models.",
         "#{r : leaders of canonical solve in r ∩ leaders of design in r = ∅} / #{r : both "
         "defined}"),
    Term("solver_hint_gain", "gain from others' hints",
         "A solver's figure: how much a model's own pass rate rose with the other setters' "
         "hints on their final versions; it says nothing of the model's own hints (that is "
         "its hint authoring).",
         "mean over matched pairs on others' final versions of (passed hinted − passed "
         "unhinted)"),
    Term("setter_score_final", "setter score of final versions",
         "A setter's figure: the mean setter score its peers gave its final versions.",
         "mean over the model's final versions v of p_h(v) · (1 − p_u(v)), peers pooled"),
    Term("hardening_p_unhinted_change", "hardening change for a setter",
         "A setter's figure: its final versions' unhinted pass rate minus its first "
         "versions', over its revised slots; negative when hardening made them harder.",
         "mean over the model's revised slots of (p_u(final) − p_u(first))"),
    Term("hardening_change", "hardening change",
         "What hardening changed: each revised version's figure (unhinted pass rate, setter "
         "score, peer discrimination) minus its parent's, over the slots with a revision; first "
         "to final compares each slot's first version with its final one.",
         "mean over domains of the mean over revised slots of (figure(revision r) − "
         "figure(revision r − 1)); 95% interval: bootstrap over slots"),
    Term("field_head_to_head", "head-to-head from the field",
         "For a pair of study players A and B: A's final versions as played by B against B's as "
         "played by A, scored by the duel rule; each decided pair is one game for the ratings and"
         " transitivity.",
         "A's score = exact mean over A's final versions B played in both conditions of p_h · (1 "
         "− p_u) (a slot without a valid version 0); the higher score wins, equal is a draw"),
    # Findings.
    Term("supported", "supported",
         "The data back the study's claim: the deciding figure, with its uncertainty, lies on "
         "the claim's side of the finding's stated threshold.",
         "95% interval (or bootstrap probability ≥ 0.95) beyond the threshold, claimed side"),
    Term("contradicted", "contradicted",
         "The data go against the study's claim: the deciding figure, with its uncertainty, lies "
         "on the other side of the finding's stated threshold.",
         "95% interval (or bootstrap probability ≤ 0.05) beyond the threshold, other side"),
    Term("not_enough_data", "not enough data",
         "Too little data to decide, or an interval that straddles the threshold; the finding "
         "says what would settle it.",
         "neither supported nor contradicted"),
)

GLOSSARY_BY_KEY: dict[str, Term] = {term.key: term for term in GLOSSARY}


def glossary_term(*, key: str) -> Term:
    """The definition for `key`; KeyError names an unknown key."""
    return GLOSSARY_BY_KEY[key]
