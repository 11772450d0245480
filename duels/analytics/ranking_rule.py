"""When a leaderboard ranks a player: a plain constant (no numpy), shared by the ratings
computation and every page that lists ranked players and, apart, the unranked ones."""

from __future__ import annotations

# After two or three duels a rating's interval spans a thousand points and every player
# "shares first place". Below this many duels a player is listed apart, unranked.
MIN_DUELS_TO_RANK = 4
