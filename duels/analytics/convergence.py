"""Design convergence: near-duplicate environment sources across authors.

Sources are tokenised with the stdlib `tokenize`, normalised (identifiers renamed in order of
first use, literals replaced by their kind, comments dropped) and cut into shingles of
`SHINGLE` tokens. MinHash signatures with LSH (datasketch) propose candidate pairs, which are kept
when their exact shingle Jaccard reaches `THRESHOLD`; kept pairs are joined into clusters.
"""

from __future__ import annotations

import builtins
import io
import keyword
import re
import tokenize
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from datasketch import MinHash, MinHashLSH

from duels.analytics.data import EnvironmentRecord

SHINGLE = 5
THRESHOLD = 0.7
NUM_PERM = 64
PAIR_SAMPLE = 20_000
PERMUTATIONS = 200
_KEEP_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"self"}
_FALLBACK_TOKEN = re.compile(r"\w+|[^\w\s]")


def normalised_tokens(source: str) -> list[str]:
    """Code tokens with identifiers renamed by first use and literals reduced to their kind."""
    names: dict[str, str] = {}
    tokens: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            kind, text = token.type, token.string
            if kind == tokenize.NAME:
                tokens.append(text if text in _KEEP_NAMES else
                              names.setdefault(text, f"v{len(names)}"))
            elif kind == tokenize.STRING or kind in _FSTRING_KINDS:
                if not tokens or tokens[-1] != "STR":
                    tokens.append("STR")
            elif kind == tokenize.NUMBER:
                tokens.append("NUM")
            elif kind == tokenize.OP:
                tokens.append(text)
            elif kind == tokenize.NEWLINE:
                tokens.append(";")
            elif kind == tokenize.INDENT:
                tokens.append("{")
            elif kind == tokenize.DEDENT:
                tokens.append("}")
    except (tokenize.TokenError, IndentationError, SyntaxError):
        tokens = [
            t if t in _KEEP_NAMES or not t[0].isalpha() else names.setdefault(t, f"v{len(names)}")
            for t in _FALLBACK_TOKEN.findall(source)
        ]
    return tokens


_FSTRING_KINDS = {
    getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, name)
}


def shingles(source: str) -> set[bytes]:
    tokens = normalised_tokens(source)
    if len(tokens) < SHINGLE:
        return {" ".join(tokens).encode()}
    return {" ".join(tokens[i:i + SHINGLE]).encode() for i in range(len(tokens) - SHINGLE + 1)}


def jaccard(first: set, second: set) -> float:
    if not first and not second:
        return 1.0
    return len(first & second) / len(first | second)


class _UnionFind:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, first: int, second: int) -> None:
        self.parent[self.find(first)] = self.find(second)


def _permutation_p_value(
    signatures: np.ndarray, author_ids: np.ndarray, rng: np.random.Generator
) -> tuple[float | None, float | None]:
    """One-sided permutation test: are different authors' sources more alike than chance?

    The statistic is the mean MinHash similarity over cross-author pairs (a random sample of
    pairs when there are many). Under the null, author labels are exchangeable: relabelling the
    environments at random gives the chance distribution of that mean.
    """
    size = len(author_ids)
    if size < 3 or len(set(author_ids.tolist())) < 2:
        return None, None
    total_pairs = size * (size - 1) // 2
    if total_pairs <= PAIR_SAMPLE:
        first, second = np.triu_indices(size, k=1)
    else:
        first = rng.integers(0, size, PAIR_SAMPLE)
        second = (first + rng.integers(1, size, PAIR_SAMPLE)) % size
    similarity = (signatures[first] == signatures[second]).mean(axis=1)
    observed_cross = author_ids[first] != author_ids[second]
    if not observed_cross.any():
        return None, None
    observed = similarity[observed_cross].mean()
    permuted_labels = np.array([rng.permutation(author_ids) for _ in range(PERMUTATIONS)])
    cross = permuted_labels[:, first] != permuted_labels[:, second]
    with np.errstate(invalid="ignore"):
        chance = (cross * similarity).sum(axis=1) / cross.sum(axis=1)
    at_least = int(np.sum(chance >= observed - 1e-12))
    return float(observed), (1 + at_least) / (1 + PERMUTATIONS)


def convergence_fit(
    *, environments: Sequence[EnvironmentRecord], seed: int = 0
) -> dict:
    """Near-duplicate clusters (two or more environments) and the cross-author test."""
    authored = [env for env in environments if env.author is not None]
    # Identical sources share one signature; tokenising each distinct source once.
    by_source: dict[str, list[int]] = defaultdict(list)
    for position, env in enumerate(authored):
        by_source[env.source].append(position)
    sources = list(by_source)
    shingle_sets = [shingles(source) for source in sources]
    minhashes = MinHash.bulk(shingle_sets, num_perm=NUM_PERM, seed=1)
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    for position, minhash in enumerate(minhashes):
        lsh.insert(position, minhash, check_duplication=False)

    union = _UnionFind(len(authored))
    for members in by_source.values():
        for other in members[1:]:
            union.union(members[0], other)
    for position, minhash in enumerate(minhashes):
        first = by_source[sources[position]][0]
        for candidate in lsh.query(minhash):
            other = by_source[sources[candidate]][0]
            # Single linkage: a pair already joined through others needs no exact check.
            if candidate <= position or union.find(first) == union.find(other):
                continue
            if jaccard(shingle_sets[position], shingle_sets[candidate]) >= THRESHOLD:
                union.union(first, other)

    groups: dict[int, list[int]] = defaultdict(list)
    for position in range(len(authored)):
        groups[union.find(position)].append(position)
    clusters = []
    for members in groups.values():
        if len(members) < 2:
            continue
        authors = sorted({authored[m].author for m in members})
        clusters.append({
            "environments": sorted(authored[m].uuid for m in members),
            "authors": authors,
            "titles": sorted({authored[m].title for m in members}),
        })
    clusters.sort(key=lambda c: (-len(c["authors"]), -len(c["environments"]),
                                 c["environments"][0]))

    signature_of_source = np.array([m.hashvalues for m in minhashes]) if minhashes else None
    p_value = similarity = None
    if signature_of_source is not None:
        source_position = {source: i for i, source in enumerate(sources)}
        signatures = signature_of_source[[source_position[env.source] for env in authored]]
        author_index = {name: i for i, name in enumerate(sorted({e.author for e in authored}))}
        author_ids = np.array([author_index[env.author] for env in authored])
        similarity, p_value = _permutation_p_value(
            signatures, author_ids, np.random.default_rng(seed)
        )
    return {
        "clusters": clusters,
        "p_value": p_value,
        "cross_author_clusters": sum(1 for c in clusters if len(c["authors"]) > 1),
        "cross_author_similarity": similarity,
        "environments": len(authored),
    }
