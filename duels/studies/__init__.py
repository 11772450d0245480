"""Studies: field runs as the original Environment Duels harness ran the benchmark.

creation.py checks a study's inputs, plans and creates it; scope.py is the study as a run of the
engine's work loop; authoring.py writes and validates each slot's versions; hardening.py builds
the field's digest a revision answers; field.py creates and closes each version's field play;
results.py gathers the field's rows for figures.py (pure) and caches what it computes; selectors.py
reads for the pages; owner.py is the study as the owner of its episodes.
"""
