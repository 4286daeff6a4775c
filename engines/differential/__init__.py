"""Differential search (``groupcheck diff``): two targets on the same ``assign`` requests
(`search`), on the same chains of rebalances (`stories`), and what a run reports, saves and
replays (`reports`)."""
