"""How a second run's clocks are moved: the replay after play and validation's fresh sandbox.

The offset, 3 days, 7 hours, 13 minutes and 17 seconds, is odd in every unit, so a time an
environment shows to the day, the hour, the minute or the second differs from the first run's,
however soon the second follows. The stride, 1 hour, 1 minute and 1 second, is how far the
replay's clocks move on at every step of its fresh pass: the time between two of its steps is
then longer than any model takes over a reply, and its reused pass runs after the play with no
stride, at the sandbox's own pace, shorter than any model takes, so an answer that depends on
elapsed time differs from the play's in one of the two, whatever the play's pace was.
"""

from __future__ import annotations

REPLAY_CLOCK_OFFSET = ((3 * 24 + 7) * 60 + 13) * 60 + 17
REPLAY_CLOCK_SHOWN = "+3 d 7 h 13 min 17 s"
REPLAY_CLOCK_STRIDE = (1 * 60 + 1) * 60 + 1
REPLAY_STRIDE_SHOWN = "1 h 1 min 1 s"
