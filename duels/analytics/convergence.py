"""Design convergence: near-duplicate environment sources across authors.

Sources are tokenised, normalised (identifiers renamed in order of first use, literals replaced
by their kind, comments dropped) and cut into shingles of `SHINGLE` tokens. MinHash signatures
(datasketch), banded for LSH, propose candidate pairs, which are kept when their exact shingle
Jaccard reaches `THRESHOLD`; kept pairs are joined into clusters (single linkage).
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from datasketch import MinHash

from duels.analytics.data import EnvironmentRecord

SHINGLE = 5
THRESHOLD = 0.7
NUM_PERM = 64
BANDS, BAND_ROWS = 16, 4  # candidate at Jaccard 0.7 with probability ≈ 0.99
PAIR_SAMPLE = 20_000
PERMUTATIONS = 200
_KEEP_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"self"}


_TOKEN = re.compile(
    r"""(?P<comment>\#[^\n]*)"""
    r"""|(?P<string>[rRbBuUfF]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))"""
    r"""|(?P<number>\b\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?j?\b)"""
    r"""|(?P<name>[A-Za-z_]\w*)"""
    r"""|(?P<newline>\n)"""
    r"""|(?P<op>[^\w\s])"""
)


def normalised_tokens(source: str) -> list[str]:
    """Code tokens with identifiers renamed by first use and literals reduced to their kind.

    A regular-expression lexer for Python (comments, strings with prefixes and triple quotes,
    numbers, names, operators, line ends): about ten times faster than `tokenize` and, unlike
    it, never fails on broken source.
    """
    names: dict[str, str] = {}
    tokens: list[str] = []
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup
        if kind == "name":
            text = match.group()
            tokens.append(text if text in _KEEP_NAMES else names.setdefault(text, f"v{len(names)}"))
        elif kind == "string":
            tokens.append("STR")
        elif kind == "number":
            tokens.append("NUM")
        elif kind == "op":
            tokens.append(match.group())
        elif kind == "newline" and tokens and tokens[-1] != ";":
            tokens.append(";")
    return tokens


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
    """Near-duplicate clusters and the cross-author test over designs (`design_records`).

    A design written by several authors enters the test once per author (the same code from
    two authors is the strongest sign of convergence) and is a cluster by itself; `environments`
    counts designs.
    """
    authored = [
        env._replace(author=author)
        for env in environments for author in (env.authors or (env.author,)) if author is not None
    ]
    # Identical sources share one signature; tokenising each distinct source once.
    by_source: dict[str, list[int]] = defaultdict(list)
    for position, env in enumerate(authored):
        by_source[env.source].append(position)
    sources = list(by_source)
    shingle_sets = [shingles(source) for source in sources]
    minhashes = MinHash.bulk(shingle_sets, num_perm=NUM_PERM, seed=1)
    signature_of_source = np.array([m.hashvalues for m in minhashes], dtype=np.uint64)

    union = _UnionFind(len(authored))
    for members in by_source.values():
        for other in members[1:]:
            union.union(members[0], other)
    # LSH banding: sources sharing one band of their signature are candidates. Each bucket is
    # checked against its first member only, so the work stays linear in the number of sources.
    for band in range(BANDS):
        buckets: dict[bytes, int] = {}
        rows = signature_of_source[:, band * BAND_ROWS:(band + 1) * BAND_ROWS]
        for position, key in enumerate(map(bytes, rows)):
            first = buckets.setdefault(key, position)
            if first == position:
                continue
            left, right = by_source[sources[first]][0], by_source[sources[position]][0]
            if union.find(left) != union.find(right) and jaccard(
                shingle_sets[first], shingle_sets[position]
            ) >= THRESHOLD:
                union.union(left, right)

    groups: dict[int, list[int]] = defaultdict(list)
    for position in range(len(authored)):
        groups[union.find(position)].append(position)
    clusters = []
    for members in groups.values():
        if len(members) < 2:
            continue
        authors = sorted({authored[m].author for m in members})
        clusters.append({
            "environments": sorted({authored[m].uuid for m in members}),
            "authors": authors,
            "titles": sorted({authored[m].title for m in members}),
        })
    clusters.sort(key=lambda c: (-len(c["authors"]), -len(c["environments"]),
                                 c["environments"][0]))

    p_value = similarity = None
    if minhashes:
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
        "environments": len({env.uuid for env in authored}),
        "authors": len({env.author for env in authored}),
    }
