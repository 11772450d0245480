from __future__ import annotations

from duels.analytics.convergence import convergence_fit, normalised_tokens
from duels.analytics.data import EnvironmentRecord

MAZE = '''
class Environment:
    max_steps = 20

    def reset(self, seed):
        self.position = 0
        self.goal = 3 + seed % 4
        return "You are in a corridor. Walk east to the door."

    def step(self, action):
        if action.strip() == "east":
            self.position += 1
        done = self.position >= self.goal
        return {"observation": "step " + str(self.position), "done": done, "success": done}
'''
# The same design with every name and text changed: a near-duplicate by another author.
MAZE_RENAMED = (MAZE.replace("position", "pos").replace("goal", "target")
                .replace("corridor", "tunnel").replace("east", "forward"))
CIPHER = '''
import string

class Environment:
    max_steps = 8

    def reset(self, seed):
        letters = list(string.ascii_lowercase)
        shift = seed % 26
        self.key = {a: letters[(i + shift) % 26] for i, a in enumerate(letters)}
        self.secret = "".join(self.key[c] for c in "hello")
        return f"Decode {self.secret}"

    def step(self, action):
        ok = action == "hello"
        return {"observation": "correct" if ok else "wrong", "done": True, "success": ok}
'''


def env(uuid: str, author: str, source: str) -> EnvironmentRecord:
    return EnvironmentRecord(uuid, f"title {uuid}", author, True, source)


def test_renaming_identifiers_and_text_does_not_change_the_tokens():
    assert normalised_tokens(MAZE) == normalised_tokens(MAZE_RENAMED)
    assert normalised_tokens(MAZE) != normalised_tokens(CIPHER)


def test_near_duplicates_by_different_authors_cluster_together():
    result = convergence_fit(environments=[
        env("e1", "alice", MAZE), env("e2", "bob", MAZE_RENAMED), env("e3", "carol", CIPHER),
        env("e4", "alice", CIPHER + "\n# a comment\n"),
    ])
    clusters = {tuple(c["environments"]): c["authors"] for c in result["clusters"]}
    assert clusters == {("e1", "e2"): ["alice", "bob"], ("e3", "e4"): ["alice", "carol"]}
    assert result["cross_author_clusters"] == 2


def test_unrelated_sources_form_no_cluster():
    result = convergence_fit(environments=[env("e1", "alice", MAZE), env("e2", "bob", CIPHER)])
    assert result["clusters"] == []


def test_permutation_test_detects_cross_author_convergence():
    # Each author wrote one maze and one cipher: across authors the designs match, while
    # within an author they differ, so cross-author similarity beats random relabelling.
    environments = []
    for n, author in enumerate("abcdefghij"):
        environments.append(env(f"m{n}", author, MAZE))
        environments.append(env(f"c{n}", author, CIPHER))
    assert convergence_fit(environments=environments)["p_value"] < 0.05


def test_p_value_is_large_when_authors_only_repeat_themselves():
    environments = []
    for n in range(6):
        environments.append(env(f"m{n}", "alice", MAZE))
        environments.append(env(f"c{n}", "bob", CIPHER))
    assert convergence_fit(environments=environments)["p_value"] > 0.5
