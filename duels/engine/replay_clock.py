"""How far a second run's clocks are moved: the replay after play and validation's fresh sandbox.

3 days, 7 hours, 13 minutes and 17 seconds: odd in every unit, so a time an environment shows to
the day, the hour, the minute or the second differs from the first run's, however soon the
second follows.
"""

from __future__ import annotations

REPLAY_CLOCK_OFFSET = ((3 * 24 + 7) * 60 + 13) * 60 + 17
REPLAY_CLOCK_SHOWN = "+3 d 7 h 13 min 17 s"
