"""Modules copied verbatim into exported RL-trainer packages (never imported by EnvDuels).

`designs.py` loads the package's designs and opens their sandboxes; `gymnasium_env.py` and
`verifiers_env.py` are the two trainer front ends. They import the installed EnvDuels for the
sandbox runner and the solver prompt, so environment code never runs in the trainer's process.
"""
